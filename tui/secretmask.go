package tui

import (
	"encoding/json"
)

// lastApplied is kubectl's annotation holding a copy of the whole object
// as last applied: for a Secret, its data too.
const lastApplied = "kubectl.kubernetes.io/last-applied-configuration"

// maskSecrets returns a copy of v in which every Secret's data and
// stringData values are replaced by mask, wherever a Secret appears: the
// object itself (secret: the pane shows a Secret), a List's items, any
// nested object, and the last-applied-configuration annotation. v is not
// changed.
func maskSecrets(v any, mask string, secret bool) any {
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
				out[k] = maskSecrets(val, mask, secret || kind == "SecretList")
			case k == "metadata":
				out[k] = maskAnnotation(val, mask)
			default:
				out[k] = maskSecrets(val, mask, false)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, el := range x {
			out[i] = maskSecrets(el, mask, secret)
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
		return maskSecrets(m, mask, false)
	}
	text, ok := ann[lastApplied].(string)
	if !ok {
		return maskSecrets(m, mask, false)
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
		annOut[lastApplied] = mask
	} else if b, err := json.Marshal(maskSecrets(obj, mask, false)); err == nil {
		annOut[lastApplied] = string(b)
	} else {
		annOut[lastApplied] = mask
	}
	out["annotations"] = annOut
	return out
}
