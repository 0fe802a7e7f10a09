package kro

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/kroscope/kroscope/engine"
	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/reconciler"
	"github.com/kroscope/kroscope/reconciler/client"
	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/reconciler/metadata"
	"github.com/kroscope/kroscope/test/engrun"
	"github.com/kroscope/kroscope/test/krocontroller"
	"github.com/kroscope/kroscope/test/kroexamples"
)

// kroRejects are the example graphs of the kro module that its own
// controller rejects, by example name, with the text its GraphAccepted=False
// message contains: they are left out of the parity checks, and kroscope,
// observing, must show kro's reason. None at v0.9.4 (the shared copy of
// check-validation-markers it once rejected is older than the module's).
var kroRejects = map[string]string{}

// firstLine is msg up to its first newline, at most 80 bytes: enough of
// kro's message to find it again in what kroscope shows.
func firstLine(msg string) string {
	msg, _, _ = strings.Cut(msg, "\n")
	if len(msg) > 80 {
		msg = msg[:80]
	}
	return msg
}

// example is one kro example graph stored in the cluster, with its instance.
type example struct {
	name     string // folder
	dir      string
	rgd      *unstructured.Unstructured // as kro last wrote it
	crd      *apiextensionsv1.CustomResourceDefinition
	gvr      schema.GroupVersionResource
	ns       string // the instance's namespace
	instance string // the instance's name
	// kind, when set, replaces the instance file's kind (see uniqueGraph).
	kind string
}

// uniqueGraph renames a graph whose name or kind an earlier example took
// (kro's cel-functions and defaults examples are both somethings.kro.run,
// kind Something; one cluster holds one of each): name and kind get the
// example's name. It returns the graph and the kind its instances need
// ("" when unchanged).
func uniqueGraph(t *testing.T, u *unstructured.Unstructured, example string, taken map[string]bool) (*unstructured.Unstructured, string) {
	t.Helper()
	kind, _, _ := unstructured.NestedString(u.Object, "spec", "schema", "kind")
	if !taken["name/"+u.GetName()] && !taken["kind/"+kind] {
		taken["name/"+u.GetName()], taken["kind/"+kind] = true, true
		return u, ""
	}
	for _, w := range strings.Split(example, "-") {
		if w != "" {
			kind += strings.ToUpper(w[:1]) + w[1:]
		}
	}
	u.SetName(strings.ToLower(kind) + "." + u.GetName())
	if err := unstructured.SetNestedField(u.Object, kind, "spec", "schema", "kind"); err != nil {
		t.Fatal(err)
	}
	t.Logf("example %s: graph stored as %s, kind %s (an earlier example took its name or kind)", example, u.GetName(), kind)
	taken["name/"+u.GetName()], taken["kind/"+kind] = true, true
	return u, kind
}

