package graph

// Servable builds rgd and decides whether its graph may be served: it
// builds, and no expression's estimated worst-case CEL cost exceeds the
// Builder's cost limit for every instance (such a graph could only FAIL).
// `kroscope validate` and the engine both ask it, so a graph validate
// rejects is never served. warnings name the expressions that exceed the
// limit only for large inputs: the graph is served, and an instance whose
// inputs are that large FAILs at run time.
func (b *Builder) Servable(rgd *ResourceGraphDefinition) (g *Graph, warnings Errors, err error) {
	g, err = b.Build(rgd)
	if err != nil {
		return nil, nil, err
	}
	rejected, large := EstimateCosts(g, b.limits)
	if len(rejected) > 0 {
		return nil, large, rejected
	}
	return g, large, nil
}
