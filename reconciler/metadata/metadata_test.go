package metadata

import "testing"

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
