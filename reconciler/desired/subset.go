package desired

import (
	"fmt"
	"reflect"

	"k8s.io/apimachinery/pkg/api/resource"
)

// subsetOf reports whether every value in desired is present, equal, in
// observed; when not, path names the first difference. Numbers compare by
// value (int64 1 equals float64 1), and an empty, null or zero desired
// value ("", 0, false, {}, []) matches an absent one: the API server drops
// those from built-in kinds (omitempty fields: an EnvVar's value "" is not
// stored), so their absence is what applying them leaves. A quantity
// matches its canonical spelling. Lists must have the same length.
func Subset(desired, observed any, path string) (string, bool) {
	if diff, ok := subsetAt(desired, observed); !ok {
		return orRoot(path + diff), false
	}
	return "", true
}

// subsetAt is subsetOf with the path of the difference below this value
// ("" for the value itself), built only once a difference is found: a
// converged object is compared on every pass, and building every key's
// path was most of what the comparison allocated.
func subsetAt(desired, observed any) (string, bool) {
	switch d := desired.(type) {
	case map[string]any:
		o, ok := observed.(map[string]any)
		if !ok {
			return "", len(d) == 0 && observed == nil
		}
		for k, dv := range d {
			ov, present := o[k]
			if !present {
				if isEmpty(dv) {
					continue
				}
				return "." + k, false
			}
			if sub, ok := subsetAt(dv, ov); !ok {
				return "." + k + sub, false
			}
		}
		return "", true
	case []any:
		o, ok := observed.([]any)
		if !ok {
			return "", len(d) == 0 && observed == nil
		}
		if len(d) != len(o) {
			return "", false
		}
		for i := range d {
			if sub, ok := subsetAt(d[i], o[i]); !ok {
				return fmt.Sprintf("[%d]", i) + sub, false
			}
		}
		return "", true
	case nil:
		return "", true
	}
	if canonicalQuantity(desired, observed) {
		return "", true
	}
	if dn, ok := number(desired); ok {
		if on, ok := number(observed); ok && dn == on {
			return "", true
		}
		return "", false
	}
	return "", reflect.DeepEqual(desired, observed)
}

// canonicalQuantity reports whether observed is the canonical form of the
// quantity desired spells: the API server stores resource quantities
// canonically (1000m as 1, 0.5 as 500m, 1024Mi as 1Gi, the number 1 as "1"),
// so the object it returns differs from the one applied while meaning the
// same. Only the exact canonical spelling counts: "1.1" is not taken for
// "1.10" (a version string, say), whose canonical form is "1100m".
func canonicalQuantity(desired, observed any) bool {
	o, ok := observed.(string)
	if !ok {
		return false
	}
	var spelled string
	switch d := desired.(type) {
	case string:
		if d == o {
			return false // equal anyway; not a normalisation
		}
		spelled = d
	case int, int32, int64:
		spelled = fmt.Sprint(d)
	default:
		return false
	}
	q, err := resource.ParseQuantity(spelled)
	return err == nil && q.String() == o
}

func orRoot(p string) string {
	if p == "" {
		return "."
	}
	return p
}

// isEmpty: a value the API server may omit when it is stored (Go's
// omitempty: nil, empty maps and lists, and the zero scalars).
func isEmpty(v any) bool {
	switch t := v.(type) {
	case nil:
		return true
	case map[string]any:
		return len(t) == 0
	case []any:
		return len(t) == 0
	case string:
		return t == ""
	case bool:
		return !t
	}
	if n, ok := number(v); ok {
		return n == 0
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
