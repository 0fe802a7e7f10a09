package builtinschemas

import "encoding/json"

// schemasOnly keeps a GroupVersion's OpenAPI v3 document's
// components.schemas, without descriptions (type checking reads none, and
// they are most of the bytes) and without enum lists (type checking reads
// none either, and the documents a release publishes in its module leave
// out some the API server serves). The generator writes the embedded files
// with it, and the test against the API server compares with it.
func schemasOnly(raw []byte) ([]byte, error) {
	var doc struct {
		Components struct {
			Schemas map[string]any `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	return json.Marshal(map[string]any{"components": map[string]any{"schemas": withoutDescriptions(doc.Components.Schemas)}})
}

func withoutDescriptions(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			if k == "description" {
				if _, isText := e.(string); isText {
					continue
				}
			}
			if k == "enum" {
				if _, isList := e.([]any); isList {
					continue // a property named enum is an object
				}
			}
			m[k] = withoutDescriptions(e)
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = withoutDescriptions(e)
		}
		return l
	}
	return v
}