// TestKroExamples stores the seven kro example graphs through kro's CRD on
// a server where kro's real controller runs, and checks, with kro
// reconciling them and their instances:
//   - CRD parity: the instance CRD kro generated and the one kroscope
//     generates from the same stored graph have the same spec;
//   - observe parity: a kroscope engine with --observe on the same server
//     shows, for every instance, the state kro wrote in status.state, and for
//     every resource the readiness that state implies, first while kro waits
//     for Deployments and Jobs to become ready and again once they are;
//   - kroscope made no write while observing.
//
// One kro process and one API server serve all seven, so the test costs
// about one example's time.
func TestKroExamples(t *testing.T) {
	files := kroexamples.RGDFiles(t)
	r := newKroRig(t)

	var exs []*example
	var names []string
	rejects := map[string]string{} // by graph name
	taken := map[string]bool{}     // graph names and kinds stored so far
	for _, f := range files {
		// What kro's chainsaw test applies before the graph (a CRD its
		// resources use, an object an externalRef reads).
		r.env.ApplyFiles(t, r.ns, kroexamples.SetupFiles(t, filepath.Dir(f))...)
		name := kroexamples.Name(f)
		u, kind := uniqueGraph(t, readYAML(t, f), name, taken)
		rgd := r.storeGraphObject(f, u)
		names = append(names, rgd.GetName())
		if msg, ok := kroRejects[name]; ok {
			rejects[rgd.GetName()] = msg
			continue
		}
		exs = append(exs, &example{name: name, dir: filepath.Dir(f), rgd: rgd, kind: kind})
	}
	start := time.Now()
	// Examples read from elsewhere ($KROSCOPE_KRO_EXAMPLES) may hold graphs
	// kro refuses that kroRejects does not name: they are left out of the
	// parity checks like the named ones, and kroscope must show kro's
	// reason for them too. The shared examples are held to kroRejects.
	elsewhere := kroexamples.Elsewhere()
	live, unpinned := r.waitGraphsOrRejected(names, rejects, elsewhere)
	for name, msg := range unpinned {
		t.Logf("kro rejects graph %s: %s", name, msg)
		exs = slices.DeleteFunc(exs, func(ex *example) bool { return ex.rgd.GetName() == name })
	}
	t.Logf("kro reported %d graphs Active and rejected %d in %s", len(exs), len(rejects), time.Since(start).Round(time.Millisecond))
	for _, ex := range exs {
		ex.rgd = live[ex.rgd.GetName()]
		ex.crd = r.instanceCRD(ex.rgd)
		ex.gvr = schema.GroupVersionResource{Group: ex.crd.Spec.Group, Version: ex.crd.Spec.Versions[0].Name, Resource: ex.crd.Spec.Names.Plural}
	}

	t.Run("CRDParity", func(t *testing.T) {
		// A client set made now: its REST mapper knows the CRDs kro created.
		set := r.env.Clients(t)
		// One resolver for all, as the engine shares one across graphs.
		schemas := graph.NewCachedSchemaResolver(set.Discovery(), 0)
		for _, ex := range exs {
			t.Run(ex.name, func(t *testing.T) { crdParity(t, set, schemas, ex) })
		}
		t.Logf("OpenAPI documents fetched for %d graphs: %d", len(exs), schemas.Fetches())
	})

	// Every example's instance, each in a namespace of its own (two
	// examples name a child test-app). Graphs that let the instance choose
	// its children's namespace (webapp) are pointed at it too. kro's
	// chainsaw tests of a graph alone have no instance: their part ends
	// with the CRD parity.
	exs = slices.DeleteFunc(exs, func(ex *example) bool { return !hasInstance(ex.dir) })
	for _, ex := range exs {
		ex.ns = r.env.Namespace(t)
		inst := exampleInstance(t, ex.dir)
		if ex.kind != "" {
			inst.SetKind(ex.kind)
		}
		inst.SetNamespace(ex.ns)
		if _, ok, _ := unstructured.NestedFieldNoCopy(ex.rgd.Object, "spec", "schema", "spec", "namespace"); ok {
			if err := unstructured.SetNestedField(inst.Object, ex.ns, "spec", "namespace"); err != nil {
				t.Fatal(err)
			}
		}
		created, err := r.dyn.Resource(ex.gvr).Namespace(ex.ns).Create(ctxT(t), inst, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("%s: creating instance %s: %v", ex.name, inst.GetName(), err)
		}
		ex.instance = created.GetName()
		t.Cleanup(func() { r.deleteAndWait(ex.gvr, ex.ns, ex.instance, ex.ns) })
	}

	// KRO_DUMP=<dir> writes what kro wrote, once its instances are ACTIVE,
	// before they are deleted (also when kroscope's part failed).
	if dir := os.Getenv("KRO_DUMP"); dir != "" {
		t.Cleanup(func() { dumpKroObjects(t, r, exs, dir) })
	}

	// What kro writes on an instance that waits for readiness.
	t.Run("KroWaiting", func(t *testing.T) { kroWaiting(t, r.with(t), exs) })

	// kroscope --observe beside kro. A failure here ends only this subtest:
	// what kro wrote is checked below either way.
	t.Run("ObserveParity", func(t *testing.T) { observeParityTest(t, r.with(t), exs, rejects, unpinned) })

	// Let every instance become ACTIVE (already so when ObserveParity
	// passed), then pin down what kro wrote.
	r.poll(3*time.Minute, "kro to report every instance ACTIVE", func() (bool, string) { return allActive(r, exs) })
	t.Run("KroWrites", func(t *testing.T) { kroWrites(t, r.with(t), exs) })

	// kroscope reconciling what kro made, every example: kro stops,
	// kroscope --take-over reconciles each instance to ACTIVE itself.
	t.Run("TakeOver", func(t *testing.T) { takeOverExamples(t, r.with(t), exs) })
}

