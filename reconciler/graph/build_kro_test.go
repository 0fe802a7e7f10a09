package graph

import (
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

// TestBuildClusterScopedInstance: schema.scope Cluster gives a
// cluster-scoped instance kind and CRD; namespaced children that set a
// namespace, cluster-scoped children and external collections build.
func TestBuildClusterScopedInstance(t *testing.T) {
	g, err := tryBuild(t, currentKroSchema)
	if err != nil {
		t.Fatal(err)
	}
	if g.Instance.Namespaced || g.Instance.CRD.Spec.Scope != apiextensionsv1.ClusterScoped {
		t.Fatalf("namespaced %v, CRD scope %q", g.Instance.Namespaced, g.Instance.CRD.Spec.Scope)
	}
	names := g.Instance.CRD.Spec.Names
	if strings.Join(names.ShortNames, ",") != "th,thg" || strings.Join(names.Categories, ",") != "kro,things" ||
		g.Instance.CRD.Labels["team"] != "blue" || g.Instance.CRD.Annotations["note"] != "hello" {
		t.Fatalf("CRD names %+v labels %v annotations %v", names, g.Instance.CRD.Labels, g.Instance.CRD.Annotations)
	}
	// The default scope, as kro's CRD stores it or as omitted, is Namespaced.
	for _, scope := range []string{"scope: Namespaced", ""} {
		src := strings.Replace(currentKroSchema, "scope: Cluster", scope, 1)
		g, err := tryBuild(t, src)
		if err != nil {
			t.Fatalf("%q: %v", scope, err)
		}
		if !g.Instance.Namespaced || g.Instance.CRD.Spec.Scope != apiextensionsv1.NamespaceScoped {
			t.Fatalf("%q: namespaced %v", scope, g.Instance.Namespaced)
		}
	}
}

// TestBuildClusterInstanceChildNamespaces: only the namespaced children
// without a namespace are errors (cluster-scoped children and external
// collections are not), each naming its resource id.
func TestBuildClusterInstanceChildNamespaces(t *testing.T) {
	got := invalidError(t, "testdata/invalid/cluster-instance-child-no-namespace.yaml")
	lines := strings.Split(got, "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "resource config:") || !strings.Contains(lines[1], "resource secret:") {
		t.Fatalf("want errors for config and secret only, got:\n%s", got)
	}
}

// TestChildPluralsWithoutMapper: without a REST mapper a child's resource
// is kro's plural (flect), not apimachinery's guess.
func TestChildPluralsWithoutMapper(t *testing.T) {
	src := strings.Replace(currentKroSchema, "      apiVersion: v1\n      kind: ConfigMap\n", "      apiVersion: example.com/v1\n      kind: Person\n", 1)
	src = strings.Replace(src, "kind: Thing", "kind: Gateway", 1)
	g, err := tryBuild(t, src)
	if err != nil {
		t.Fatal(err)
	}
	if got := g.Resources["config"].GVR.Resource; got != "people" {
		t.Errorf("child resource %q, want people", got)
	}
	if got := g.Instance.GVR.Resource; got != "gateways" {
		t.Errorf("instance resource %q, want gateways", got)
	}
}

// TestTemplateAPIVersions: a template's version is any name a CRD may give
// its versions (Azure Service Operator's v1api20200601), not only kro's
// v1alpha1 form; what cannot be a group/version is still an error.
func TestTemplateAPIVersions(t *testing.T) {
	for _, av := range []string{"resources.azure.com/v1api20200601", "example.com/v2beta1", "example.com/stable", "v1", "apps/v1"} {
		src := strings.Replace(currentKroSchema, "      apiVersion: v1\n      kind: ConfigMap\n", "      apiVersion: "+av+"\n      kind: ConfigMap\n", 1)
		if _, err := tryBuild(t, src); err != nil {
			t.Errorf("%s: %v", av, err)
		}
	}
	for _, av := range []string{"apps/v1/beta", "example.com/V1", "example.com/1v", "example.com/v1-", "Apps/v1", "${schema.spec.v}"} {
		src := strings.Replace(currentKroSchema, "      apiVersion: v1\n      kind: ConfigMap\n", "      apiVersion: \""+av+"\"\n      kind: ConfigMap\n", 1)
		_, err := tryBuild(t, src)
		if err == nil || !strings.Contains(err.Error(), "is invalid") {
			t.Errorf("%s: want an invalid apiVersion error, got %v", av, err)
		}
	}
}
