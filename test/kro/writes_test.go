package kro

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kroscope/kroscope/reconciler"
	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/test/envtest"
	"github.com/kroscope/kroscope/test/krocontroller"
)

// These tests pin down what kro v0.9.4 writes, as facts kroscope's own
// labels, conditions and detection are checked against. They need only kro,
// so they hold whatever kroscope does; a new kro version that changes any
// of it fails here first.

var (
	applySetID     = regexp.MustCompile(`^applyset-[A-Za-z0-9_-]{43}-v1$`)
	inventoryHash  = regexp.MustCompile(`^sha256:[A-Za-z0-9_-]{43}$`)
	revisionHash   = regexp.MustCompile(`^[0-9a-f]{16}$`)
	leaseHolder    = regexp.MustCompile(`^.+_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	kroVersion     = krocontroller.BinaryVersion()
	kroInstanceMgr = []string{"kro.run/labeller Apply", "kro.run/applyset-parent Apply", "kro Update status"}
)

// kroWaiting checks what kro writes on an instance that waits for a
// resource to become ready (nothing has faked Deployment or Job status yet).
func kroWaiting(t *testing.T, r *kroRig, exs []*example) {
	// Settled: every instance ACTIVE or waiting for readiness (an
	// instance may first wait a moment for a child's observed state, as
	// check-unknown-fields does for its custom resource).
	r.poll(2*time.Minute, "kro to settle every instance: ACTIVE or waiting for readiness", func() (bool, string) {
		var b strings.Builder
		ok := true
		for _, ex := range exs {
			u := r.get(ex.gvr, ex.ns, ex.instance)
			st := kroState(r, ex)
			msg := fmt.Sprint(envtest.Condition(u, "ResourcesReady")["message"])
			if st == "" || (st != reconciler.InstanceStateActive && !strings.HasSuffix(msg, "(waiting for readiness)")) {
				ok = false
				fmt.Fprintf(&b, "  %s: state %q, %s\n", ex.name, st, msg)
			}
		}
		return ok, b.String()
	})
	waiting := 0
	for _, ex := range exs {
		u := r.get(ex.gvr, ex.ns, ex.instance)
		st, _, _ := unstructured.NestedString(u.Object, "status", "state")
		if st == reconciler.InstanceStateActive {
			continue
		}
		waiting++
		rr, ready := envtest.Condition(u, "ResourcesReady"), envtest.Condition(u, "Ready")
		t.Logf("%s waits: state %s, ResourcesReady %v/%v %q", ex.name, st, rr["status"], rr["reason"], rr["message"])
		// kro v0.9.4 reports a readyWhen that is not yet true as a failed
		// apply: "resource reconciliation failed: apply results contain
		// errors: waiting for node "<id>": node "<id>": failed to evaluate
		// readyWhen expression: "<expr>" (waiting for readiness)".
		msg := fmt.Sprint(rr["message"])
		if st != reconciler.InstanceStateInProgress || rr["status"] != "False" || rr["reason"] != "NotReady" ||
			!strings.HasPrefix(msg, "resource reconciliation failed: apply results contain errors: waiting for node ") ||
			!strings.HasSuffix(msg, "(waiting for readiness)") {
			t.Errorf("%s: a waiting instance has state %q and ResourcesReady %v", ex.name, st, rr)
		}
		if ready["status"] != "False" || ready["reason"] != rr["reason"] || ready["message"] != rr["message"] {
			t.Errorf("%s: Ready does not copy the False ResourcesReady: %v", ex.name, ready)
		}
	}
	if waiting == 0 {
		t.Errorf("no instance waited for readiness")
	}
}

// kroWrites checks, on ACTIVE instances, their children, graphs, graph
// revisions, generated CRDs and kro's Lease, what kro v0.9.4 wrote.
func kroWrites(t *testing.T, r *kroRig, exs []*example) {
	for _, ex := range exs {
		t.Run(ex.name, func(t *testing.T) {
			rgd := r.get(graph.GroupVersionResource, "", ex.rgd.GetName())
			inst := r.get(ex.gvr, ex.ns, ex.instance)
			checkInstance(t, inst, rgd)
			checkChildren(t, r, ex, inst)
			checkGraph(t, rgd)
			checkRevision(t, r, rgd)
			wantLabels(t, "instance CRD", ex.crd.Labels, map[string]string{
				"kro.run/owned": "true", "kro.run/kro-version": kroVersion,
				"kro.run/resource-graph-definition-id":   string(rgd.GetUID()),
				"kro.run/resource-graph-definition-name": rgd.GetName(),
			})
			if got := managers(ex.crd.ManagedFields); !slices.Contains(got, "kro Update") {
				t.Errorf("instance CRD managers %v, want kro Update", got)
			}
		})
	}
	t.Run("Lease", func(t *testing.T) {
		l := r.get(gvrLease, r.ns, krocontroller.LeaderElectionID)
		if l == nil {
			t.Fatalf("no Lease %s/%s", r.ns, krocontroller.LeaderElectionID)
		}
		holder, _, _ := unstructured.NestedString(l.Object, "spec", "holderIdentity")
		dur, _, _ := unstructured.NestedInt64(l.Object, "spec", "leaseDurationSeconds")
		if !leaseHolder.MatchString(holder) || dur != 15 {
			t.Errorf("Lease holder %q duration %ds, want <hostname>_<uuid> and 15s", holder, dur)
		}
		// The manager is the binary's name ("controller", as in kro's image).
		t.Logf("kro's Lease %s/%s: holder %s, %ds, managers %v", r.ns, l.GetName(), holder, dur, managers(toManaged(l)))
	})
}

func checkInstance(t *testing.T, inst, rgd *unstructured.Unstructured) {
	t.Helper()
	wantLabels(t, "instance", inst.GetLabels(), map[string]string{
		"kro.run/owned": "true", "kro.run/kro-version": kroVersion,
		"kro.run/resource-graph-definition-id":   string(rgd.GetUID()),
		"kro.run/resource-graph-definition-name": rgd.GetName(),
		"applyset.kubernetes.io/id":              "~" + applySetID.String(),
	})
	ann := inst.GetAnnotations()
	wantAnn := map[string]string{
		"applyset.kubernetes.io/tooling":               "kro/" + kroVersion,
		"applyset.kubernetes.io/additional-namespaces": "",
		// Empty for a graph of no resources (kro's defaults example).
		"applyset.kubernetes.io/contains-group-kinds": "~^[A-Za-z.,0-9-]*$",
	}
	// The inventory hash (checked before an inventory-only deletion)
	// arrived after v0.9.3.
	if _, has := ann["internal.kro.run/applyset-inventory-hash"]; kroVersion == "v0.9.3" && has {
		t.Errorf("kro v0.9.3 wrote internal.kro.run/applyset-inventory-hash")
	} else if kroVersion != "v0.9.3" {
		wantAnn["internal.kro.run/applyset-inventory-hash"] = "~" + inventoryHash.String()
	}
	wantLabels(t, "instance annotations", ann, wantAnn)
	if got := inst.GetFinalizers(); !slices.Equal(got, []string{"kro.run/finalizer"}) {
		t.Errorf("instance finalizers %v, want [kro.run/finalizer]", got)
	}
	got := managers(toManaged(inst))
	for _, m := range kroInstanceMgr {
		if !slices.Contains(got, m) {
			t.Errorf("instance managers %v, want %s among them", got, m)
		}
	}
	wantConditions(t, "instance", inst, [][3]string{
		{"InstanceManaged", "Managed", "instance is properly managed with finalizers and labels"},
		{"GraphResolved", "Resolved", "runtime graph created and all resources resolved"},
		{"ResourcesReady", "AllResourcesReady", "all resources are created and ready"},
		{"Ready", "Ready", ""},
	})
	if st, _, _ := unstructured.NestedString(inst.Object, "status", "state"); st != "ACTIVE" {
		t.Errorf("instance state %q, want ACTIVE", st)
	}
	t.Logf("instance %s: labels %v annotations %v managers %v", inst.GetName(), inst.GetLabels(), ann, got)
}

// checkChildren finds the instance's children through kro's labels and
// checks each one's labels, annotations, manager and owner references.
func checkChildren(t *testing.T, r *kroRig, ex *example, inst *unstructured.Unstructured) {
	t.Helper()
	var want []string // none for a graph of no resources
	if gks := inst.GetAnnotations()["applyset.kubernetes.io/contains-group-kinds"]; gks != "" {
		want = strings.Split(gks, ",")
	}
	sort.Strings(want)
	sel := "kro.run/instance-id=" + string(inst.GetUID())
	var seen []string
	for _, gvr := range childResources(t, r, want) {
		list, err := r.dyn.Resource(gvr).Namespace(ex.ns).List(ctxT(t), metav1.ListOptions{LabelSelector: sel})
		if err != nil {
			t.Fatal(err)
		}
		for i := range list.Items {
			c := &list.Items[i]
			gk := c.GroupVersionKind().GroupKind()
			seen = append(seen, strings.TrimSuffix(gk.Kind+"."+gk.Group, "."))
			gv, _ := schema.ParseGroupVersion(inst.GetAPIVersion())
			wantLabels(t, c.GetKind()+" "+c.GetName(), c.GetLabels(), map[string]string{
				"kro.run/owned": "true", "kro.run/kro-version": kroVersion,
				"app.kubernetes.io/managed-by":   "kro",
				"kro.run/instance-id":            string(inst.GetUID()),
				"kro.run/instance-name":          inst.GetName(),
				"kro.run/instance-namespace":     inst.GetNamespace(),
				"kro.run/instance-group":         gv.Group,
				"kro.run/instance-version":       gv.Version,
				"kro.run/instance-kind":          inst.GetKind(),
				"kro.run/node-id":                "~^[a-z][a-zA-Z0-9]*$",
				"applyset.kubernetes.io/part-of": inst.GetLabels()["applyset.kubernetes.io/id"],
			})
			if _, ok := c.GetLabels()["kro.run/resource-graph-definition-id"]; ok {
				t.Errorf("%s %s: kro v0.9.4 no longer labels children with the graph id", c.GetKind(), c.GetName())
			}
			// The deletion-wave annotation arrived after v0.9.3.
			if _, has := c.GetAnnotations()["internal.kro.run/apply-order"]; kroVersion == "v0.9.3" && has {
				t.Errorf("%s %s: kro v0.9.3 wrote internal.kro.run/apply-order", c.GetKind(), c.GetName())
			} else if kroVersion != "v0.9.3" {
				wantLabels(t, c.GetKind()+" "+c.GetName()+" annotations", c.GetAnnotations(), map[string]string{
					"internal.kro.run/apply-order": "~^[0-9]+$",
				})
			}
			if m := managers(toManaged(c)); !slices.Contains(m, "kro.run/applyset Apply") {
				t.Errorf("%s %s managers %v, want kro.run/applyset Apply", c.GetKind(), c.GetName(), m)
			}
			if refs := c.GetOwnerReferences(); len(refs) != 0 {
				t.Errorf("%s %s has owner references %v: kro sets none", c.GetKind(), c.GetName(), refs)
			}
		}
	}
	sort.Strings(seen)
	seen = slices.Compact(seen)
	if !slices.Equal(seen, want) {
		t.Errorf("children by kind %v, inventory annotation lists %v", seen, want)
	}
}

// childResources are the resources to list an instance's children in: the
// kinds its inventory annotation names, and the usual kinds of kro's
// examples (so a child the annotation leaves out is still found).
func childResources(t *testing.T, r *kroRig, groupKinds []string) []schema.GroupVersionResource {
	t.Helper()
	out := []schema.GroupVersionResource{
		gvrDeployment, gvrJob, {Version: "v1", Resource: "services"}, {Version: "v1", Resource: "configmaps"},
		{Group: "networking.k8s.io", Version: "v1", Resource: "ingresses"},
		{Group: "autoscaling", Version: "v2", Resource: "horizontalpodautoscalers"},
	}
	mapper := r.env.Clients(t).RESTMapper()
	for _, gk := range groupKinds {
		m, err := mapper.RESTMapping(schema.ParseGroupKind(gk))
		if err != nil {
			t.Fatalf("inventory kind %s: %v", gk, err)
		}
		if !slices.Contains(out, m.Resource) {
			out = append(out, m.Resource)
		}
	}
	return out
}

func checkGraph(t *testing.T, rgd *unstructured.Unstructured) {
	t.Helper()
	if got := rgd.GetFinalizers(); !slices.Equal(got, []string{"kro.run/finalizer"}) {
		t.Errorf("graph finalizers %v", got)
	}
	if st, _, _ := unstructured.NestedString(rgd.Object, "status", "state"); st != "Active" {
		t.Errorf("graph state %q, want Active", st)
	}
	if rev, _, _ := unstructured.NestedInt64(rgd.Object, "status", "lastIssuedRevision"); rev != 1 {
		t.Errorf("graph lastIssuedRevision %d, want 1", rev)
	}
	kind, _, _ := unstructured.NestedString(rgd.Object, "spec", "schema", "kind")
	// kro orders an RGD's conditions by which its reconciles set first,
	// which varies from run to run (GraphRevisionsResolved may come before
	// GraphAccepted): the set is the fact, not the order.
	wantConditionsAnyOrder(t, "graph", rgd, [][3]string{
		{"GraphAccepted", "Valid", "resource graph and schema are valid"},
		{"GraphRevisionsResolved", "Resolved", "revision 1 compiled and active"},
		{"KindReady", "Ready", "kind " + kind + " has been accepted and ready"},
		{"ControllerReady", "Running", "controller is running"},
		{"Ready", "Ready", ""},
	})
	order, _, _ := unstructured.NestedStringSlice(rgd.Object, "status", "topologicalOrder")
	ids := resourceIDs(rgd)
	if !sameSet(order, ids) {
		t.Errorf("graph topologicalOrder %v, resources %v", order, ids)
	}
	// status.resources lists only resources that have dependencies.
	res, _, _ := unstructured.NestedSlice(rgd.Object, "status", "resources")
	for _, x := range res {
		m, _ := x.(map[string]any)
		deps, _ := m["dependencies"].([]any)
		if len(deps) == 0 {
			t.Errorf("graph status.resources lists %v without dependencies", m["id"])
		}
	}
	t.Logf("graph %s: topologicalOrder %v resources %v managers %v", rgd.GetName(), order, res, managers(toManaged(rgd)))
}

func checkRevision(t *testing.T, r *kroRig, rgd *unstructured.Unstructured) {
	t.Helper()
	name := rgd.GetName() + "-r00001"
	rev := r.get(gvrGraphRev, "", name)
	if rev == nil {
		t.Fatalf("no GraphRevision %s", name)
	}
	wantLabels(t, "GraphRevision", rev.GetLabels(), map[string]string{
		"kro.run/owned": "true", "kro.run/kro-version": kroVersion,
		"kro.run/resource-graph-definition-name": rgd.GetName(),
		"kro.run/graph-revision-hash":            "~" + revisionHash.String(),
	})
	refs := rev.GetOwnerReferences()
	if len(refs) != 1 || refs[0].UID != rgd.GetUID() || refs[0].Controller == nil || !*refs[0].Controller {
		t.Errorf("GraphRevision owner references %v, want the graph as controller", refs)
	}
	if got := rev.GetFinalizers(); !slices.Equal(got, []string{"kro.run/finalizer"}) {
		t.Errorf("GraphRevision finalizers %v", got)
	}
	if n, _, _ := unstructured.NestedInt64(rev.Object, "spec", "revision"); n != 1 {
		t.Errorf("GraphRevision spec.revision %d", n)
	}
	if sn, _, _ := unstructured.NestedString(rev.Object, "spec", "snapshot", "name"); sn != rgd.GetName() {
		t.Errorf("GraphRevision spec.snapshot.name %q", sn)
	}
	wantConditions(t, "GraphRevision", rev, [][3]string{
		{"GraphVerified", "Verified", "graph revision compiled and verified"},
		{"Ready", "Ready", ""},
	})
}

// wantLabels checks each key; a value starting with "~" is a regexp.
func wantLabels(t *testing.T, what string, got map[string]string, want map[string]string) {
	t.Helper()
	for k, w := range want {
		v, ok := got[k]
		switch {
		case !ok:
			t.Errorf("%s: no %s (have %v)", what, k, got)
		case strings.HasPrefix(w, "~"):
			if !regexp.MustCompile(w[1:]).MatchString(v) {
				t.Errorf("%s: %s=%q, want it to match %s", what, k, v, w[1:])
			}
		case v != w:
			t.Errorf("%s: %s=%q, want %q", what, k, v, w)
		}
	}
}

// wantConditionsAnyOrder is wantConditions for conditions whose order is
// not stable.
func wantConditionsAnyOrder(t *testing.T, what string, u *unstructured.Unstructured, want [][3]string) {
	t.Helper()
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	sorted := u.DeepCopy()
	byType := func(a, b any) int {
		return strings.Compare(fmt.Sprint(a.(map[string]any)["type"]), fmt.Sprint(b.(map[string]any)["type"]))
	}
	slices.SortStableFunc(conds, byType)
	if err := unstructured.SetNestedSlice(sorted.Object, conds, "status", "conditions"); err != nil {
		t.Fatal(err)
	}
	want = slices.Clone(want)
	slices.SortStableFunc(want, func(a, b [3]string) int { return strings.Compare(a[0], b[0]) })
	wantConditions(t, what, sorted, want)
}

// wantConditions checks the status conditions, in order, as type, reason
// and message, every one True.
func wantConditions(t *testing.T, what string, u *unstructured.Unstructured, want [][3]string) {
	t.Helper()
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	var got [][3]string
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["status"] != "True" {
			t.Errorf("%s: condition %v is %v", what, m["type"], m["status"])
		}
		if og, _ := m["observedGeneration"].(int64); og != u.GetGeneration() {
			t.Errorf("%s: condition %v observedGeneration %v, generation %d", what, m["type"], m["observedGeneration"], u.GetGeneration())
		}
		got = append(got, [3]string{fmt.Sprint(m["type"]), fmt.Sprint(m["reason"]), fmt.Sprint(m["message"])})
	}
	if !slices.Equal(got, want) {
		t.Errorf("%s conditions (type, reason, message):\n got %q\nwant %q", what, got, want)
	}
}

// managers renders managedFields as "manager operation[ subresource]".
func managers(mf []metav1.ManagedFieldsEntry) []string {
	var out []string
	for _, m := range mf {
		s := m.Manager + " " + string(m.Operation)
		if m.Subresource != "" {
			s += " " + m.Subresource
		}
		out = append(out, s)
	}
	return out
}

func toManaged(u *unstructured.Unstructured) []metav1.ManagedFieldsEntry { return u.GetManagedFields() }

func resourceIDs(rgd *unstructured.Unstructured) []string {
	res, _, _ := unstructured.NestedSlice(rgd.Object, "spec", "resources")
	var ids []string
	for _, x := range res {
		if m, ok := x.(map[string]any); ok {
			ids = append(ids, fmt.Sprint(m["id"]))
		}
	}
	return ids
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}
