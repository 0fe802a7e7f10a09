package desired

import "testing"

func TestSubset(t *testing.T) {
	obs := map[string]any{
		"metadata": map[string]any{"name": "a", "labels": map[string]any{"x": "1", "extra": "y"}},
		"spec": map[string]any{
			"replicas": int64(2),
			"ratio":    float64(0.5),
			"ports":    []any{map[string]any{"port": int64(80), "protocol": "TCP"}},
			"cpu":      "1",
			"half":     "500m",
			"memory":   "1Gi",
			"version":  "1.1",
		},
	}
	cases := []struct {
		name    string
		desired map[string]any
		ok      bool
		path    string
	}{
		{"fewer keys", map[string]any{"metadata": map[string]any{"labels": map[string]any{"x": "1"}}}, true, ""},
		{"int vs float", map[string]any{"spec": map[string]any{"replicas": float64(2)}}, true, ""},
		{"different scalar", map[string]any{"spec": map[string]any{"replicas": int64(3)}}, false, ".spec.replicas"},
		{"missing key", map[string]any{"spec": map[string]any{"paused": true}}, false, ".spec.paused"},
		{"empty desired map matches absent", map[string]any{"spec": map[string]any{"template": map[string]any{}}}, true, ""},
		{"null desired matches absent", map[string]any{"spec": map[string]any{"x": nil}}, true, ""},
		// Built-in kinds omit zero values (omitempty): webapp's env value
		// "" (an empty default) is not stored, and is not drift.
		{"empty string matches absent", map[string]any{"spec": map[string]any{"ports": []any{map[string]any{"port": int64(80), "name": ""}}}}, true, ""},
		{"false matches absent", map[string]any{"spec": map[string]any{"paused": false}}, true, ""},
		{"zero matches absent", map[string]any{"spec": map[string]any{"minReadySeconds": int64(0)}}, true, ""},
		{"empty string differs from a value", map[string]any{"spec": map[string]any{"cpu": ""}}, false, ".spec.cpu"},
		{"zero differs from a value", map[string]any{"spec": map[string]any{"replicas": int64(0)}}, false, ".spec.replicas"},
		{"list item subset", map[string]any{"spec": map[string]any{"ports": []any{map[string]any{"port": int64(80)}}}}, true, ""},
		{"list length", map[string]any{"spec": map[string]any{"ports": []any{map[string]any{"port": int64(80)}, map[string]any{"port": int64(81)}}}}, false, ".spec.ports"},
		{"list item differs", map[string]any{"spec": map[string]any{"ports": []any{map[string]any{"port": int64(81)}}}}, false, ".spec.ports[0].port"},
		{"type differs", map[string]any{"spec": map[string]any{"replicas": "2"}}, false, ".spec.replicas"},
		// The API server stores quantities canonically.
		{"1000m is stored as 1", map[string]any{"spec": map[string]any{"cpu": "1000m"}}, true, ""},
		{"the number 1 is stored as \"1\"", map[string]any{"spec": map[string]any{"cpu": int64(1)}}, true, ""},
		{"0.5 is stored as 500m", map[string]any{"spec": map[string]any{"half": "0.5"}}, true, ""},
		{"1024Mi is stored as 1Gi", map[string]any{"spec": map[string]any{"memory": "1024Mi"}}, true, ""},
		{"a different quantity", map[string]any{"spec": map[string]any{"cpu": "2"}}, false, ".spec.cpu"},
		{"a version string is not a quantity's spelling", map[string]any{"spec": map[string]any{"version": "1.10"}}, false, ".spec.version"},
		{"map vs scalar", map[string]any{"metadata": map[string]any{"name": map[string]any{"a": "b"}}}, false, ".metadata.name"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path, ok := Subset(c.desired, obs, "")
			if ok != c.ok || path != c.path {
				t.Errorf("subsetOf = (%q, %v), want (%q, %v)", path, ok, c.path, c.ok)
			}
		})
	}
}
