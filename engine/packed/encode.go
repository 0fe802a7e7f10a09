package packed

import (
	"cmp"
	"encoding/binary"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/serializer/cbor/direct"
)

// appendCBOR appends v encoded byte for byte as direct.Marshal encodes it
// (apimachinery's mode: strings as byte strings, map keys sorted bytewise,
// integers in their shortest form), for the values a decoded object holds.
// Maps, lists, strings, integers, booleans and null are written here;
// anything else (floats, whose shortest form is direct's to choose, and
// other Go types) is encoded by direct.Marshal itself, in place: a CBOR
// value's encoding does not depend on what contains it. Written by hand
// because packing was 6 % of kroscope's CPU in the chain benchmark, most
// of it the library's reflection and its sorting of each map's encoded
// entries; TestAppendCBORMatchesDirect and FuzzAppendCBOR hold the bytes
// to the library's.
func appendCBOR(buf []byte, v any) ([]byte, error) {
	switch t := v.(type) {
	case nil:
		return append(buf, 0xf6), nil
	case bool:
		if t {
			return append(buf, 0xf5), nil
		}
		return append(buf, 0xf4), nil
	case string:
		return append(appendHead(buf, majorBytes, uint64(len(t))), t...), nil
	case int64:
		return appendInt(buf, t), nil
	case int:
		return appendInt(buf, int64(t)), nil
	case int32:
		return appendInt(buf, int64(t)), nil
	case map[string]any:
		return appendCBORMap(buf, t)
	case []any:
		buf = appendHead(buf, majorArray, uint64(len(t)))
		var err error
		for _, e := range t {
			if buf, err = appendCBOR(buf, e); err != nil {
				return buf, err
			}
		}
		return buf, nil
	}
	b, err := direct.Marshal(v)
	return append(buf, b...), err
}

// CBOR's major types used here.
const (
	majorUint  = 0
	majorNeg   = 1
	majorBytes = 2
	majorArray = 4
	majorMap   = 5
)

// appendCBORMap writes m's entries in the order of their encoded keys:
// as every key is a byte string with its length in the shortest head,
// that is shorter keys first, then bytewise.
func appendCBORMap(buf []byte, m map[string]any) ([]byte, error) {
	var small [16]string
	keys := small[:0]
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		if c := cmp.Compare(len(a), len(b)); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	buf = appendHead(buf, majorMap, uint64(len(m)))
	var err error
	for _, k := range keys {
		buf = append(appendHead(buf, majorBytes, uint64(len(k))), k...)
		if buf, err = appendCBOR(buf, m[k]); err != nil {
			return buf, err
		}
	}
	return buf, nil
}

func appendInt(buf []byte, i int64) []byte {
	if i >= 0 {
		return appendHead(buf, majorUint, uint64(i))
	}
	return appendHead(buf, majorNeg, uint64(-1-i))
}

// appendHead writes a major type with its argument n in the shortest form.
func appendHead(buf []byte, major byte, n uint64) []byte {
	m := major << 5
	switch {
	case n < 24:
		return append(buf, m|byte(n))
	case n <= 0xff:
		return append(buf, m|24, byte(n))
	case n <= 0xffff:
		return binary.BigEndian.AppendUint16(append(buf, m|25), uint16(n))
	case n <= 0xffffffff:
		return binary.BigEndian.AppendUint32(append(buf, m|26), uint32(n))
	}
	return binary.BigEndian.AppendUint64(append(buf, m|27), n)
}
