// Package mask hides the values of Secrets in objects before they are
// shown: the instance pane's YAML and the graphs screen's definition both
// ask it, so what counts as a Secret's value is decided once.
package mask

import (
	"encoding/json"
)

// LastApplied is kubectl's annotation holding a copy of the whole object
// as last applied: for a Secret, its data too.
const LastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// Secrets returns a copy of v in which every Secret's data and
// stringData values are replaced by mask, wherever a Secret appears: the
// object itself (secret: the pane shows a Secret), a List's items, any
// nested object, and the last-applied-configuration annotation. v is not
// changed.
func Secrets(v any, mask string, secret bool) any {
	switch x := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		kind, _ := x["kind"].(string)
		apiVersion, _ := x["apiVersion"].(string)
		isSecret := (kind == "Secret" && (apiVersion == "v1" || apiVersion == "")) || (secret && kind == "")
		for k, val := range x {
			switch {
			case isSecret && (k == "data" || k == "stringData"):
				out[k] = maskValues(val, mask)
			case k == "items":
				// The items of a List of Secrets may leave out their kind.
				out[k] = Secrets(val, mask, secret || kind == "SecretList")
			case k == "metadata":
				out[k] = maskAnnotation(val, mask)
			default:
				out[k] = Secrets(val, mask, false)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, el := range x {
			out[i] = Secrets(el, mask, secret)
		}
		return out
	}
	return v
}

// maskValues replaces every value of a data map by mask.
func maskValues(v any, mask string) any {
	m, ok := v.(map[string]any)
	if !ok {
		if v == nil {
			return nil
		}
		return mask
	}
	out := make(map[string]any, len(m))
	for k := range m {
		out[k] = mask
	}
	return out
}

// maskAnnotation masks the Secrets inside the last-applied-configuration
// annotation of metadata md (the whole annotation when it is not JSON).
func maskAnnotation(md any, mask string) any {
	m, ok := md.(map[string]any)
	if !ok {
		return md
	}
	ann, ok := m["annotations"].(map[string]any)
	if !ok {
		return Secrets(m, mask, false)
	}
	text, ok := ann[LastApplied].(string)
	if !ok {
		return Secrets(m, mask, false)
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	annOut := make(map[string]any, len(ann))
	for k, v := range ann {
		annOut[k] = v
	}
	var obj any
	if err := json.Unmarshal([]byte(text), &obj); err != nil {
		annOut[LastApplied] = mask
	} else if b, err := json.Marshal(Secrets(obj, mask, false)); err == nil {
		annOut[LastApplied] = string(b)
	} else {
		annOut[LastApplied] = mask
	}
	out["annotations"] = annOut
	return out
}
