package kro

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kroscope/kroscope/engine"
	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/reconciler"
	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/reconciler/metadata"
	"github.com/kroscope/kroscope/test/engrun"
	"github.com/kroscope/kroscope/test/envtest"
	"github.com/kroscope/kroscope/test/graphs"
	"github.com/kroscope/kroscope/test/krocontroller"
)

// takeoverGraph has dependencies several layers deep, a Deployment whose
// status the rig fakes (readyWhen on it), a Secret, a ConfigMap that reads
// the Deployment's status, and a forEach collection.
func takeoverGraph(name, kind string) string {
	return graphs.RGD(name, kind, `spec:
  greeting: string | default=hello
  extras: "[]string | required=true"
status:
  available: ${deploy.status.availableReplicas}`,
		graphs.ConfigMap("config", "${schema.metadata.name}-config", "greeting: ${schema.spec.greeting}"),
		graphs.Template("secret", "v1", "Secret", "name: ${config.metadata.name}-secret", "type: Opaque\ndata:\n  token: dG9rZW4="),
		graphs.Deployment("deploy", "${schema.metadata.name}-app", `image: registry.k8s.io/pause:3.10
envFrom:
- configMapRef:
    name: ${config.metadata.name}
- secretRef:
    name: ${secret.metadata.name}`, "readyWhen:\n- ${deploy.status.availableReplicas == 1}"),
		graphs.ConfigMap("summary", "${schema.metadata.name}-summary", "available: ${string(deploy.status.availableReplicas)}"),
		graphs.ConfigMap("extras", "${config.metadata.name}-${suffix}", "from: ${config.metadata.name}", "forEach:\n- suffix: ${schema.spec.extras}"))
}

// takeoverChildren is every resource the graph above makes per instance.
var takeoverChildren = []schema.GroupVersionResource{
	{Version: "v1", Resource: "configmaps"}, {Version: "v1", Resource: "secrets"}, gvrDeployment,
}

const takeoverChildCount = 6 // config, secret, deploy, summary, two extras

// child is what the takeover tests record of one child object.
type child struct {
	key        string // Kind/name
	uid        string
	rv         int64 // resourceVersion of its DELETED event
	node       string
	applyOrder string
	managedBy  string
}

// newKroRigStopped is newKroRig with kro's controller prepared but not
// started, for a test that lets kroscope write first.
func newKroRigStopped(t *testing.T) *kroRig {
	t.Helper()
	r := newKroRigWithout(t)
	r.kro = krocontroller.New(t, r.env.Config, krocontroller.Options{LeaderElectionNamespace: r.ns})
	return r
}

// createTakeoverInstance creates an instance of the takeover graph with two
// forEach items; it is deleted at cleanup (if still there).
func (r *kroRig) createTakeoverInstance(gvr schema.GroupVersionResource, kind, name string) {
	r.t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": gvr.GroupVersion().String(), "kind": kind,
		"metadata": map[string]any{"name": name, "namespace": r.ns},
		"spec":     map[string]any{"extras": []any{"x", "y"}},
	}}
	if _, err := r.dyn.Resource(gvr).Namespace(r.ns).Create(ctxT(r.t), u, metav1.CreateOptions{}); err != nil {
		r.t.Fatalf("creating %s %s: %v", kind, name, err)
	}
	r.t.Cleanup(func() { r.deleteAndWait(gvr, r.ns, name, r.ns) })
}

// children lists the objects labelled as the instance's children.
func (r *kroRig) children(instUID string) map[string]child {
	r.t.Helper()
	out := map[string]child{}
	for _, gvr := range takeoverChildren {
		list, err := r.dyn.Resource(gvr).Namespace(r.ns).List(ctxT(r.t), metav1.ListOptions{LabelSelector: metadata.InstanceIDLabel + "=" + instUID})
		if err != nil {
			r.t.Fatal(err)
		}
		for _, o := range list.Items {
			c := child{
				key: o.GetKind() + "/" + o.GetName(), uid: string(o.GetUID()),
				node: o.GetLabels()[metadata.NodeIDLabel], applyOrder: o.GetAnnotations()[metadata.ApplyOrderAnnotation],
				managedBy: o.GetLabels()[metadata.ManagedByLabel],
			}
			out[c.key] = c
		}
	}
	return out
}

