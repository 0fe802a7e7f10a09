package main

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kroscope/kroscope/test/prereq"
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

// render renders every instance of a file (the repository's own
// examples/webapp/instances.yaml holds two), in -n when given, and the
// same bytes on every run (#38: a random instance-id and owner uid, -n
// ignored, and "render takes one graph and one instance (found 1 and 2)").
func TestRenderEachInstanceReproducibly(t *testing.T) {
	ex := filepath.Join(prereq.RepoRoot(), "examples", "webapp")
	args := []string{"render", filepath.Join(ex, "rgd.yaml"), "-i", filepath.Join(ex, "instances.yaml"), "-n", "team-a"}
	first, stderr, err := runCmd(t, args...)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	again, _, err := runCmd(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	if first != again {
		t.Errorf("two renders differ:\n%s\n---- and ----\n%s", first, again)
	}
	for _, want := range []string{"# instance shop\n", "# instance blog\n", "name: shop-config", "name: blog-config", "namespace: team-a", "kro.run/instance-namespace: team-a"} {
		if !strings.Contains(first, want) {
			t.Errorf("render lacks %q:\n%s", want, first)
		}
	}
	if strings.Contains(first, "namespace: default") {
		t.Errorf("render ignores -n:\n%s", first)
	}
}
