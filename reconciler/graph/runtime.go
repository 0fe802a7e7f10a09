package graph

import (
	"errors"
	"fmt"
	"strings"

	"github.com/kroscope/kroscope/reconciler/graph/cellib"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
)

// value evaluates a field: a standalone expression keeps its type, a
// template concatenates text and values (strings as-is, other values as Go
// prints them with %v).
func (f *Field) value(vars Vars) (any, *Expression, error) {
	if f.Standalone {
		v, err := f.Expressions[0].Eval(vars)
		return v, f.Expressions[0], err
	}
	parts, err := Scan(f.Raw)
	if err != nil {
		return nil, nil, err
	}
	var b strings.Builder
	n := 0
	for _, p := range parts {
		if !p.Expr {
			b.WriteString(p.Text)
			continue
		}
		e := f.Expressions[n]
		n++
		v, err := e.Eval(vars)
		if err != nil {
			return nil, e, err
		}
		if s, ok := v.(string); ok {
			b.WriteString(s)
		} else if cellib.IsOmit(v) {
			return nil, e, errors.New("omit() must be the whole field value, not part of a string")
		} else {
			fmt.Fprintf(&b, "%v", v)
		}
	}
	return b.String(), nil, nil
}

// evalErr names the field and the expression (the whole field when the
// failure is not one expression's).
func evalErr(resource string, f *Field, e *Expression, err error) error {
	src := f.Raw
	if e != nil {
		src = e.Source
	}
	return &EvalError{Resource: resource, Path: f.Path, Expression: src, Err: err}
}

// Render returns the desired object: a deep copy of the template with every
// expression substituted. Errors are *EvalError; data-pending ones wrap
// ErrDataPending.
func (r *Resource) Render(vars Vars) (*unstructured.Unstructured, error) {
	obj := runtime.DeepCopyJSON(r.Template)
	for _, f := range r.Fields {
		v, e, err := f.value(vars)
		if err != nil {
			return nil, evalErr(r.ID, f, e, err)
		}
		if err := setPath(obj, f.Segments, v); err != nil {
			return nil, &EvalError{Resource: r.ID, Path: f.Path, Expression: f.Raw, Err: err}
		}
	}
	if r.usesOmit {
		dropOmitted(obj)
	}
	return &unstructured.Unstructured{Object: obj}, nil
}

// setPath replaces the value at segs (which exists in the template).
func setPath(obj map[string]any, segs []any, v any) error {
	var cur any = obj
	for i, s := range segs {
		last := i == len(segs)-1
		switch k := s.(type) {
		case string:
			m, ok := cur.(map[string]any)
			if !ok {
				return errors.New("template shape changed while rendering")
			}
			if last {
				m[k] = v
				return nil
			}
			cur = m[k]
		case int:
			l, ok := cur.([]any)
			if !ok || k >= len(l) {
				return errors.New("template shape changed while rendering")
			}
			if last {
				l[k] = v
				return nil
			}
			cur = l[k]
		}
	}
	return nil
}

// IsIncluded evaluates includeWhen (all must be true; none means true).
func (r *Resource) IsIncluded(vars Vars) (bool, error) {
	for i, e := range r.IncludeWhen {
		v, err := e.Eval(vars)
		if err != nil {
			return false, &EvalError{Resource: r.ID, Path: fmt.Sprintf("includeWhen[%d]", i), Expression: e.Source, Err: err}
		}
		b, ok := v.(bool)
		if !ok {
			if v == nil {
				// An empty optional counts as false.
				return false, nil
			}
			return false, &EvalError{Resource: r.ID, Path: fmt.Sprintf("includeWhen[%d]", i), Expression: e.Source,
				Err: fmt.Errorf("returned %s, not a boolean", typeName(v))}
		}
		if !b {
			return false, nil
		}
	}
	return true, nil
}