// takeOverExamples stops kro and runs kroscope --take-over in reconcile
// mode, with a ServiceAccount's identity holding exactly deploy/'s rights
// and the ClusterRoles `kroscope rbac` prints for the cluster's graphs, on
// every example's instance: each must reach ACTIVE in kroscope's
// reconcile and in its status, the same instance (UID), no resource error. This is
// where reconcile mode meets kro's graphs as kro stored and ran them
// (observe parity shows kro's state, not kroscope's reading of the
// children). kro comes back for the cleanups.
func takeOverExamples(t *testing.T, r *kroRig, exs []*example) {
	uids := map[string]types.UID{}
	for _, ex := range exs {
		uids[ex.name] = r.get(ex.gvr, ex.ns, ex.instance).GetUID()
	}
	// Exactly the rights deploy/ grants and `kroscope rbac` prints for
	// the cluster's graphs, checked before each graph is served.
	identity, printed := r.grantedIdentity(t, "kroscope-examples")
	for _, ex := range exs {
		if !printed[ex.rgd.GetName()] {
			t.Errorf("kroscope rbac printed no role for graph %s (%s)", ex.rgd.GetName(), ex.name)
		}
	}
	r.kro.Stop()
	t.Cleanup(r.kro.Start)
	cfg := r.engineConfig(60)
	cfg.Rest = identity
	run := engrun.Start(t, cfg, func(o *engine.Options) {
		o.Namespace = "" // the examples' namespaces
		o.WatchClusterRGDs = true
		o.DisableLease = false
		o.LeaseNamespace = r.ns
		o.LeaseName = "kroscope-examples"
		o.TakeOver = true
		o.KroPollInterval = 300 * time.Millisecond
		o.CheckRights = true
	})
	r.poll(3*time.Minute, "kroscope to reconcile every example's instance to ACTIVE and write it", func() (bool, string) {
		var b strings.Builder
		snap := run.E.Snapshot()
		for _, ex := range exs {
			r.fakeControllers(ex.ns)
			u := r.get(ex.gvr, ex.ns, ex.instance)
			in := snap.Instance(state.InstanceKey{Resource: ex.gvr.Resource + "." + ex.gvr.Group, Namespace: ex.ns, Name: ex.instance})
			switch {
			case in == nil || in.State != reconciler.InstanceStateActive:
				fmt.Fprintf(&b, "  %s: kroscope shows %+v\n", ex.name, in)
			case kroState(r, ex) != reconciler.InstanceStateActive:
				// A graph of no resources (defaults, check-arbitary-
				// objects) leaves kro's status as kroscope would write
				// it, so kroscope writes nothing: the state is the fact.
				fmt.Fprintf(&b, "  %s: status.state %q (last written by %q)\n", ex.name, kroState(r, ex), statusWriter(u))
			}
		}
		return b.Len() == 0, engrun.Describe(snap) + b.String()
	})
	snap := run.E.Snapshot()
	for _, ex := range exs {
		in := snap.Instance(state.InstanceKey{Resource: ex.gvr.Resource + "." + ex.gvr.Group, Namespace: ex.ns, Name: ex.instance})
		if h := instanceHistory(in); strings.Contains(h, reconciler.InstanceStateError) || strings.Contains(strings.ToLower(h), "conflict") {
			t.Errorf("%s went through an error on the way: %s", ex.name, h)
		}
		for _, rs := range in.Resources {
			if rs.Err != "" {
				t.Errorf("%s: resource %s: %s", ex.name, rs.ID, rs.Err)
			}
		}
		if uid := r.get(ex.gvr, ex.ns, ex.instance).GetUID(); uid != uids[ex.name] {
			t.Errorf("%s: instance re-created (UID %s, was %s)", ex.name, uid, uids[ex.name])
		}
	}
	wrote := 0
	for _, ex := range exs {
		if statusWriter(r.get(ex.gvr, ex.ns, ex.instance)) == metadata.FieldManager {
			wrote++
		}
	}
	t.Logf("kroscope --take-over reconciled %d examples' instances to ACTIVE (status rewritten by kroscope on %d)", len(exs), wrote)
}

