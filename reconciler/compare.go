package reconciler

import (
	"fmt"
	"reflect"
)

// subsetOf reports whether every value in desired is present, equal, in
// observed; when not, path names the first difference. Numbers compare by
// value (int64 1 equals float64 1), and an empty or null desired value
// matches an absent one, because the API server drops those. Lists must
// have the same length.
func subsetOf(desired, observed any, path string) (string, bool) {
	switch d := desired.(type) {
	case map[string]any:
		o, ok := observed.(map[string]any)
		if !ok {
			if len(d) == 0 && observed == nil {
				return "", true
			}
			return orRoot(path), false
		}
		for k, dv := range d {
			ov, present := o[k]
			p := path + "." + k
			if !present {
				if isEmpty(dv) {
					continue
				}
				return p, false
			}
			if sub, ok := subsetOf(dv, ov, p); !ok {
				return sub, false
			}
		}
		return "", true
	case []any:
		o, ok := observed.([]any)
		if !ok {
			if len(d) == 0 && observed == nil {
				return "", true
			}
			return orRoot(path), false
		}
		if len(d) != len(o) {
			return orRoot(path), false
		}
		for i := range d {
			if sub, ok := subsetOf(d[i], o[i], fmt.Sprintf("%s[%d]", path, i)); !ok {
				return sub, false
			}
		}
		return "", true
	case nil:
		return "", true
	}
	if dn, ok := number(desired); ok {
		if on, ok := number(observed); ok && dn == on {
			return "", true
		}
		return orRoot(path), false
	}
	if reflect.DeepEqual(desired, observed) {
		return "", true
	}
	return orRoot(path), false
}

func orRoot(p string) string {
	if p == "" {
		return "."
	}
	return p
}

func isEmpty(v any) bool {
	switch t := v.(type) {
	case nil:
		return true
	case map[string]any:
		return len(t) == 0
	case []any:
		return len(t) == 0
	}
	return false
}

func number(v any) (float64, bool) {
	switch n := v.(type) {
	case int:
		return float64(n), true
	case int32:
		return float64(n), true
	case int64:
		return float64(n), true
	case float32:
		return float64(n), true
	case float64:
		return n, true
	}
	return 0, false
}