// IsReady evaluates readyWhen against the observed object (all must be true;
// none means ready once observed). For a collection, observed is one item,
// bound to each. When not ready, reason says which
// expression is false (or pending) and its value.
func (r *Resource) IsReady(observed map[string]any) (ready bool, reason string, err error) {
	if observed == nil {
		return false, r.ID + " is not observed yet", nil
	}
	// A collection's readyWhen judges one item at a time, as each.
	name := r.ID
	if r.IsList() {
		name = EachIdentifier
	}
	vars := Vars{name: observed}
	for i, e := range r.ReadyWhen {
		v, err := e.Eval(vars)
		if err != nil {
			if IsDataPending(err) {
				return false, fmt.Sprintf("readyWhen %s: data pending (%s)", ExpressionRef(e.Source), pendingDetail(err)), nil
			}
			return false, "", &EvalError{Resource: r.ID, Path: fmt.Sprintf("readyWhen[%d]", i), Expression: e.Source, Err: err}
		}
		b, ok := v.(bool)
		if !ok && v != nil {
			return false, "", &EvalError{Resource: r.ID, Path: fmt.Sprintf("readyWhen[%d]", i), Expression: e.Source,
				Err: fmt.Errorf("returned %s, not a boolean", typeName(v))}
		}
		if !b {
			return false, fmt.Sprintf("readyWhen %s is false", ExpressionRef(e.Source)), nil
		}
	}
	return true, "", nil
}

// RenderStatus evaluates the status projections. Fields whose inputs are
// pending are omitted, and so is a list written element by element while
// any element is pending: kro writes a null in its place, which the API
// server rejects for a typed list, failing the whole status write. Other
// failures are returned (joined *EvalErrors) together with the fields that
// did resolve.
func (g *Graph) RenderStatus(vars Vars) (map[string]any, error) {
	out := map[string]any{}
	var errs []error
	var pendingLists [][]any
	for _, f := range g.Status {
		v, e, err := f.value(vars)
		if err != nil {
			if IsDataPending(err) {
				if l := listRoot(f.Segments); l != nil {
					pendingLists = append(pendingLists, l)
				}
				continue
			}
			errs = append(errs, evalErr("status", f, e, err))
			continue
		}
		setNested(out, f.Segments, v)
	}
	for _, l := range pendingLists {
		deleteNested(out, l)
	}
	return out, errors.Join(errs...)
}

// listRoot is the path of the outermost list segs passes through (the
// map keys before its first index), or nil.
func listRoot(segs []any) []any {
	for i, s := range segs {
		if _, isIndex := s.(int); isIndex {
			return segs[:i]
		}
	}
	return nil
}

// deleteNested removes the key at path (map keys only) from out.
func deleteNested(out map[string]any, path []any) {
	cur := out
	for i, s := range path {
		k, _ := s.(string)
		if i == len(path)-1 {
			delete(cur, k)
			return
		}
		next, ok := cur[k].(map[string]any)
		if !ok {
			return
		}
		cur = next
	}
}

// setNested sets out[a][b][0]... = v, creating maps and lists on the way.
// A list grows to hold the index (RenderStatus drops a list with a gap).
func setNested(out map[string]any, segs []any, v any) {
	setIn(out, segs, v)
}

// setIn sets segs under container (a map or list) and returns it, grown
// when it is a list.
func setIn(container any, segs []any, v any) any {
	child := func(cur any, next any) any {
		if cur != nil {
			return cur
		}
		if _, isIndex := next.(int); isIndex {
			return []any{}
		}
		return map[string]any{}
	}
	switch k := segs[0].(type) {
	case string:
		m, _ := container.(map[string]any)
		if len(segs) == 1 {
			m[k] = v
		} else {
			m[k] = setIn(child(m[k], segs[1]), segs[1:], v)
		}
		return m
	case int:
		l, _ := container.([]any)
		for len(l) <= k {
			l = append(l, nil)
		}
		if len(segs) == 1 {
			l[k] = v
		} else {
			l[k] = setIn(child(l[k], segs[1]), segs[1:], v)
		}
		return l
	}
	return container
}

// pendingDetail is what was missing, without the "data pending" prefix.
func pendingDetail(err error) string {
	var pe *pendingError
	if errors.As(err, &pe) {
		return pe.msg
	}
	return err.Error()
}