// observeParityTest: rejects are the graphs kro rejects that kroscope
// serves (it shows kro's reason); unpinned are graphs from elsewhere that
// kro rejects, which kroscope may reject too (it then shows its own error).
func observeParityTest(t *testing.T, r *kroRig, exs []*example, rejects, unpinned map[string]string) {
	obs := r.startEngine(func(o *engine.Options) {
		o.Namespace = "" // the examples' namespaces
		o.WatchClusterRGDs = true
		o.Observe = true
		o.DisableLease = false // --observe never campaigns
		o.LeaseNamespace = r.ns
	})
	obs.Until(time.Minute, "kroscope to load every cluster graph", func(s *state.Snapshot) (bool, string) {
		var b strings.Builder
		done := true
		for _, ex := range exs {
			n := ex.rgd.GetName()
			g := graphNamed(s, n)
			switch {
			case g == nil:
				done = false
				fmt.Fprintf(&b, "  %s: not loaded\n", n)
			case g.Err != "":
				// A graph kroscope rejects never becomes served: fail now
				// with the reason rather than time out below.
				t.Fatalf("kroscope rejected the cluster graph %s (stored through kro's CRD, Active in kro): %s", n, g.Err)
			case !g.Served:
				done = false
				fmt.Fprintf(&b, "  %s: not served yet\n", n)
			}
		}
		return done, b.String()
	})

	// A graph kro rejects has no CRD: kroscope shows kro's reason (from the
	// RGD status kro wrote), not the CRD's absence.
	obs.Until(time.Minute, "kroscope to show kro's rejection of the graphs kro rejects", func(s *state.Snapshot) (bool, string) {
		var b strings.Builder
		for name, msg := range rejects {
			if g := graphNamed(s, name); g == nil || !strings.Contains(g.Err, "kro does not serve this graph: GraphAccepted: ") || !strings.Contains(g.Err, msg) {
				fmt.Fprintf(&b, "  %s: %+v\n", name, g)
			}
		}
		for name, msg := range unpinned {
			g := graphNamed(s, name)
			if g == nil || g.Err == "" || (strings.Contains(g.Err, "kro does not serve this graph") && !strings.Contains(g.Err, firstLine(msg))) {
				fmt.Fprintf(&b, "  %s: %+v\n", name, g)
			}
		}
		return b.Len() == 0, b.String()
	})
	for name := range unpinned {
		t.Logf("kroscope shows for %s, which kro rejects: %s", name, graphNamed(obs.E.Snapshot(), name).Err)
	}

	// Phase 1: nobody makes Deployments or Jobs ready, so kro settles with
	// the graphs that wait on them IN_PROGRESS and the others ACTIVE.
	p1 := observeParity(t, r, obs, exs, false)
	// Phase 2: the "controllers" make them ready: everything ACTIVE.
	observeParity(t, r, obs, exs, true)
	if !slices.Contains(p1, reconciler.InstanceStateInProgress) {
		t.Errorf("no instance was IN_PROGRESS before readiness was faked (states %v): the first phase proved nothing", p1)
	}

	// ... and says so once per reason, not at every retry.
	for name := range rejects {
		n := 0
		for _, l := range obs.E.Snapshot().Logs {
			if strings.Contains(l.Message, "instance CRD not ready") && strings.Contains(l.KV, "graph="+name) {
				n++
			}
		}
		if n > 2 {
			t.Errorf("kroscope logged %d times that graph %s's CRD is not ready (want its absence, then kro's reason, once each)", n, name)
		}
	}

	if n := obs.Writes(); n != 0 {
		t.Errorf("kroscope --observe sent %d write requests beside kro: %v", n, obs.FirstWrites())
	}
	t.Logf("kroscope --observe beside kro: %d requests, %d writes", obs.Requests(), obs.Writes())
}

// allActive fakes controller status in every example's namespace and
// reports whether kro wrote ACTIVE on every instance.
func allActive(r *kroRig, exs []*example) (bool, string) {
	var b strings.Builder
	ok := true
	for _, ex := range exs {
		r.fakeControllers(ex.ns)
		if st := kroState(r, ex); st != reconciler.InstanceStateActive {
			ok = false
			fmt.Fprintf(&b, "  %s %s/%s: %q\n", ex.name, ex.ns, ex.instance, st)
		}
	}
	return ok, b.String()
}

