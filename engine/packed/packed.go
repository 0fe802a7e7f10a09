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
	"k8s.io/apimachinery/pkg/runtime/serializer/cbor/direct"
)

// Object is one encoded object. The zero Object is "no object". An Object
// is immutable: copies share its bytes.
type Object struct{ data []byte }

// Pack encodes obj; a nil obj gives the zero Object.
func Pack(obj map[string]any) (Object, error) {
	if obj == nil {
		return Object{}, nil
	}
	data, err := direct.Marshal(obj)
	if err != nil {
		return Object{}, err
	}
	return Object{data: data}, nil
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
func (a Object) Equal(b Object) bool { return string(a.data) == string(b.data) }
