package state

import "testing"

func TestCapabilitiesSummaryAndFor(t *testing.T) {
	ok, no := Permission{Allowed: true}, Permission{Why: "user jane2 may not delete webapps.kro.run in team-a"}
	var c Capabilities
	if c.Summary() != "" {
		t.Errorf("nothing checked says nothing: %q", c.Summary())
	}
	if a := c.For("webapps.kro.run"); !a.Observe.Allowed || !a.Requeue.Allowed || !a.Delete.Allowed || !a.Edit.Allowed {
		t.Errorf("an unchecked kind counts as allowed: %+v", a)
	}
	c = c.with(KindAccess{Resource: "webapps.kro.run", Observe: ok, Requeue: no, Delete: no, Edit: no})
	if got, want := c.Summary(), "can observe; cannot requeue, delete, edit"; got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
	c = c.with(KindAccess{Resource: "databases.kro.run", Observe: ok, Requeue: ok, Delete: no, Edit: no})
	if got, want := c.Summary(), "can observe, requeue (some kinds); cannot delete, edit"; got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
	if c.Kinds[0].Resource != "databases.kro.run" {
		t.Errorf("kinds are sorted: %+v", c.Kinds)
	}
	if a := c.For("webapps.kro.run"); a.Delete.Allowed || a.Delete.Why != no.Why {
		t.Errorf("For returns the kind's access: %+v", a)
	}
	c = c.without("webapps.kro.run")
	if got, want := c.Summary(), "can observe, requeue; cannot delete, edit"; got != want {
		t.Errorf("after forgetting a kind: %q, want %q", got, want)
	}
}

func TestStoreAccess(t *testing.T) {
	s := NewStore()
	s.SetAccessUser("jane")
	s.SetAccess(KindAccess{Resource: "webapps.kro.run", Observe: Permission{Allowed: true}, Delete: Permission{Why: "no"}})
	snap := s.Snapshot()
	if snap.Capabilities.User != "jane" || len(snap.Capabilities.Kinds) != 1 {
		t.Fatalf("snapshot capabilities: %+v", snap.Capabilities)
	}
	if s.Access("webapps.kro.run").Delete.Allowed {
		t.Error("Access returns the recorded denial")
	}
	s.ForgetAccess("webapps.kro.run")
	if !s.Access("webapps.kro.run").Delete.Allowed {
		t.Error("a forgotten kind counts as allowed")
	}
}

func TestWatchNoAccess(t *testing.T) {
	if got := (Watch{Resource: "ingresses.networking.k8s.io", Namespace: "team-a"}).NoAccess(); got != "ingresses.networking.k8s.io in team-a" {
		t.Error(got)
	}
	if got := (Watch{Resource: "configmaps"}).NoAccess(); got != "configmaps in all namespaces" {
		t.Error(got)
	}
}

func TestCheckedAccessAndDenies(t *testing.T) {
	s := NewStore()
	if _, ok := s.CheckedAccess("webapps.kro.run"); ok {
		t.Error("a kind never checked has no recorded access")
	}
	ok := Permission{Allowed: true}
	all := KindAccess{Resource: "webapps.kro.run", Observe: ok, Requeue: ok, Delete: ok, Edit: ok}
	if all.Denies() {
		t.Errorf("everything allowed denies nothing: %+v", all)
	}
	for _, deny := range []func(*KindAccess){
		func(k *KindAccess) { k.Observe = Permission{Why: "no"} },
		func(k *KindAccess) { k.Requeue = Permission{Why: "no"} },
		func(k *KindAccess) { k.Delete = Permission{Why: "no"} },
		func(k *KindAccess) { k.Edit = Permission{Why: "no"} },
	} {
		k := all
		deny(&k)
		if !k.Denies() {
			t.Errorf("one permission denied should count: %+v", k)
		}
	}
	s.SetAccess(all)
	if k, got := s.CheckedAccess("webapps.kro.run"); !got || k != all {
		t.Errorf("CheckedAccess = %+v, %v; want the recorded access", k, got)
	}
}