// observeParity waits until kroscope's state of every instance equals the
// status.state kro wrote (held for a second), then checks each resource's
// readiness against it: ACTIVE means every resource is ready (SYNCED or
// SKIPPED); any other state means at least one is not. With ready true it
// first requires kro to report every instance ACTIVE, faking controller
// status until it does. It returns kro's states, by example.
func observeParity(t *testing.T, r *kroRig, obs *engrun.Run, exs []*example, ready bool) []string {
	t.Helper()
	phase := "before readiness"
	if ready {
		phase = "after readiness"
		r.poll(3*time.Minute, "kro to report every instance ACTIVE", func() (bool, string) { return allActive(r, exs) })
	}
	var states []string
	var agreeSince time.Time
	snap := obs.Until(2*time.Minute, "kroscope to show the state kro wrote ("+phase+")", func(s *state.Snapshot) (bool, string) {
		var b strings.Builder
		states = states[:0]
		agree := true
		for _, ex := range exs {
			want := kroState(r, ex)
			states = append(states, want)
			in := s.Instance(state.InstanceKey{Resource: ex.gvr.Resource + "." + ex.gvr.Group, Namespace: ex.ns, Name: ex.instance})
			got := ""
			if in != nil {
				got = in.State
			}
			if want == "" || got != want {
				agree = false
				fmt.Fprintf(&b, "  %s/%s: kro wrote %q, kroscope shows %q\n", ex.name, ex.instance, want, got)
				if in != nil {
					fmt.Fprintf(&b, "    kroscope: %s\n", in.Message)
					for _, res := range in.Resources {
						fmt.Fprintf(&b, "    %s %s %s %s\n", res.ID, res.State, res.WaitingFor, res.Err)
					}
				}
			}
		}
		if !agree {
			agreeSince = time.Time{}
			return false, b.String()
		}
		if agreeSince.IsZero() {
			agreeSince = time.Now()
		}
		return time.Since(agreeSince) > time.Second, "agreeing, waiting for it to hold"
	})
	for _, ex := range exs {
		in := snap.Instance(state.InstanceKey{Resource: ex.gvr.Resource + "." + ex.gvr.Group, Namespace: ex.ns, Name: ex.instance})
		kro := kroState(r, ex)
		var notReady []string
		for _, res := range in.Resources {
			if res.State != reconciler.ResourceStateSynced && res.State != reconciler.ResourceStateSkipped {
				notReady = append(notReady, res.ID+"="+res.State)
			}
		}
		switch {
		case kro == reconciler.InstanceStateActive && len(notReady) > 0:
			t.Errorf("%s (%s): kro says ACTIVE, kroscope shows resources not ready: %v", ex.name, phase, notReady)
		case kro != reconciler.InstanceStateActive && len(notReady) == 0:
			t.Errorf("%s (%s): kro says %s, kroscope shows every resource ready", ex.name, phase, kro)
		}
		t.Logf("%s (%s): kro %s, kroscope %s, not ready: %v", ex.name, phase, kro, in.State, notReady)
	}
	return states
}

// kroState is the status.state kro last wrote on the example's instance.
func kroState(r *kroRig, ex *example) string {
	u := r.get(ex.gvr, ex.ns, ex.instance)
	if u == nil {
		return ""
	}
	s, _, _ := unstructured.NestedString(u.Object, "status", "state")
	return s
}

func graphNamed(s *state.Snapshot, name string) *state.Graph {
	for i := range s.Graphs {
		if s.Graphs[i].Name == name {
			return &s.Graphs[i]
		}
	}
	return nil
}

// hasInstance reports whether an example has an instance to create.
func hasInstance(dir string) bool {
	for _, f := range []string{"instance.yaml", "valid-instance.yaml"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			return true
		}
	}
	return false
}

func exampleInstance(t *testing.T, dir string) *unstructured.Unstructured {
	t.Helper()
	p := filepath.Join(dir, "instance.yaml")
	if _, err := os.Stat(p); err != nil {
		p = filepath.Join(dir, "valid-instance.yaml")
	}
	return readYAML(t, p)
}

// crdParity compares the instance CRD kro generated for a stored graph with
// the one kroscope builds from the same stored object: scope, names,
// schema, printer columns and subresources.
func crdParity(t *testing.T, set *client.Set, schemas graph.SchemaResolver, ex *example) {
	rgd, err := graph.FromUnstructured(ex.rgd.DeepCopy())
	if err != nil {
		t.Fatalf("kroscope cannot read graph %s as kro stored it: %v", ex.rgd.GetName(), err)
	}
	g, err := graph.NewBuilder(engine.GraphOptions(set, schemas, false)...).Build(rgd)
	if err != nil {
		t.Fatalf("kroscope cannot build graph %s as kro stored it: %v", ex.rgd.GetName(), err)
	}
	if g.Instance.CRD == nil {
		t.Fatalf("kroscope built no instance CRD for %s", ex.rgd.GetName())
	}
	kro, ours := comparableCRD(ex.crd), comparableCRD(g.Instance.CRD)
	for _, part := range []string{"name", "scope", "names", "versions"} {
		if d := lineDiff(kro[part], ours[part]); d != "" {
			t.Errorf("%s: instance CRD %s differs (- only kro's, + only kroscope's):\n%s", ex.name, part, d)
		}
	}
}

