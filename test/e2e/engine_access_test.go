package e2e

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/kroscope/kroscope/engine"
	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/reconciler"
	"github.com/kroscope/kroscope/test/graphs"
)

// TestEngineAccessFollowsRBAC: the capabilities an attached TUI shows
// follow RBAC changes made while it runs, without a restart. pat attaches
// to the reconciling engine (which holds the Lease) with read on the kind:
// her delete is refused before any request. A Role granting delete enables
// it within the re-check interval; once it is revoked again, her delete
// reaches the API server, is refused there, and that refusal disables the
// key at once, with the reason.
func TestEngineAccessFollowsRBAC(t *testing.T) {
	r := newEngRig(t)
	rgd := r.writeFile("rgd.yaml", graphs.Chain("engaccess", "EngAccess"))
	const leaseName = "kroscope-access"
	admin := r.start(func(o *engine.Options) {
		o.RGDPaths = []string{rgd}
		o.DisableLease = false
		o.LeaseNamespace, o.LeaseName, o.Identity = r.ns, leaseName, "replica"
	})
	gvr := admin.graphServed("engaccess")
	r.waitLeaseHolder(leaseName, "replica", 2*time.Minute)
	r.createInstance(gvr, "EngAccess", "web", nil)
	r.waitInstanceState(gvr, "web", reconciler.InstanceStateActive, 2*time.Minute)

	read := []string{"get", "list", "watch"}
	rules := []rbacv1.PolicyRule{
		{APIGroups: []string{gvr.Group}, Resources: []string{gvr.Resource}, Verbs: read},
		{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: read},
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get", "list", "watch", "create", "update"}},
	}
	bindUser(t, r, "pat", rules)
	setRules := func(rules []rbacv1.PolicyRule) { setRoleRules(t, r, "pat", rules) }

	pat := r.startAs("pat", func(o *engine.Options) {
		o.RGDPaths = []string{rgd}
		o.DisableLease = false
		o.LeaseNamespace, o.LeaseName, o.Identity = r.ns, leaseName, "pat-tui"
		o.CampaignIfFree, o.Attach = true, true
		o.AccessRecheck = time.Second
	})
	pat.graphServed("engaccess")
	resource := gvr.Resource + "." + gvr.Group
	key := state.InstanceKey{Resource: resource, Namespace: r.ns, Name: "web"}
	snap := pat.waitFor(2*time.Minute, "pat attached, seeing web ACTIVE and her capabilities", func(s *state.Snapshot) bool {
		in := s.Instance(key)
		return s.Mode.Attached && in != nil && in.State == reconciler.InstanceStateActive && len(s.Capabilities.Kinds) == 1
	})
	if got := snap.Capabilities.Summary(); got != "can observe; cannot requeue, delete, edit" {
		t.Fatalf("pat's capabilities: %q", got)
	}
	if err := pat.e.Delete(context.Background(), key); err == nil || !strings.Contains(err.Error(), "user pat may not delete "+resource) {
		t.Errorf("pat's delete should be refused with the reason, got %v", err)
	}
	if n := pat.Deletes(); n != 0 {
		t.Errorf("the refused delete sent %d DELETE requests", n)
	}

	// Granted while the engine runs: the kind was denied something, so it
	// is asked again, and delete turns allowed.
	withDelete := slices.Clone(rules)
	withDelete[0].Verbs = append(slices.Clone(read), "delete")
	setRules(withDelete)
	// The log line follows the state's change: wait for both.
	changed := "access to " + resource + " in " + r.ns + " changed: can observe, delete; cannot requeue, edit"
	pat.waitFor(time.Minute, "delete allowed once granted, and logged", func(s *state.Snapshot) bool {
		return s.Capabilities.Summary() == "can observe, delete; cannot requeue, edit" && logCount(s, changed) > 0
	})

	// The kind is still denied requeue and edit, so it is re-checked
	// every second: re-checks that change nothing log nothing.
	time.Sleep(3 * time.Second)
	if n := logCount(pat.e.Snapshot(), "access to "+resource); n != 2 {
		t.Errorf("re-checks that change nothing should not log: %d lines about the kind's access", n)
	}
	if err := pat.stop(); err != nil {
		t.Fatal(err)
	}

	// Revoked under an engine that never polls (its start found delete
	// allowed): its delete reaches the API server, which refuses it, and
	// that refusal alone re-checks the kind.
	pat = r.startAs("pat", func(o *engine.Options) {
		o.RGDPaths = []string{rgd}
		o.DisableLease = false
		o.LeaseNamespace, o.LeaseName, o.Identity = r.ns, leaseName, "pat-tui-2"
		o.CampaignIfFree, o.Attach = true, true
		o.AccessRecheck = -1
	})
	pat.graphServed("engaccess")
	pat.waitFor(2*time.Minute, "pat attached again, delete allowed", func(s *state.Snapshot) bool {
		return s.Mode.Attached && s.Instance(key) != nil && s.Capabilities.Summary() == "can observe, delete; cannot requeue, edit"
	})
	setRules(rules)
	// The authorizer's cache takes the Role's change within moments: wait
	// for it with dry-run deletes as pat, which delete nothing.
	patCfg := rest.CopyConfig(r.cfg)
	patCfg.Impersonate = rest.ImpersonationConfig{UserName: "pat"}
	patDyn := dynamic.NewForConfigOrDie(patCfg)
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := patDyn.Resource(gvr).Namespace(r.ns).Delete(context.Background(), "web", metav1.DeleteOptions{DryRun: []string{metav1.DryRunAll}})
		if apierrors.IsForbidden(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the revocation never took effect: a dry-run delete as pat returned %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	err := pat.e.Delete(context.Background(), key)
	if !apierrors.IsForbidden(err) {
		t.Fatalf("pat's delete after the revocation should be refused by the API server, got %v", err)
	}
	if n := pat.Deletes(); n != 1 {
		t.Errorf("the delete should have reached the API server once, sent %d DELETEs", n)
	}
	snap = pat.waitFor(30*time.Second, "delete denied again after the API server refused it", func(s *state.Snapshot) bool {
		return s.Capabilities.Summary() == "can observe; cannot requeue, delete, edit"
	})
	if a := snap.Capabilities.For(resource); a.Delete.Why != "user pat may not delete "+resource+" in "+r.ns {
		t.Errorf("the reason shown: %q", a.Delete.Why)
	}
	if in := r.instance(gvr, "web"); in.GetDeletionTimestamp() != nil {
		t.Error("the refused delete deleted the instance")
	}
	if err := pat.stop(); err != nil {
		t.Fatal(err)
	}

	// quinn may delete these instances but not read the Lease: who holds
	// it she cannot know, yet someone reconciles. Attached, her delete is
	// an API delete, as kubectl's would be, and the holder tears down.
	bindUser(t, r, "quinn", withDelete[:2])
	quinn := r.startAs("quinn", func(o *engine.Options) {
		o.RGDPaths = []string{rgd}
		o.DisableLease = false
		o.LeaseNamespace, o.LeaseName, o.Identity = r.ns, leaseName, "quinn-tui"
		o.CampaignIfFree, o.Attach = true, true
	})
	quinn.graphServed("engaccess")
	snap = quinn.waitFor(2*time.Minute, "quinn attached without access to the lease", func(s *state.Snapshot) bool {
		return s.Mode.Attached && s.Mode.Holder == "" && s.Capabilities.Lease != "" && s.Instance(key) != nil
	})
	if !strings.Contains(snap.Mode.RequeueNote, "lease holder") {
		t.Errorf("the requeue note should say the holder is unknown: %q", snap.Mode.RequeueNote)
	}
	if err := quinn.e.Delete(context.Background(), key); err != nil {
		t.Fatalf("quinn may delete: %v", err)
	}
	admin.waitFor(2*time.Minute, "web torn down by the holder", func(s *state.Snapshot) bool { return s.Instance(key) == nil })
}

// TestEngineCampaignsOnceLeaseGranted: a reconciling engine started before
// its Lease RBAC (the Deployment and its Role applied together, the Role a
// moment late) observes, saying why, and campaigns once the Role arrives:
// it takes the Lease and reconciles without a restart.
func TestEngineCampaignsOnceLeaseGranted(t *testing.T) {
	r := newEngRig(t)
	rgd := r.writeFile("rgd.yaml", graphs.Chain("englease", "EngLease"))
	// An admin engine installs the CRD, then stops: lee reconciles alone.
	first := r.start(func(o *engine.Options) { o.RGDPaths = []string{rgd} })
	gvr := first.graphServed("englease")
	if err := first.stop(); err != nil {
		t.Fatal(err)
	}
	all := []string{"*"}
	rules := []rbacv1.PolicyRule{
		{APIGroups: []string{gvr.Group}, Resources: []string{gvr.Resource, gvr.Resource + "/status"}, Verbs: all},
		{APIGroups: []string{""}, Resources: []string{"configmaps", "events"}, Verbs: all},
		{APIGroups: []string{"events.k8s.io"}, Resources: []string{"events"}, Verbs: all},
		{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"get", "list", "watch"}},
	}
	bindUser(t, r, "lee", rules)
	grantLeaseList(t, r, "lee") // to see whether another kroscope writes her namespace
	const leaseName = "kroscope-lee"
	lee := r.startAs("lee", func(o *engine.Options) {
		o.RGDPaths = []string{rgd}
		o.DisableLease = false
		o.LeaseNamespace, o.LeaseName, o.Identity = r.ns, leaseName, "lee-replica"
		o.AccessRecheck = time.Second
	})
	lee.graphServed("englease")
	r.createInstance(gvr, "EngLease", "web", nil)
	key := state.InstanceKey{Resource: gvr.Resource + "." + gvr.Group, Namespace: r.ns, Name: "web"}
	// Why: lee may neither create nor update the Lease; the note names
	// the verb the check asked last.
	lee.waitFor(time.Minute, "lee observing, saying why", func(s *state.Snapshot) bool {
		why := s.Capabilities.Lease
		named := why == "user lee may not create the lease "+r.ns+"/"+leaseName || why == "user lee may not update the lease "+r.ns+"/"+leaseName
		return !s.Mode.Reconciling && named && s.Instance(key) != nil
	})
	if n := lee.Writes(); n != 0 {
		t.Errorf("lee's engine, observing, wrote %d times", n)
	}

	withLease := slices.Clone(rules)
	withLease[len(withLease)-1].Verbs = all
	setRoleRules(t, r, "lee", withLease)
	r.waitLeaseHolder(leaseName, "lee-replica", time.Minute)
	snap := lee.waitFor(2*time.Minute, "lee reconciling web to ACTIVE", func(s *state.Snapshot) bool {
		in := s.Instance(key)
		return s.Mode.Reconciling && s.Capabilities.Lease == "" && in != nil && in.State == reconciler.InstanceStateActive
	})
	if n := logCount(snap, "lease access granted: campaigning"); n != 1 {
		t.Errorf("the grant should be logged once, got %d lines", n)
	}
}

// setRoleRules replaces the rules of the Role bindUser made for user.
func setRoleRules(t *testing.T, r *engRig, user string, rules []rbacv1.PolicyRule) {
	t.Helper()
	roles := r.env.Kubernetes().RbacV1().Roles(r.ns)
	role, err := roles.Get(context.Background(), user, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	role.Rules = rules
	if _, err := roles.Update(context.Background(), role, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}