// waitActiveFaking waits until the named instances' status.state is ACTIVE,
// faking Deployment status meanwhile; done, when set, adds a condition.
func (r *kroRig) waitActiveFaking(gvr schema.GroupVersionResource, what string, names []string, done func(*unstructured.Unstructured) (bool, string)) map[string]*unstructured.Unstructured {
	r.t.Helper()
	out := map[string]*unstructured.Unstructured{}
	r.poll(2*time.Minute, what, func() (bool, string) {
		r.fakeControllers(r.ns)
		var b strings.Builder
		ok := true
		for _, n := range names {
			u := r.get(gvr, r.ns, n)
			out[n] = u
			st := ""
			if u != nil {
				st, _, _ = unstructured.NestedString(u.Object, "status", "state")
			}
			if st != reconciler.InstanceStateActive {
				ok = false
				fmt.Fprintf(&b, "  %s: state %q ResourcesReady %v\n", n, st, envtest.Condition(u, "ResourcesReady"))
				continue
			}
			if done != nil {
				if yes, why := done(u); !yes {
					ok = false
					fmt.Fprintf(&b, "  %s: %s\n", n, why)
				}
			}
		}
		return ok, b.String()
	})
	return out
}

// statusWriter is the manager of the newest managedFields entry on the
// status subresource.
func statusWriter(u *unstructured.Unstructured) string {
	var last metav1.ManagedFieldsEntry
	for _, f := range u.GetManagedFields() {
		if f.Subresource != "status" || f.Time == nil {
			continue
		}
		if last.Time == nil || !f.Time.Before(last.Time) {
			last = f
		}
	}
	return last.Manager
}

// deletions records the order in which objects of the takeover kinds in
// the namespace are deleted. Each kind has its own watch, so events of
// different kinds arrive in no particular order; the resourceVersion of a
// DELETED event is the etcd revision of the deletion (one etcd behind the
// test server), which orders them.
type deletions struct {
	mu    sync.Mutex
	order []child
	stop  func()
}

func (r *kroRig) watchDeletions(instUID string) *deletions {
	r.t.Helper()
	d := &deletions{}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, gvr := range takeoverChildren {
		w, err := r.dyn.Resource(gvr).Namespace(r.ns).Watch(ctx, metav1.ListOptions{LabelSelector: metadata.InstanceIDLabel + "=" + instUID})
		if err != nil {
			r.t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer w.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case ev, ok := <-w.ResultChan():
					if !ok {
						return
					}
					o, isObj := ev.Object.(*unstructured.Unstructured)
					if ev.Type != watch.Deleted || !isObj {
						continue
					}
					d.mu.Lock()
					rv, _ := strconv.ParseInt(o.GetResourceVersion(), 10, 64)
					d.order = append(d.order, child{key: o.GetKind() + "/" + o.GetName(), uid: string(o.GetUID()), rv: rv,
						node: o.GetLabels()[metadata.NodeIDLabel], applyOrder: o.GetAnnotations()[metadata.ApplyOrderAnnotation]})
					d.mu.Unlock()
				}
			}
		}()
	}
	d.stop = func() { cancel(); wg.Wait() }
	r.t.Cleanup(d.stop)
	return d
}

// checkReverseOrder checks that every child was deleted, each one in a
// wave no later than the one before it (highest apply-order first), and
// returns the order as "node(order)".
func (d *deletions) checkReverseOrder(t *testing.T, want map[string]child) string {
	t.Helper()
	d.mu.Lock()
	defer d.mu.Unlock()
	sort.SliceStable(d.order, func(i, j int) bool { return d.order[i].rv < d.order[j].rv })
	var seq []string
	prev := int64(1 << 62)
	got := map[string]bool{}
	for _, c := range d.order {
		got[c.key] = true
		seq = append(seq, c.node+"("+c.applyOrder+")")
		n, err := strconv.ParseInt(c.applyOrder, 10, 64)
		if err != nil {
			t.Errorf("deleted %s has apply-order %q", c.key, c.applyOrder)
			continue
		}
		if n > prev {
			t.Errorf("%s (apply-order %d) deleted after a resource of apply-order %d: not in reverse order", c.key, n, prev)
		}
		prev = n
	}
	for k, c := range want {
		if !got[k] {
			t.Errorf("child %s (%s) was never deleted", k, c.node)
		}
	}
	return strings.Join(seq, " ")
}

