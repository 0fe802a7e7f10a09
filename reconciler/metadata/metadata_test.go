package metadata

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestOwnership(t *testing.T) {
	l := ChildLabels(InstanceRef{UID: "u1", Name: "app", Namespace: "ns"}, "db")
	if !OwnedBy(l, "u1") || OwnedBy(l, "u2") || OwnedBy(l, "") {
		t.Errorf("OwnedBy wrong for %v", l)
	}
	if got := Owner(l); got != "ns/app (uid u1)" {
		t.Errorf("Owner = %q", got)
	}
	if Owner(map[string]string{"x": "y"}) != "" {
		t.Error("an unlabelled object has an owner")
	}
	for k := range l {
		if k != ManagedByLabel && !IsChildLabel(k) {
			t.Errorf("%s is stamped on children but IsChildLabel says no", k)
		}
	}
	if IsChildLabel("app") {
		t.Error("a user label counted as kroscope's")
	}
	if got := ServiceAccountUser("ns", "sa"); got != "system:serviceaccount:ns:sa" {
		t.Errorf("ServiceAccountUser = %q", got)
	}
}

// The expected values were computed outside Go (python hashlib/base64) from
// the KEP-3659 formula kro uses, so a change of formula fails here.
func TestApplySetIDAndInventory(t *testing.T) {
	id := ApplySetID("app", "default", "WebApp", "kro.run")
	if want := "applyset-Gn2McswZN_xNsV5sDcl0y6iOcFru6cttrAvQY62qRZs-v1"; id != want {
		t.Errorf("ApplySetID = %q, want %q", id, want)
	}
	var inv Inventory
	inv.Add(schema.GroupKind{Group: "apps", Kind: "Deployment"}, "zeta", "default")
	inv.Add(schema.GroupKind{Kind: "ConfigMap"}, "default", "default")
	inv.Add(schema.GroupKind{Kind: "ConfigMap"}, "other", "default")
	if inv.Add(schema.GroupKind{Kind: "ConfigMap"}, "other", "default") {
		t.Error("adding a recorded member grew the inventory")
	}
	ann := inv.Annotations(id)
	want := map[string]string{
		ApplySetToolingAnnotation:    "kro/v0.9.4+kroscope",
		ApplySetGroupKindsAnnotation: "ConfigMap,Deployment.apps",
		ApplySetNamespacesAnnotation: "other,zeta",
		InventoryHashAnnotation:      "sha256:Qn2B89B0Vsu6-vIAeb-z5vdVoZlh8h_JmiRcvSsouS8",
	}
	for k, v := range want {
		if ann[k] != v {
			t.Errorf("%s = %q, want %q", k, ann[k], v)
		}
	}
	back, err := ParseInventory(ann)
	if err != nil || !back.Equal(inv) {
		t.Errorf("ParseInventory = %+v, %v; want %+v", back, err, inv)
	}
	if _, err := ParseInventory(map[string]string{ApplySetNamespacesAnnotation: "Bad_NS"}); err == nil {
		t.Error("an invalid namespace parsed")
	}
	if u := inv.Union(Inventory{Namespaces: []string{"a"}}); u.NamespacesValue() != "a,other,zeta" || len(u.GroupKinds) != 2 {
		t.Errorf("Union = %+v", u)
	}
}

func TestSuspended(t *testing.T) {
	for v, want := range map[string]bool{"suspended": true, "Suspended": true, "DISABLED": true, "disabled": true, "": false, "enabled": false} {
		if got := Suspended(map[string]string{ReconcileAnnotation: v}); got != want {
			t.Errorf("Suspended(%q) = %v", v, got)
		}
	}
}

func TestWroteInstanceLabel(t *testing.T) {
	raw := []byte(`{"f:metadata":{"f:labels":{"f:kro.run/instance-id":{}}}}`)
	entry := func(m string) []metav1.ManagedFieldsEntry {
		return []metav1.ManagedFieldsEntry{{Manager: m, FieldsV1: &metav1.FieldsV1{Raw: raw}}}
	}
	if !WroteInstanceLabel(entry(FieldManager)) || !WroteInstanceLabel(entry(KroApplyManager)) {
		t.Error("kroscope's or kro's label write not recognised")
	}
	if WroteInstanceLabel(entry("kubectl")) || WroteInstanceLabel(nil) {
		t.Error("someone else's copy of the label counted as ours")
	}
}
