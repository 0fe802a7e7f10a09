package confine

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

var (
	deployment = schema.GroupKind{Group: "apps", Kind: "Deployment"}
	namespace  = schema.GroupKind{Kind: "Namespace"}
	crd        = schema.GroupKind{Group: "apiextensions.k8s.io", Kind: "CustomResourceDefinition"}
	role       = schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "ClusterRole"}
	webhook    = schema.GroupKind{Group: "admissionregistration.k8s.io", Kind: "ValidatingWebhookConfiguration"}
	apiservice = schema.GroupKind{Group: "apiregistration.k8s.io", Kind: "APIService"}
	rgd        = schema.GroupKind{Group: "kro.run", Kind: "ResourceGraphDefinition"}
	secret     = schema.GroupKind{Kind: "Secret"}
)

// inTeam is a namespaced instance in namespace team, its child rendered.
func inTeam(gk schema.GroupKind, ns string) Facts {
	return Facts{Kind: gk, Namespaced: true, InstanceNamespaced: true, InstanceNamespace: "team", Rendered: true, Namespace: ns}
}

func TestDecide(t *testing.T) {
	with := func(f Facts, mod func(*Facts)) Facts { mod(&f); return f }
	for _, c := range []struct {
		name  string
		facts Facts
		allow bool
		why   []string // words the refusal must hold
	}{
		{"own namespace", inTeam(deployment, "team"), true, nil},
		{"another namespace from the spec", inTeam(deployment, "kube-system"), false,
			[]string{"Deployment (apps)", "namespace kube-system", "instance's namespace team", ScopeAnnotation}},
		{"another namespace written in the graph", with(inTeam(deployment, "shared"), func(f *Facts) { f.LiteralNamespace = true }), true, nil},
		{"another namespace, the graph annotated", with(inTeam(deployment, "kube-system"), func(f *Facts) { f.Grant.AnyNamespace = true }), true, nil},
		{"a Secret read from another namespace", with(inTeam(secret, "kube-system"), func(f *Facts) { f.External = true }), false,
			[]string{"read from namespace kube-system"}},
		{"every namespace read, computed", with(inTeam(secret, ""), func(f *Facts) { f.External = true }), false,
			[]string{"every namespace"}},
		{"a Secret read from its own namespace", with(inTeam(secret, "team"), func(f *Facts) { f.External = true }), true, nil},
		{"cluster-scoped child of a namespaced instance", Facts{Kind: namespace, InstanceNamespaced: true}, false,
			[]string{"Namespace is cluster-scoped", ScopeAnnotation + ": " + ScopeCluster}},
		{"cluster-scoped child, rendered", Facts{Kind: namespace, InstanceNamespaced: true, InstanceNamespace: "team", Rendered: true}, false,
			[]string{"cluster-scoped"}},
		{"cluster-scoped child, the graph annotated", Facts{Kind: namespace, InstanceNamespaced: true, Grant: Grant{AnyNamespace: true}}, true, nil},
		{"cluster-scoped child of a cluster-scoped instance", Facts{Kind: namespace}, true, nil},
		{"cluster-scoped read by a namespaced instance", Facts{Kind: namespace, External: true, InstanceNamespaced: true, Rendered: true, InstanceNamespace: "team"}, true, nil},
		{"cluster-scoped instance, any namespace", Facts{Kind: deployment, Namespaced: true, Rendered: true, Namespace: "kube-system"}, true, nil},
		{"graph check, namespaced child", Facts{Kind: deployment, Namespaced: true, InstanceNamespaced: true}, true, nil},
		{"CRD", Facts{Kind: crd}, false, []string{"CustomResourceDefinition (apiextensions.k8s.io)", "--allow-child-kind=CustomResourceDefinition.apiextensions.k8s.io"}},
		{"RBAC", Facts{Kind: role}, false, []string{"RBAC", "--allow-child-kind=ClusterRole.rbac.authorization.k8s.io"}},
		{"webhook", Facts{Kind: webhook}, false, []string{"admission"}},
		{"APIService", Facts{Kind: apiservice}, false, []string{"APIService"}},
		{"a graph", Facts{Kind: rgd}, false, []string{"graph"}},
		{"sensitive, even annotated", Facts{Kind: role, Grant: Grant{AnyNamespace: true}}, false, []string{"RBAC"}},
		{"sensitive, allowed by the flag", Facts{Kind: role, Grant: Grant{Kinds: []schema.GroupKind{role}}}, true, nil},
		{"the flag allows only its kind", Facts{Kind: role, Grant: Grant{Kinds: []schema.GroupKind{crd}}}, false, []string{"RBAC"}},
		{"sensitive read", Facts{Kind: crd, External: true}, true, nil},
		{"flag-allowed namespaced RBAC still stays home", with(inTeam(schema.GroupKind{Group: "rbac.authorization.k8s.io", Kind: "Role"}, "kube-system"),
			func(f *Facts) { f.Grant.Kinds = []schema.GroupKind{{Group: "rbac.authorization.k8s.io", Kind: "Role"}} }), false, []string{"namespace kube-system"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			v := Decide(c.facts)
			if v.Allowed != c.allow {
				t.Fatalf("Decide(%+v) = %+v, want allowed %v", c.facts, v, c.allow)
			}
			if v.Allowed != (v.Why == "") {
				t.Errorf("verdict %+v: a refusal says why, an allowance does not", v)
			}
			for _, w := range c.why {
				if !strings.Contains(v.Why, w) {
					t.Errorf("refusal %q does not say %q", v.Why, w)
				}
			}
		})
	}
}

func TestParseKinds(t *testing.T) {
	got, err := ParseKinds([]string{"ClusterRole.rbac.authorization.k8s.io", "CustomResourceDefinition.apiextensions.k8s.io", "Secret"})
	if err != nil {
		t.Fatal(err)
	}
	want := []schema.GroupKind{role, crd, secret}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("kind %d: %v, want %v", i, got[i], want[i])
		}
		if FlagValue(want[i]) == "" || parseOne(t, FlagValue(want[i])) != want[i] {
			t.Errorf("FlagValue(%v) = %q does not parse back", want[i], FlagValue(want[i]))
		}
	}
	for _, bad := range []string{"", "apps/v1.Deployment", ".apps"} {
		if _, err := ParseKinds([]string{bad}); err == nil {
			t.Errorf("ParseKinds(%q) accepted it", bad)
		}
	}
}

func parseOne(t *testing.T, v string) schema.GroupKind {
	t.Helper()
	gks, err := ParseKinds([]string{v})
	if err != nil {
		t.Fatal(err)
	}
	return gks[0]
}
