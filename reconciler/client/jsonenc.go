package client

import (
	"encoding/json"
	"slices"
	"strconv"
	"sync"
)

// AppendJSON appends v encoded exactly as encoding/json's Marshal encodes
// it (map keys sorted, HTML characters escaped), for the JSON values an
// unstructured object holds: what the desired hash is taken over, and the
// body of kroscope's merge patches. The common cases (maps, lists,
// plain ASCII strings, integers, booleans) are written directly; anything
// else (floats, strings needing escapes, other types) goes through
// json.Marshal itself, so the output never differs. The desired hash is
// stored on every child: a different encoding would re-apply every child
// of every instance once after an upgrade.
func AppendJSON(buf []byte, v any) ([]byte, error) {
	switch t := v.(type) {
	case nil:
		return append(buf, "null"...), nil
	case map[string]any:
		return appendJSONObject(buf, t)
	case []any:
		return appendJSONList(buf, t)
	case string:
		return appendJSONString(buf, t)
	case bool:
		return strconv.AppendBool(buf, t), nil
	case int64:
		return strconv.AppendInt(buf, t, 10), nil
	case int:
		return strconv.AppendInt(buf, int64(t), 10), nil
	case int32:
		return strconv.AppendInt(buf, int64(t), 10), nil
	}
	b, err := json.Marshal(v)
	return append(buf, b...), err
}

// appendJSONObject writes m with its keys sorted.
func appendJSONObject(buf []byte, m map[string]any) ([]byte, error) {
	if m == nil {
		return append(buf, "null"...), nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	buf = append(buf, '{')
	for i, k := range keys {
		if i > 0 {
			buf = append(buf, ',')
		}
		var err error
		if buf, err = appendJSONString(buf, k); err != nil {
			return buf, err
		}
		buf = append(buf, ':')
		if buf, err = AppendJSON(buf, m[k]); err != nil {
			return buf, err
		}
	}
	return append(buf, '}'), nil
}

func appendJSONList(buf []byte, l []any) ([]byte, error) {
	if l == nil {
		return append(buf, "null"...), nil
	}
	buf = append(buf, '[')
	for i, x := range l {
		if i > 0 {
			buf = append(buf, ',')
		}
		var err error
		if buf, err = AppendJSON(buf, x); err != nil {
			return buf, err
		}
	}
	return append(buf, ']'), nil
}

// appendJSONString writes s quoted; a string that encoding/json would
// escape (control characters, quotes, backslashes, <, >, &, anything not
// ASCII) is left to it.
func appendJSONString(buf []byte, s string) ([]byte, error) {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c >= 0x7f, c == '"', c == '\\', c == '<', c == '>', c == '&':
			b, err := json.Marshal(s)
			return append(buf, b...), err
		}
	}
	buf = append(buf, '"')
	buf = append(buf, s...)
	return append(buf, '"'), nil
}

// jsonScratch holds encoding buffers for request bodies.
var jsonScratch = sync.Pool{New: func() any { b := make([]byte, 0, 2048); return &b }}

// EncodeJSON encodes v as AppendJSON does into a slice of its own: a request
// body must not share a buffer, since the transport may still read it after
// the call returns. The scratch buffer's growth is paid once; the body is
// one allocation of its size. encoding/json's Marshal sorts each map's
// keys by reflection. (Applies keep client-go's dynamic Apply, which
// encodes with encoding/json: the plan's recorder, the read-only gate and
// the demo's fault injection tell an apply from a patch by the method.)
func EncodeJSON(v any) ([]byte, error) {
	bp := jsonScratch.Get().(*[]byte)
	b, err := AppendJSON((*bp)[:0], v)
	body := slices.Clone(b)
	if cap(b) <= 64<<10 { // a rare huge object's buffer is not kept
		*bp = b
		jsonScratch.Put(bp)
	}
	return body, err
}
