// Package packed keeps API objects encoded.
//
// kroscope holds an object or two for every child of every instance (what
// it applied, what the API server returned) and shows one at a time. As a
// decoded map tree a small ConfigMap costs several kilobytes: a map per
// level, a boxed interface per value, a string header per key. Encoded it
// is a few hundred bytes, and decoding the one on screen is cheap. The
// encoding is CBOR, apimachinery's (as the API server and the demo cluster
// speak it): it keeps int64 and float64 apart, so a value reads back as it
// was written.
package packed

import (
	"slices"
	"sync"

	"k8s.io/apimachinery/pkg/runtime/serializer/cbor/direct"
)

// Object is one encoded object. The zero Object is "no object". An Object
// is immutable: copies share its bytes.
type Object struct {
	data []byte
	// relative is set for an Object packed against another (PackAgainst):
	// data is a delta, and only UnpackAgainst that other object decodes it.
	relative bool
}

// Pack encodes obj; a nil obj gives the zero Object.
func Pack(obj map[string]any) (Object, error) {
	if obj == nil {
		return Object{}, nil
	}
	data, err := encode(obj)
	if err != nil {
		return Object{}, err
	}
	return Object{data: data}, nil
}

// scratch holds encoding buffers: an object is encoded into one, then
// copied out at its size, so the buffer's growth is paid once.
var scratch = sync.Pool{New: func() any { return new([]byte) }}

// encode returns v's encoding in a slice of its own.
func encode(v any) ([]byte, error) {
	bp := scratch.Get().(*[]byte)
	b, err := appendCBOR((*bp)[:0], v)
	out := slices.Clone(b)
	if cap(b) <= 1<<20 { // one huge object does not pin its buffer
		*bp = b
		scratch.Put(bp)
	}
	return out, err
}

// IsZero reports whether o holds no object.
func (o Object) IsZero() bool { return o.data == nil }

// Len is the encoded size in bytes.
func (o Object) Len() int { return len(o.data) }

// Unpack decodes a fresh copy of the object, the caller's to change; nil
// for the zero Object.
func (o Object) Unpack() (map[string]any, error) {
	if o.data == nil {
		return nil, nil
	}
	m := map[string]any{}
	if err := direct.Unmarshal(o.data, &m); err != nil {
		return nil, err
	}
	return m, nil
}

// Map is Unpack for objects this package encoded itself, which decode
// without error; nil for the zero Object (or bytes that do not decode).
func (o Object) Map() map[string]any {
	m, err := o.Unpack()
	if err != nil {
		return nil
	}
	return m
}

// Equal reports whether a and b hold the same encoding.
func (a Object) Equal(b Object) bool {
	return a.relative == b.relative && string(a.data) == string(b.data)
}

// Relative reports whether o was packed against another object.
func (o Object) Relative() bool { return o.relative }

// delta is what PackAgainst encodes (as a map of "r" and "s", which
// decodes into it): obj without the subtrees it shares with base, and the
// paths (map keys only) of those subtrees.
type delta struct {
	Rest map[string]any `json:"r"`
	Same [][]string     `json:"s"`
}

// PackAgainst encodes obj relative to base: every map entry whose value
// equals base's at the same path is recorded as that path only. What
// kroscope applied is mostly what the API server returned (the returned
// object has more), so a desired object packed against the observed one
// shrinks to a list of a few paths. UnpackAgainst with the same base
// decodes it. Without a base, or when the delta would not be smaller, obj
// is packed whole.
func PackAgainst(obj, base map[string]any) (Object, error) {
	whole, err := Pack(obj)
	if err != nil || obj == nil || base == nil {
		return whole, err
	}
	d := delta{}
	d.Rest = split(obj, base, nil, &d.Same)
	// Sorted, so that the same object packs to the same bytes (maps are
	// encoded sorted already): Equal then finds an unchanged object.
	slices.SortFunc(d.Same, slices.Compare)
	data, err := encode(map[string]any{"r": d.Rest, "s": d.Same})
	if err != nil || len(data) >= whole.Len() {
		return whole, nil
	}
	return Object{data: data, relative: true}, nil
}

// split returns obj without the entries equal to base's, appending their
// paths (under prefix) to same.
func split(obj, base map[string]any, prefix []string, same *[][]string) map[string]any {
	rest := make(map[string]any, len(obj))
	for k, v := range obj {
		bv, ok := base[k]
		if !ok {
			rest[k] = v
			continue
		}
		path := append(append(make([]string, 0, len(prefix)+1), prefix...), k)
		if jsonEqual(v, bv) {
			*same = append(*same, path)
			continue
		}
		vm, ok1 := v.(map[string]any)
		bm, ok2 := bv.(map[string]any)
		if ok1 && ok2 {
			rest[k] = split(vm, bm, path, same)
			continue
		}
		rest[k] = v
	}
	return rest
}

// UnpackAgainst decodes o, packed against base's object by PackAgainst (or
// packed whole: then base is not needed). nil when o is zero, or relative
// and base cannot be decoded.
func (o Object) UnpackAgainst(base Object) (map[string]any, error) {
	if !o.relative {
		return o.Unpack()
	}
	var d delta
	if err := direct.Unmarshal(o.data, &d); err != nil {
		return nil, err
	}
	b, err := base.Unpack()
	if err != nil {
		return nil, err
	}
	out := d.Rest
	if out == nil {
		out = map[string]any{}
	}
	for _, path := range d.Same {
		v, ok := lookup(b, path)
		if !ok {
			continue // base is not the object o was packed against
		}
		m := out
		for _, k := range path[:len(path)-1] {
			next, ok := m[k].(map[string]any)
			if !ok {
				next = map[string]any{}
				m[k] = next
			}
			m = next
		}
		m[path[len(path)-1]] = v
	}
	return out, nil
}

func lookup(m map[string]any, path []string) (any, bool) {
	var cur any = m
	for _, k := range path {
		mm, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		if cur, ok = mm[k]; !ok {
			return nil, false
		}
	}
	return cur, true
}

// jsonEqual compares JSON values (maps, lists, strings, numbers, booleans,
// null) as decoded objects hold them; a number equals only a number of the
// same Go type, as a decode gives it back. Reflection-based DeepEqual cost
// a twentieth of the engine's CPU here.
func jsonEqual(a, b any) bool {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !jsonEqual(v, w) {
				return false
			}
		}
		return true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !jsonEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case string, int64, float64, bool:
		return a == b // same type and value
	case nil:
		return b == nil
	}
	return false // another type: not a decoded JSON value, so never "the same"
}
