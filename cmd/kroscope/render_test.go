package main

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestSetFields(t *testing.T) {
	for _, tc := range []struct {
		name, set string
		want      map[string]any
		err       bool
	}{
		{"integer", "spec.replicas=3", map[string]any{"replicas": int64(3), "image": "nginx"}, false},
		{"string", "spec.image=ghost:5", map[string]any{"image": "ghost:5"}, false},
		{"nested object", "spec.ingress={enabled: true, port: 80}", map[string]any{"image": "nginx",
			"ingress": map[string]any{"enabled": true, "port": int64(80)}}, false},
		{"no value", "spec.replicas", nil, true},
		{"not spec or metadata", "status.state=ACTIVE", nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := &unstructured.Unstructured{Object: map[string]any{"spec": map[string]any{"image": "nginx"}}}
			err := setFields(u, []string{tc.set})
			if tc.err {
				if err == nil {
					t.Fatalf("--set %s: no error", tc.set)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			spec := u.Object["spec"].(map[string]any)
			for k, v := range tc.want {
				if !reflect.DeepEqual(spec[k], v) {
					t.Errorf("spec.%s = %#v, want %#v", k, spec[k], v)
				}
			}
		})
	}
}
