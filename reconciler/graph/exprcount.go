package graph

// MaxExpressions is how many expressions one graph may hold. Checking an
// expression costs tens of microseconds, so a graph of 110,000 (4 MB, under
// the file-size limit) kept validate and the engine busy for 40 s; kro's
// largest examples hold a few hundred.
const MaxExpressions = 10_000

// tooManyExpressions reports (true) a definition holding more than
// MaxExpressions expressions, counted before any is compiled, so a hostile
// graph is refused in the time it takes to read it.
func (bd *build) tooManyExpressions() bool {
	n := countExpressions(bd.rgd)
	if n <= MaxExpressions {
		return false
	}
	bd.errorf("", "spec", "split the graph in smaller graphs",
		"the graph holds %d expressions: at most %d are allowed", n, MaxExpressions)
	return true
}

// countExpressions counts the ${...} expressions of rgd's templates,
// external references, readyWhen, includeWhen, forEach and status, and its
// validation rules. Text that does not scan counts nothing here: Build
// reports it.
func countExpressions(rgd *ResourceGraphDefinition) int {
	n := len(rgd.Spec.Schema.Validation)
	count := func(s string) {
		if parts, err := Scan(s); err == nil {
			for _, p := range parts {
				if p.Expr {
					n++
				}
			}
		}
	}
	visit := func(_ []any, s string) { count(s) }
	walkStrings(rgd.Spec.Schema.Status, nil, visit)
	for _, r := range rgd.Spec.Resources {
		walkStrings(r.Template, nil, visit)
		if r.ExternalRef != nil {
			count(r.ExternalRef.Name)
			count(r.ExternalRef.Namespace)
			walkStrings(r.ExternalRef.Selector, nil, visit)
		}
		for _, s := range r.ReadyWhen {
			count(s)
		}
		for _, s := range r.IncludeWhen {
			count(s)
		}
		for _, d := range r.ForEach {
			count(d.Expression)
		}
	}
	return n
}