func sortedKeys(m map[string]child) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// sameChildren compares two recordings of an instance's children by key
// and UID.
func sameChildren(t *testing.T, what string, before, after map[string]child) {
	t.Helper()
	if !slices.Equal(sortedKeys(before), sortedKeys(after)) {
		t.Errorf("%s: children %v, before %v", what, sortedKeys(after), sortedKeys(before))
	}
	for k, b := range before {
		if a, ok := after[k]; ok && a.uid != b.uid {
			t.Errorf("%s: %s was re-created (UID %s, was %s)", what, k, a.uid, b.uid)
		}
	}
}

// takeoverEngine starts kroscope as `kroscope --take-over` runs: cluster
// graphs, its Lease on, kro detection polling quickly.
func (r *kroRig) takeoverEngine(takeOver bool, identity string) *engrun.Run {
	r.t.Helper()
	return r.startEngine(func(o *engine.Options) {
		o.WatchClusterRGDs = true
		o.DisableLease = false
		o.LeaseNamespace = r.ns
		o.LeaseName = "kroscope-" + identity
		o.Identity = identity
		o.TakeOver = takeOver
		o.KroPollInterval = 300 * time.Millisecond
	})
}

// instanceHistory renders an instance's state transitions.
func instanceHistory(in *state.Instance) string {
	var parts []string
	for _, h := range in.History {
		parts = append(parts, h.From+"→"+h.To+" "+h.Message)
	}
	return strings.Join(parts, "; ")
}

