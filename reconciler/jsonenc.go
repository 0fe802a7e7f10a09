package reconciler

import (
	"encoding/json"
	"slices"
	"strconv"
	"sync"
)

// appendJSON appends v encoded exactly as encoding/json's Marshal encodes
// it (map keys sorted, HTML characters escaped), for the JSON values an
// unstructured object holds. The common cases (maps, lists, plain ASCII
// strings, integers, booleans) are written directly; anything else
// (floats, strings needing escapes, other types) goes through
// json.Marshal itself, so the output never differs. The desired hash is
// stored on every child: a different encoding would re-apply every child
// of every instance once after an upgrade.
func appendJSON(buf []byte, v any) ([]byte, error) {
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
		if buf, err = appendJSON(buf, m[k]); err != nil {
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
		if buf, err = appendJSON(buf, x); err != nil {
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

var jsonBufs = sync.Pool{New: func() any { b := make([]byte, 0, 2048); return &b }}