// lineDiff lists the lines only in a ("- ") and only in b ("+ "), sorted by
// line so a field's two values sit together; "" when they are equal.
func lineDiff(a, b []string) string {
	inA, inB := map[string]bool{}, map[string]bool{}
	for _, l := range a {
		inA[l] = true
	}
	for _, l := range b {
		inB[l] = true
	}
	type line struct{ text, sign string }
	var out []line
	for _, l := range a {
		if !inB[l] {
			out = append(out, line{l, "- "})
		}
	}
	for _, l := range b {
		if !inA[l] {
			out = append(out, line{l, "+ "})
		}
	}
	slices.SortStableFunc(out, func(x, y line) int { return strings.Compare(x.text, y.text) })
	var s strings.Builder
	for _, l := range out {
		s.WriteString("    " + l.sign + l.text + "\n")
	}
	return s.String()
}

// comparableCRD splits a CRD into the parts both generators decide, each
// flattened to sorted "path: value" lines, so a difference names the
// field it is in. Kubernetes' own defaults on a stored CRD (conversion
// strategy, status) are left out.
func comparableCRD(c *apiextensionsv1.CustomResourceDefinition) map[string][]string {
	flat := func(v any) []string {
		b, err := json.Marshal(v)
		if err != nil {
			return []string{"marshal error: " + err.Error()}
		}
		var m any
		if err := json.Unmarshal(b, &m); err != nil {
			return []string{"unmarshal error: " + err.Error()}
		}
		var out []string
		flatten("", m, &out)
		slices.Sort(out)
		return out
	}
	return map[string][]string{
		"name":     {c.Name},
		"scope":    {string(c.Spec.Scope)},
		"names":    flat(c.Spec.Names),
		"versions": flat(c.Spec.Versions),
	}
}

// flatten appends one "path: value" line per leaf of v.
func flatten(path string, v any, out *[]string) {
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			*out = append(*out, path+": {}")
		}
		for k, e := range x {
			flatten(path+"."+k, e, out)
		}
	case []any:
		if len(x) == 0 {
			*out = append(*out, path+": []")
		}
		for i, e := range x {
			flatten(fmt.Sprintf("%s[%d]", path, i), e, out)
		}
	default:
		b, _ := json.Marshal(x)
		*out = append(*out, path+": "+string(b))
	}
}

// dumpKroObjects writes what kro wrote (graphs, GraphRevisions, instance
// CRDs, instances, children, kro's Lease) as YAML under dir, for people
// comparing kroscope with kro (KRO_DUMP=<dir>).
func dumpKroObjects(t *testing.T, r *kroRig, exs []*example, dir string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		if ok, _ := allActive(r, exs); ok {
			break
		}
		time.Sleep(time.Second)
	}
	write := func(name string, obj any) {
		b, err := yaml.Marshal(obj)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, ex := range exs {
		write(ex.name+"/rgd.yaml", r.get(graph.GroupVersionResource, "", ex.rgd.GetName()))
		write(ex.name+"/crd.yaml", ex.crd)
		write(ex.name+"/instance.yaml", r.get(ex.gvr, ex.ns, ex.instance))
	}
	revs, err := r.dyn.Resource(gvrGraphRev).List(ctxT(t), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	write("graphrevisions.yaml", revs.Object)
	for i := range revs.Items {
		write("graphrevisions/"+revs.Items[i].GetName()+".yaml", revs.Items[i].Object)
	}
	lease := r.get(gvrLease, r.ns, krocontroller.LeaderElectionID)
	write("lease.yaml", lease)
	for _, ex := range exs {
		for _, gvr := range []schema.GroupVersionResource{
			gvrDeployment, gvrJob,
			{Version: "v1", Resource: "services"}, {Version: "v1", Resource: "configmaps"},
			{Group: "networking.k8s.io", Version: "v1", Resource: "ingresses"},
			{Group: "autoscaling", Version: "v2", Resource: "horizontalpodautoscalers"},
		} {
			l, err := r.dyn.Resource(gvr).Namespace(ex.ns).List(ctxT(t), metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			for i := range l.Items {
				write(ex.name+"/children/"+gvr.Resource+"-"+l.Items[i].GetName()+".yaml", l.Items[i].Object)
			}
		}
	}
	t.Logf("kro's objects written to %s", dir)
}
