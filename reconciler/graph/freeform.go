package graph

import (
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
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
// read natively, and the objects (lazily) and lists between them are read
// here.
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

// lazyObject is an object holding a free-form field somewhere below. It is
// UnstructuredToVal's map (same keys, size, type, iteration and native
// value) except that each field is read by readVal when asked, so reading
// one field of a large object converts nothing else.
type lazyObject struct {
	traits.Mapper
	m      map[string]any
	schema celcommon.Schema
}

// objectVal reads m through s (an object with a free-form field below).
func objectVal(m map[string]any, s celcommon.Schema) ref.Val {
	if s.IsXEmbeddedResource() {
		s = s.WithTypeAndObjectMeta()
	}
	mapper, ok := celcommon.UnstructuredToVal(m, s).(traits.Mapper)
	if !ok {
		return celcommon.UnstructuredToVal(m, s)
	}
	return &lazyObject{Mapper: mapper, m: m, schema: s}
}

// fieldSchema is the schema of key, as UnstructuredToVal chooses it.
func (o *lazyObject) fieldSchema(key string) (celcommon.Schema, bool) {
	if props := o.schema.Properties(); props != nil || o.schema.IsXEmbeddedResource() {
		ps, ok := props[key]
		return ps, ok
	}
	if a := o.schema.AdditionalProperties(); a != nil && a.Schema() != nil {
		return a.Schema(), true
	}
	return nil, false
}

func (o *lazyObject) Find(key ref.Val) (ref.Val, bool) {
	k, ok := key.(types.String)
	if !ok {
		return nil, false
	}
	v, present := o.m[string(k)]
	ps, typed := o.fieldSchema(string(k))
	if !present || !typed {
		return nil, false
	}
	return readVal(v, ps), true
}

func (o *lazyObject) Get(key ref.Val) ref.Val {
	if v, found := o.Find(key); found {
		return v
	}
	return types.ValOrErr(key, "no such key: %v", key)
}

// Equal compares field by field through Get: the embedded map's Equal would
// compare free-form fields as empty.
func (o *lazyObject) Equal(other ref.Val) ref.Val {
	om, ok := other.(traits.Mapper)
	if !ok {
		return types.False
	}
	if o.Size().Equal(om.Size()) != types.True {
		return types.False
	}
	for it := o.Iterator(); it.HasNext() == types.True; {
		k := it.Next()
		ov, found := om.Find(k)
		if !found {
			return types.False
		}
		if eq := o.Get(k).Equal(ov); eq != types.True {
			return eq
		}
	}
	return types.True
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
