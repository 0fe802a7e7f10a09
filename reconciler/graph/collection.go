package graph

import (
	"errors"
	"fmt"
	"maps"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/traits"
	"github.com/kroscope/kroscope/reconciler/graph/cellib"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Limits of a collection, kro's defaults.
const (
	// MaxCollectionDimensions is how many forEach entries one resource may
	// have.
	MaxCollectionDimensions = 10
	// MaxCollectionSize is how many items one collection may render.
	MaxCollectionSize = 1000
)

// dimensions checks the forEach entries of resource i (their expressions are
// compiled later, with the others) and gives r its Dimensions, so it is
// known to be a collection before the CEL environment is built.
func (bd *build) dimensions(label string, i int, r *Resource) bool {
	fe := bd.rgd.Spec.Resources[i].ForEach
	if len(fe) == 0 {
		return true
	}
	path := fmt.Sprintf("spec.resources[%d].forEach", i)
	if r.External {
		bd.errorf(label, path, "remove forEach: an externalRef names one object that kroscope reads", "forEach cannot be combined with externalRef")
		return false
	}
	if len(fe) > MaxCollectionDimensions {
		bd.errorf(label, path, "combine lists in one expression instead", "forEach has %d dimensions, at most %d are allowed", len(fe), MaxCollectionDimensions)
		return false
	}
	ok := true
	seen := map[string]bool{}
	for j, d := range fe {
		p := formatPath(fmt.Sprintf("%s[%d]", path, j), d.Name)
		switch {
		case !idPattern.MatchString(d.Name):
			bd.errorf(label, p, "use lowerCamelCase letters and digits, e.g. "+lowerCamel(d.Name), "iterator %q is not lowerCamelCase", d.Name)
			ok = false
		case reservedIDs[d.Name]:
			bd.errorf(label, p, "choose another name, e.g. "+d.Name+"Item", "iterator %q is a reserved word", d.Name)
			ok = false
		case seen[d.Name]:
			bd.errorf(label, p, "give every dimension its own iterator name", "iterator %q is declared twice", d.Name)
			ok = false
		}
		seen[d.Name] = true
		r.ForEach = append(r.ForEach, Dimension{Name: d.Name})
	}
	return ok
}

// iteratorCollisions reports iterators named like a resource: inside the
// collection the name would hide that resource.
func (bd *build) iteratorCollisions(order []*Resource) {
	ids := map[string]bool{}
	for _, rs := range bd.rgd.Spec.Resources {
		ids[rs.ID] = true
	}
	for _, r := range order {
		for j, d := range r.ForEach {
			if ids[d.Name] {
				bd.errorf(r.ID, formatPath(fmt.Sprintf("spec.resources[%d].forEach[%d]", r.Index, j), d.Name),
					"rename the iterator, e.g. "+d.Name+"Item", "iterator %q has the name of a resource id", d.Name)
			}
		}
	}
}

// enterCollection returns env extended with r's iterators and `each` (all
// dyn), and switches the run-time environment and the compile cache to
// match; leave restores them. env is nil when the extension fails
// (recorded).
func (bd *build) enterCollection(env *cel.Env, r *Resource) (scoped *cel.Env, leave func()) {
	opts := []cel.EnvOption{cel.Variable(EachIdentifier, cel.DynType)}
	for _, d := range r.ForEach {
		opts = append(opts, cel.Variable(d.Name, cel.DynType))
	}
	scoped, err := env.Extend(opts...)
	if err != nil {
		bd.errorf(r.ID, fmt.Sprintf("spec.resources[%d].forEach", r.Index), "", "CEL environment: %v", err)
		return nil, func() {}
	}
	prevRun, prevScope := bd.runEnv, bd.cacheScope
	if bd.runEnv != nil {
		if bd.runEnv, err = bd.runEnv.Extend(opts...); err != nil {
			bd.errorf(r.ID, fmt.Sprintf("spec.resources[%d].forEach", r.Index), "", "CEL environment: %v", err)
			bd.runEnv = prevRun
			return nil, func() {}
		}
	}
	bd.cacheScope = r.ID + "\x00"
	return scoped, func() { bd.runEnv, bd.cacheScope = prevRun, prevScope }
}

// iteratorNames are r's iterator names and `each`: the names only some of
// a collection's expressions may read.
func iteratorNames(r *Resource) map[string]bool {
	out := map[string]bool{EachIdentifier: true}
	for _, d := range r.ForEach {
		out[d.Name] = true
	}
	return out
}

// forbidRefs reports every name of forbidden that e reads.
func (bd *build) forbidRefs(r *Resource, e *Expression, path string, forbidden map[string]bool, fix, what string) {
	for _, ref := range e.References {
		if forbidden[ref] {
			bd.errorf(r.ID, path, fix, "${%s} reads %s: %s", e.Source, ref, what)
		}
	}
}

// compileDimensions compiles the forEach expressions of a collection: each
// a standalone list expression over schema and resource ids (which become
// dependencies), never over iterators.
func (bd *build) compileDimensions(env *cel.Env, r *Resource, deps map[string]bool) {
	iters := iteratorNames(r)
	for j := range r.ForEach {
		d := &r.ForEach[j]
		src := bd.rgd.Spec.Resources[r.Index].ForEach[j].Expression
		path := formatPath(fmt.Sprintf("spec.resources[%d].forEach[%d]", r.Index, j), d.Name)
		parts, err := Scan(src)
		if err != nil {
			bd.errorf(r.ID, path, "", "%v", err)
			continue
		}
		if !isStandalone(parts) {
			bd.errorf(r.ID, path, "write exactly one ${...} that returns a list, e.g. ${schema.spec.names}",
				"%q is not a standalone expression", src)
			continue
		}
		c, err := bd.compile(env, parts[0].Text)
		if err != nil {
			bd.errorf(r.ID, path, "", "${%s}: %v", parts[0].Text, err)
			continue
		}
		if !isListish(c.out) {
			bd.errorf(r.ID, path, "make it return a list, e.g. ${schema.spec.names} or ${[1, 2, 3]}",
				"${%s} returns %s, not a list", c.expr.Source, c.out.String())
			continue
		}
		if !bd.checkOmit(r.ID, path, c.expr, false) {
			continue
		}
		bd.forbidRefs(r, c.expr, path, iters, "a dimension may read schema and resource ids only",
			"dimensions are evaluated before any iterator is bound")
		bd.collectDeps(r, c.expr, path, "a collection cannot iterate over itself; read schema or other resources", deps)
		d.Expression = c.expr
	}
	bd.checkConstantSize(r)
}

// maxConstantEvals bounds the constant dimensions one Build evaluates:
// each evaluation may take up to the CEL time limit, and a graph's build
// must stay short whatever it holds.
const maxConstantEvals = 20

// checkConstantSize refuses a collection whose constant dimensions (reading
// no resource and no schema) already give more than MaxCollectionSize
// items: known before any instance exists, every instance would FAIL it (or
// render nothing, when another dimension is empty). A dimension that fails
// to evaluate here, or past maxConstantEvals, is left to the run time,
// which reports it.
func (bd *build) checkConstantSize(r *Resource) {
	sizes := make([]int64, 0, len(r.ForEach))
	for _, d := range r.ForEach {
		if d.Expression == nil || len(d.Expression.References) > 0 || bd.constantEvals >= maxConstantEvals {
			continue
		}
		bd.constantEvals++
		val, err := d.Expression.evalVal(Vars{})
		if err != nil {
			continue
		}
		if l, ok := val.(traits.Lister); ok {
			n, _ := l.Size().(types.Int)
			sizes = append(sizes, int64(n))
		}
	}
	if total, over := constantProduct(sizes); over {
		bd.errorf(r.ID, fmt.Sprintf("spec.resources[%d].forEach", r.Index), "shorten the constant lists, or read the lists from the instance's spec",
			"the constant dimensions give %s items: a collection has at most %d items", total, MaxCollectionSize)
	}
}

// constantProduct is the product of sizes as text ("1000 x 1000 x 1000")
// and whether it exceeds MaxCollectionSize; an empty dimension makes it 0.
func constantProduct(sizes []int64) (string, bool) {
	text := make([]string, len(sizes))
	total := int64(1)
	for i, n := range sizes {
		text[i] = fmt.Sprint(n)
		if n == 0 {
			return "0", false
		}
		if total <= MaxCollectionSize {
			total *= n // stops growing past the limit: no overflow
		}
	}
	return strings.Join(text, " x "), len(sizes) > 0 && total > MaxCollectionSize
}

// isListish reports whether t can be iterated: a list, or dyn (checked at
// run time).
func isListish(t *cel.Type) bool {
	if t == nil {
		return true
	}
	switch t.Kind() {
	case types.ListKind, types.DynKind, types.AnyKind:
		return true
	}
	return false
}

// checkUniqueIdentity requires every iterator in metadata.name (or, for a
// namespaced kind, metadata.namespace): otherwise two items could render the
// same object.
func (bd *build) checkUniqueIdentity(r *Resource) {
	used := map[string]bool{}
	for _, f := range r.Fields {
		if f.Path != "metadata.name" && !(r.Namespaced && f.Path == "metadata.namespace") {
			continue
		}
		for _, e := range f.Expressions {
			for _, ref := range e.References {
				used[ref] = true
			}
		}
	}
	where := "metadata.name"
	if r.Namespaced {
		where = "metadata.name or metadata.namespace"
	}
	for _, d := range r.ForEach {
		if !used[d.Name] {
			bd.errorf(r.ID, fmt.Sprintf("spec.resources[%d].template.metadata.name", r.Index),
				fmt.Sprintf("use ${%s} in %s, e.g. name: ${schema.metadata.name}-${%s}", d.Name, where, d.Name),
				"all forEach dimensions must be used to produce a unique resource identity: iterator %q is not used in %s", d.Name, where)
		}
	}
}

// RenderCollection returns every item of a collection, in cartesian order
// (the last dimension varies fastest); a resource that is not a collection
// gives its one object. An empty dimension gives no items. As with Render,
// errors are *EvalError (wrapped with the item for template failures) and
// data-pending ones wrap ErrDataPending.
func (r *Resource) RenderCollection(vars Vars) ([]*unstructured.Unstructured, error) {
	if !r.IsCollection() {
		obj, err := r.Render(vars)
		if err != nil {
			return nil, err
		}
		return []*unstructured.Unstructured{obj}, nil
	}
	values, total, err := r.dimensionValues(vars)
	if err != nil || total == 0 {
		return nil, err
	}
	out := make([]*unstructured.Unstructured, 0, total)
	seen := make(map[string]int, total)
	idx := make([]int, len(values))
	for n := range total {
		item := maps.Clone(vars)
		for d, dim := range r.ForEach {
			item[dim.Name] = values[d][idx[d]]
		}
		obj, err := r.Render(item)
		if err != nil {
			return nil, fmt.Errorf("item %d (%s): %w", n, describeItem(r, values, idx), err)
		}
		key := obj.GetNamespace() + "/" + obj.GetName()
		if prev, dup := seen[key]; dup {
			return nil, fmt.Errorf("resource %s: items %d and %d both render %s %s from metadata.name %q: make it unique per item (use every iterator in it)",
				r.ID, prev, n, obj.GetKind(), strings.TrimPrefix(key, "/"), r.nameSource())
		}
		seen[key] = n
		out = append(out, obj)
		// Odometer step: the last dimension varies fastest.
		for d := len(idx) - 1; d >= 0; d-- {
			idx[d]++
			if idx[d] < len(values[d]) {
				break
			}
			idx[d] = 0
		}
	}
	return out, nil
}

// dimensionValues evaluates every dimension and returns the lists and the
// number of items (0 when one is empty).
func (r *Resource) dimensionValues(vars Vars) ([][]any, int, error) {
	values := make([][]any, len(r.ForEach))
	empty := false
	for i, dim := range r.ForEach {
		path := fmt.Sprintf("forEach[%d].%s", i, dim.Name)
		if dim.Expression == nil {
			return nil, 0, fmt.Errorf("resource %s: %s: %w", r.ID, path, errors.New("dimension was not compiled by a graph Builder"))
		}
		// The size is checked on CEL's value, before any Go list is built
		// from it: an instance's spec can ask for billions of items.
		val, err := dim.Expression.evalVal(vars)
		if err != nil {
			return nil, 0, &EvalError{Resource: r.ID, Path: path, Expression: dim.Expression.Source, Err: err}
		}
		if l, ok := val.(traits.Lister); ok {
			if n, _ := l.Size().(types.Int); int64(n) > MaxCollectionSize {
				return nil, 0, &EvalError{Resource: r.ID, Path: path, Expression: dim.Expression.Source,
					Err: fmt.Errorf("the list has %d elements: a collection has at most %d items", int64(n), MaxCollectionSize)}
			}
		}
		v, err := cellib.Native(val, cellib.ForObject)
		if err != nil {
			return nil, 0, &EvalError{Resource: r.ID, Path: path, Expression: dim.Expression.Source, Err: err}
		}
		list, ok := v.([]any)
		if !ok {
			return nil, 0, &EvalError{Resource: r.ID, Path: path, Expression: dim.Expression.Source,
				Err: fmt.Errorf("returned %s, not a list: forEach iterates the elements of a list", typeName(v))}
		}
		values[i] = list
		empty = empty || len(list) == 0
	}
	if empty {
		return values, 0, nil
	}
	total := 1
	for i, list := range values {
		total *= len(list)
		if total > MaxCollectionSize {
			return nil, 0, &EvalError{Resource: r.ID, Path: fmt.Sprintf("forEach[%d].%s", i, r.ForEach[i].Name), Expression: r.ForEach[i].Expression.Source,
				Err: fmt.Errorf("the collection would have more than %d items (the product of its dimensions' sizes)", MaxCollectionSize)}
		}
	}
	return values, total, nil
}

// describeItem names an item by its iterator values, e.g. "name=a, zone=b".
func describeItem(r *Resource, values [][]any, idx []int) string {
	parts := make([]string, len(idx))
	for d, i := range idx {
		if r.ForEach[d].Expression.Sensitive() {
			// The values come from a Secret: the position only.
			parts[d] = fmt.Sprintf("%s=[%d]", r.ForEach[d].Name, i)
			continue
		}
		parts[d] = fmt.Sprintf("%s=%v", r.ForEach[d].Name, values[d][i])
	}
	return strings.Join(parts, ", ")
}

// nameSource is the metadata.name template as written.
func (r *Resource) nameSource() string {
	for _, f := range r.Fields {
		if f.Path == "metadata.name" {
			return f.Raw
		}
	}
	return ""
}
