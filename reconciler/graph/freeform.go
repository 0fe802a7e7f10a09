package graph

import (
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	celcommon "k8s.io/apiserver/pkg/cel/common"
)

// maxSchemaScanDepth bounds the search for free-form fields in a schema: CRD
// schemas are far shallower, and a deeper (or self-referencing) schema must
// not hang the reader.
const maxSchemaScanDepth = 64

// readVal is an observed object as expressions read it. The API server's
// UnstructuredToVal reads a free-form field (an object listing no
// properties, e.g. x-kubernetes-preserve-unknown-fields) as an empty object,
// so `${thing.spec.config.foo}` would wait forever on data the object holds.
// kro reads such fields as plain values; so does kroscope: schemas with no
// free-form field go to UnstructuredToVal unchanged, free-form fields are
// read natively, and the objects and lists between them are converted here.
func readVal(v any, s celcommon.Schema) ref.Val {
	if v == nil || s == nil || !hasFreeForm(s) {
		return celcommon.UnstructuredToVal(v, s)
	}
	if readsNative(s) {
		return types.DefaultTypeAdapter.NativeToValue(v)
	}
	switch s.Type() {
	case "object":
		if m, ok := v.(map[string]any); ok {
			return objectVal(m, s)
		}
	case "array":
		if l, ok := v.([]any); ok && s.Items() != nil {
			vals := make([]ref.Val, len(l))
			for i, e := range l {
				vals[i] = readVal(e, s.Items())
			}
			return types.NewRefValList(types.DefaultTypeAdapter, vals)
		}
	}
	return celcommon.UnstructuredToVal(v, s)
}

// objectVal is an object holding a free-form field somewhere below: the
// keys UnstructuredToVal would show, each read by readVal.
func objectVal(m map[string]any, s celcommon.Schema) ref.Val {
	if s.IsXEmbeddedResource() {
		s = s.WithTypeAndObjectMeta()
	}
	props := s.Properties()
	var add celcommon.Schema
	if a := s.AdditionalProperties(); props == nil && a != nil {
		add = a.Schema()
	}
	out := make(map[ref.Val]ref.Val, len(m))
	for k, e := range m {
		ps, ok := props[k]
		if !ok && add != nil {
			ps, ok = add, true
		}
		if ok {
			out[types.String(k)] = readVal(e, ps)
		}
	}
	return types.NewRefValMap(types.DefaultTypeAdapter, out)
}

// readsNative reports whether values of s are read as plain values, as kro
// reads them: an object listing neither properties nor a schema for
// additional ones, or an untyped field that keeps unknown fields or is a
// quantity (oneOf string or number, as the cluster's OpenAPI types it).
func readsNative(s celcommon.Schema) bool {
	if s.IsXIntOrString() {
		return false
	}
	switch s.Type() {
	case "object":
		if s.IsXEmbeddedResource() || s.Properties() != nil {
			return false
		}
		a := s.AdditionalProperties()
		return a == nil || a.Schema() == nil
	case "":
		return s.IsXPreserveUnknownFields() || isStringOrNumber(s.OneOf())
	}
	return false
}

func isStringOrNumber(oneOf []celcommon.Schema) bool {
	if len(oneOf) != 2 {
		return false
	}
	a, b := oneOf[0].Type(), oneOf[1].Type()
	return (a == "string" && b == "number") || (a == "number" && b == "string")
}

// hasFreeForm reports whether s or a schema below it is read natively;
// remembered per schema, since it is asked on every evaluation.
func hasFreeForm(s celcommon.Schema) bool {
	if m, ok := s.(*memoSchema); ok {
		m.freeOnce.Do(func() { m.free = scanFreeForm(m, 0) })
		return m.free
	}
	return scanFreeForm(s, 0)
}

// scanFreeForm answers false where the OpenAPI adaptor panics (an
// additionalProperties given as a bool has a Schema() wrapping nil):
// UnstructuredToVal then reads the object as it did before.
func scanFreeForm(s celcommon.Schema, depth int) (found bool) {
	if depth == 0 {
		defer func() {
			if recover() != nil {
				found = false
			}
		}()
	}
	if s == nil || depth > maxSchemaScanDepth {
		return false
	}
	if readsNative(s) {
		return true
	}
	for _, p := range s.Properties() {
		if scanFreeForm(p, depth+1) {
			return true
		}
	}
	if a := s.AdditionalProperties(); a != nil && scanFreeForm(a.Schema(), depth+1) {
		return true
	}
	return scanFreeForm(s.Items(), depth+1)
}