// TestTakeOverFromKro: kro's real controller makes two instances of a
// graph of several dependent resources (a Deployment, a Secret, a forEach
// collection) ACTIVE. kroscope --take-over started while kro still runs
// makes no write. kro stopped, kroscope --take-over reconciles: every
// instance reaches ACTIVE with every child adopted (same UIDs, no ERROR,
// no conflict), kroscope's labels now on the children, the RGD status
// written by kroscope; deleting one instance deletes its children in
// reverse apply order and removes the finalizer, and leaves the other
// instance's children alone. A kroscope restarted after the takeover
// serves the graph over kro's instance CRD (the graph has a required
// field, so a CRD requiring spec would be a breaking change to it).
func TestTakeOverFromKro(t *testing.T) {
	r := newKroRig(t)
	rgd := r.storeGraphYAML(takeoverGraph("krotakeover", "KroTakeover"))
	live := r.waitGraphs([]string{rgd.GetName()}, nil)[rgd.GetName()]
	crd := r.instanceCRD(live)
	gvr := schema.GroupVersionResource{Group: crd.Spec.Group, Version: crd.Spec.Versions[0].Name, Resource: crd.Spec.Names.Plural}
	res := gvr.Resource + "." + gvr.Group
	names := []string{"one", "two"}
	for _, n := range names {
		r.createTakeoverInstance(gvr, "KroTakeover", n)
	}
	start := time.Now()
	kroMade := r.waitActiveFaking(gvr, "kro to make the instances ACTIVE", names, nil)
	t.Logf("kro made %d instances ACTIVE in %s", len(names), time.Since(start).Round(time.Millisecond))
	before := map[string]map[string]child{}
	for _, n := range names {
		before[n] = r.children(string(kroMade[n].GetUID()))
		if len(before[n]) != takeoverChildCount {
			t.Fatalf("kro made %d children for %s, want %d: %v", len(before[n]), n, takeoverChildCount, sortedKeys(before[n]))
		}
		for k, c := range before[n] {
			if c.managedBy != metadata.KroManagedByValue {
				t.Fatalf("%s: %s managed-by %q before the takeover: the test proves nothing", n, k, c.managedBy)
			}
		}
	}

	// --take-over does not override a kro that is still running.
	t.Run("KroStillRunning", func(t *testing.T) {
		run := r.with(t).takeoverEngine(true, "kroscope-early")
		snap := run.Until(time.Minute, "kroscope to see kro", func(s *state.Snapshot) (bool, string) { return s.Mode.Kro != "", engrun.Describe(s) })
		time.Sleep(2 * time.Second)
		if n := run.Writes(); n != 0 || snap.Mode.Reconciling {
			t.Errorf("kroscope --take-over beside a running kro: mode %+v, %d writes %v", snap.Mode, n, run.FirstWrites())
		}
		_ = run.Stop()
	})

	stopped := time.Now()
	r.kro.Stop()
	// Cleanups run last first: kroscope stops, then kro comes back to
	// delete what is left (instance two, the graph) and remove its
	// finalizers.
	t.Cleanup(r.kro.Start)
	t.Logf("kro stopped in %s", time.Since(stopped).Round(time.Millisecond))
	run := r.takeoverEngine(true, "kroscope-takeover")
	start = time.Now()
	run.Until(2*time.Minute, "kroscope to reconcile and show every instance ACTIVE", func(s *state.Snapshot) (bool, string) {
		if !s.Mode.Reconciling {
			return false, engrun.Describe(s)
		}
		for _, n := range names {
			in := s.Instance(state.InstanceKey{Resource: res, Namespace: r.ns, Name: n})
			if in == nil || in.State != reconciler.InstanceStateActive {
				return false, engrun.Describe(s)
			}
		}
		return true, ""
	})
	reconciling := time.Since(start)
	// kro left the instances ACTIVE with the status kroscope would write
	// (parity): adopting them writes no status, and no instance goes
	// through IN_PROGRESS (#40).
	mine := r.waitActiveFaking(gvr, "the instances ACTIVE under kroscope", names, func(u *unstructured.Unstructured) (bool, string) {
		for k, c := range r.children(string(u.GetUID())) {
			if c.managedBy != metadata.ManagedByValue {
				return false, k + " not yet adopted"
			}
		}
		return true, ""
	})
	// Each child once; the instance twice: kroscope's labels before the
	// layers run, its pruned-graph mark after the prune check.
	for path, n := range countWrites(run) {
		want := 1
		if strings.Contains(path, "/"+gvr.Resource+"/") && !strings.HasSuffix(path, "/status") {
			want = 2
		}
		if n > want && !strings.Contains(path, "/leases/") {
			t.Errorf("adopting wrote %s %d times; want %d", path, n, want)
		}
	}
	t.Logf("kroscope reconciling %s after kro stopped; instances ACTIVE by kroscope after %s", reconciling.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	// The snapshot after kroscope's own ACTIVE reached the cluster (the
	// first one may still show what kroscope observed while kro ran).
	snap := run.E.Snapshot()
	for _, n := range names {
		in := snap.Instance(state.InstanceKey{Resource: res, Namespace: r.ns, Name: n})
		h := instanceHistory(in)
		if strings.Contains(h, reconciler.InstanceStateError) || strings.Contains(strings.ToLower(h), "conflict") {
			t.Errorf("%s went through an error on the way: %s", n, h)
		}
		if strings.Contains(h, reconciler.InstanceStateInProgress) {
			t.Errorf("%s flapped while kroscope adopted it: %s", n, h)
		}
		for _, rs := range in.Resources {
			if rs.Err != "" {
				t.Errorf("%s: resource %s: %s", n, rs.ID, rs.Err)
			}
		}
		if mine[n].GetUID() != kroMade[n].GetUID() {
			t.Errorf("instance %s was re-created", n)
		}
		after := r.children(string(mine[n].GetUID()))
		sameChildren(t, n, before[n], after)
		for k, c := range after {
			if c.managedBy != metadata.ManagedByValue {
				t.Errorf("%s: %s managed-by %q after the takeover, want %q", n, k, c.managedBy, metadata.ManagedByValue)
			}
		}
		if f := mine[n].GetFinalizers(); !slices.Equal(f, []string{metadata.Finalizer}) {
			t.Errorf("%s: finalizers %v", n, f)
		}
	}
	for _, l := range run.E.Snapshot().Logs {
		if strings.Contains(strings.ToLower(l.Message+fmt.Sprint(l.KV)), "conflict") {
			t.Errorf("kroscope logged a conflict: %s %v", l.Message, l.KV)
		}
	}
	r.poll(time.Minute, "kroscope to write the RGD status", func() (bool, string) {
		u := r.get(graph.GroupVersionResource, "", rgd.GetName())
		m := envtest.Condition(u, "GraphRevisionsResolved")
		st, _, _ := unstructured.NestedString(u.Object, "status", "state")
		return st == "Active" && m != nil && strings.Contains(fmt.Sprint(m["message"]), "kroscope") && statusWriter(u) == metadata.FieldManager,
			fmt.Sprintf("state %q GraphRevisionsResolved %v, status written by %s", st, m, statusWriter(u))
	})

	// Deleting one instance: its children go in reverse order, then it does.
	one := mine["one"]
	del := r.watchDeletions(string(one.GetUID()))
	start = time.Now()
	r.deleteAndWait(gvr, r.ns, "one", r.ns)
	t.Logf("instance one and its children deleted in %s", time.Since(start).Round(time.Millisecond))
	if left := r.children(string(one.GetUID())); len(left) != 0 {
		t.Errorf("children of the deleted instance left: %v", sortedKeys(left))
	}
	time.Sleep(500 * time.Millisecond) // the last DELETED events
	del.stop()
	t.Logf("deletion order: %s", del.checkReverseOrder(t, before["one"]))
	sameChildren(t, "two after one was deleted", before["two"], r.children(string(mine["two"].GetUID())))
	if u := r.get(gvr, r.ns, "two"); u == nil || u.GetDeletionTimestamp() != nil {
		t.Errorf("instance two was deleted too")
	}
	t.Logf("kroscope: %d requests, %d writes", run.Requests(), run.Writes())

	// kroscope restarted (a new Pod), kro still gone: it now applies its
	// instance CRD over kro's at once, and must find nothing breaking in
	// it. The graph has a required field: a CRD that required spec where
	// kro's does not was refused here ("spec: newly required") and the
	// graph left unserved.
	_ = run.Stop()
	again := r.takeoverEngine(true, "kroscope-restarted")
	again.Until(2*time.Minute, "the restarted kroscope to serve the graph and show instance two ACTIVE", func(s *state.Snapshot) (bool, string) {
		in := s.Instance(state.InstanceKey{Resource: res, Namespace: r.ns, Name: "two"})
		return s.Mode.Reconciling && in != nil && in.State == reconciler.InstanceStateActive, engrun.Describe(s)
	})
	for _, g := range again.E.Snapshot().Graphs {
		if g.Err != "" {
			t.Errorf("graph %s after the restart: %s", g.Name, g.Err)
		}
	}
	// That start adopted the CRD (kroscope's labels and hash: its one
	// write); one more start writes nothing but its Lease (#40).
	time.Sleep(3 * time.Second)
	if w := nonLeaseWrites(again); len(w) != 1 || !strings.Contains(w[0], "/customresourcedefinitions/") {
		t.Errorf("the restarted kroscope wrote %v; want the instance CRD, once", w)
	}
	_ = again.Stop()
	third := r.takeoverEngine(true, "kroscope-third")
	third.Until(2*time.Minute, "the third kroscope to verify instance two", func(s *state.Snapshot) (bool, string) {
		in := s.Instance(state.InstanceKey{Resource: res, Namespace: r.ns, Name: "two"})
		return s.Mode.Reconciling && in != nil && in.Reconciles >= 1 && in.State == reconciler.InstanceStateActive, engrun.Describe(s)
	})
	time.Sleep(3 * time.Second)
	if w := nonLeaseWrites(third); len(w) != 0 {
		t.Errorf("a kroscope started over converged instances wrote %v", w)
	}
}

// TestKroTakesOverFromKroscope: kroscope (no kro running) serves a graph
// stored through kro's CRD and makes two instances ACTIVE; kroscope
// stopped, kro's real controller started: kro adopts every child (same
// UIDs, managed-by=kro), writes ACTIVE with no ApplySet conflict, and
// deleting an instance through kro deletes its children and removes the
// finalizer.
func TestKroTakesOverFromKroscope(t *testing.T) {
	r := newKroRigStopped(t)
	rgd := r.storeGraphYAML(takeoverGraph("kroscopetakeover", "KroscopeTakeover"))
	run := r.takeoverEngine(false, "kroscope-first")
	var gvr schema.GroupVersionResource
	// The test API server is shared: a kro Lease that an earlier test's kro
	// left behind (kro does not release it on SIGTERM) holds kroscope back
	// until it expires, as on a real cluster.
	start := time.Now()
	run.Until(2*time.Minute, "kroscope to reconcile and serve the cluster graph", func(s *state.Snapshot) (bool, string) {
		g := graphNamed(s, rgd.GetName())
		return g != nil && g.Served && s.Mode.Reconciling, engrun.Describe(s)
	})
	t.Logf("kroscope reconciling and serving the graph after %s", time.Since(start).Round(time.Millisecond))
	gvr = schema.GroupVersionResource{Group: graph.Group, Version: "v1alpha1", Resource: "kroscopetakeovers"}
	names := []string{"one", "two"}
	for _, n := range names {
		r.createTakeoverInstance(gvr, "KroscopeTakeover", n)
	}
	start = time.Now()
	mine := r.waitActiveFaking(gvr, "kroscope to make the instances ACTIVE", names, nil)
	t.Logf("kroscope made %d instances ACTIVE in %s", len(names), time.Since(start).Round(time.Millisecond))
	before := map[string]map[string]child{}
	for _, n := range names {
		before[n] = r.children(string(mine[n].GetUID()))
		if len(before[n]) != takeoverChildCount {
			t.Fatalf("kroscope made %d children for %s, want %d: %v", len(before[n]), n, takeoverChildCount, sortedKeys(before[n]))
		}
	}
	_ = run.Stop()

	r.kro.Start()
	start = time.Now()
	kroMade := r.waitActiveFaking(gvr, "kro to adopt the instances and write ACTIVE", names, func(u *unstructured.Unstructured) (bool, string) {
		w := statusWriter(u)
		return w == "kro", "status last written by " + w
	})
	t.Logf("kro wrote ACTIVE on kroscope's instances %s after it started", time.Since(start).Round(time.Millisecond))
	// Let kro settle: a second pass must not change its mind.
	time.Sleep(3 * time.Second)
	for _, n := range names {
		u := r.get(gvr, r.ns, n)
		if u.GetUID() != mine[n].GetUID() {
			t.Errorf("instance %s was re-created", n)
		}
		if st, _, _ := unstructured.NestedString(u.Object, "status", "state"); st != reconciler.InstanceStateActive {
			t.Errorf("%s: kro's state %q after settling", n, st)
		}
		for _, typ := range []string{"InstanceManaged", "GraphResolved", "ResourcesReady", "Ready"} {
			c := envtest.Condition(u, typ)
			if c["status"] != "True" {
				t.Errorf("%s: kro's %s condition %v", n, typ, c)
			}
			if msg := strings.ToLower(fmt.Sprint(c["message"])); strings.Contains(msg, "applyset") || strings.Contains(msg, "conflict") {
				t.Errorf("%s: kro's %s condition %v", n, typ, c)
			}
		}
		after := r.children(string(u.GetUID()))
		sameChildren(t, n, before[n], after)
		for k, c := range after {
			if c.managedBy != metadata.KroManagedByValue {
				t.Errorf("%s: %s managed-by %q after kro took over", n, k, c.managedBy)
			}
		}
		kroMade[n] = u
	}
	for _, l := range r.kro.Logs() {
		if strings.Contains(strings.ToLower(l), "applyset") && strings.Contains(strings.ToLower(l), "error") {
			t.Errorf("kro logged: %s", l)
		}
	}

	one := kroMade["one"]
	del := r.watchDeletions(string(one.GetUID()))
	start = time.Now()
	r.deleteAndWait(gvr, r.ns, "one", r.ns)
	t.Logf("kro deleted instance one and its children in %s", time.Since(start).Round(time.Millisecond))
	if left := r.children(string(one.GetUID())); len(left) != 0 {
		t.Errorf("children of the deleted instance left: %v", sortedKeys(left))
	}
	time.Sleep(500 * time.Millisecond)
	del.stop()
	t.Logf("kro's deletion order: %s", del.checkReverseOrder(t, before["one"]))
	sameChildren(t, "two after one was deleted", before["two"], r.children(string(kroMade["two"].GetUID())))
}

// countWrites counts run's writes by "METHOD path" (Events aside).
func countWrites(run *engrun.Run) map[string]int {
	out := map[string]int{}
	for _, w := range run.WritesBy()[""] {
		out[w]++
	}
	return out
}

// nonLeaseWrites lists run's writes other than its Lease's (Events aside).
func nonLeaseWrites(run *engrun.Run) []string {
	var out []string
	for _, w := range run.WritesBy()[""] {
		if !strings.Contains(w, "/leases") {
			out = append(out, w)
		}
	}
	return out
}
