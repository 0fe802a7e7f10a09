// Package plan_test runs `kroscope plan`'s package on the real API server:
// every case of issue 28, each checked against what the reconciler then
// does when it applies the same change.
package plan_test

import (
	"context"
	"fmt"
	stdmaps "maps"
	"net/http"
	"os"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/yaml"

	"github.com/kroscope/kroscope/engine"
	"github.com/kroscope/kroscope/plan"
	"github.com/kroscope/kroscope/reconciler"
	"github.com/kroscope/kroscope/reconciler/client"
	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/reconciler/metadata"
	"github.com/kroscope/kroscope/test/envtest"
)

func TestMain(m *testing.M) {
	os.Exit(envtest.Run(m))
}

// rig is one test's API server, namespace and admin clients.
type rig struct {
	t   *testing.T
	env *envtest.Env
	ns  string
	set *client.Set
}

func newRig(t *testing.T) *rig {
	env := envtest.Start(t)
	return &rig{t: t, env: env, ns: env.Namespace(t), set: env.Clients(t)}
}

// build compiles a graph as the engine does, against the API server.
func (r *rig) build(doc string) *graph.Graph {
	r.t.Helper()
	rgds, err := graph.Parse([]byte(doc), r.t.Name())
	if err != nil || len(rgds) != 1 {
		r.t.Fatalf("parsing graph: %v (%d graphs)", err, len(rgds))
	}
	opts := engine.GraphOptions(r.set, graph.NewCachedSchemaResolver(r.set.Discovery(), 0), false)
	g, _, err := graph.NewBuilder(opts...).Servable(rgds[0])
	if err != nil {
		r.t.Fatalf("building graph: %v", err)
	}
	return g
}

// serve installs g's instance CRD (as the engine would) and creates the
// instances, each reconciled until it settles.
func (r *rig) serve(g *graph.Graph, insts ...string) {
	r.t.Helper()
	r.env.InstallCRDs(r.t, g.Instance.CRD)
	r.set.RESTMapper().Reset()
	for _, doc := range insts {
		u := r.object(doc)
		_, err := r.set.Dynamic().Resource(g.Instance.GVR).Namespace(r.ns).Create(context.Background(), u, metav1.CreateOptions{})
		if err != nil {
			r.t.Fatalf("creating instance %s: %v", u.GetName(), err)
		}
		r.reconcile(g, u.GetName())
	}
}

// object decodes a YAML object, placed in the rig's namespace.
func (r *rig) object(doc string) *unstructured.Unstructured {
	r.t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(doc), &u.Object); err != nil {
		r.t.Fatalf("decoding %q: %v", doc, err)
	}
	if u.GetNamespace() == "" {
		u.SetNamespace(r.ns)
	}
	return u
}

// reconcile runs the reconciler (for real) on one instance until it
// settles: what the engine's worker does.
func (r *rig) reconcile(g *graph.Graph, name string) reconciler.Observation {
	r.t.Helper()
	r.set.RESTMapper().Reset()
	ctl := reconciler.NewController(logr.Discard(), reconciler.ReconcileConfig{}, g.Instance.GVR, g, r.set,
		g.DefaultServiceAccounts, metadata.NewGraphLabeler(g.Name, g.UID))
	defer ctl.Close()
	var obs reconciler.Observation
	ctl.SetObserver(func(o reconciler.Observation) { obs = o })
	for range 10 {
		_ = ctl.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: r.ns, Name: name}})
		settled := obs.State.State == reconciler.InstanceStateActive || obs.State.State == reconciler.InstanceStateFailed
		if settled {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	return obs
}

// plan plans g (and instance edits) as `kroscope plan` does, as the
// admin unless set is given.
func (r *rig) plan(g *graph.Graph, set *client.Set, edits ...string) *plan.Plan {
	r.t.Helper()
	if set == nil {
		set = r.set
	}
	o := plan.Options{Set: set, Namespace: r.ns}
	for _, doc := range edits {
		o.Instances = append(o.Instances, r.object(doc))
	}
	p, err := plan.Graph(context.Background(), g, o)
	if err != nil {
		r.t.Fatalf("plan: %v", err)
	}
	text := &strings.Builder{}
	_ = plan.Text(text, []*plan.Plan{p})
	r.t.Logf("plan:\n%s", text)
	return p
}

// children lists every object of the kinds the graphs make, labelled as
// the instance's, by kind/name.
func (r *rig) children(uid types.UID, gs ...*graph.Graph) map[string]*unstructured.Unstructured {
	r.t.Helper()
	out := map[string]*unstructured.Unstructured{}
	seen := map[string]bool{}
	for _, g := range gs {
		for _, id := range g.TopologicalOrder {
			res := g.Resources[id]
			if res.External || seen[res.GVR.String()] {
				continue
			}
			seen[res.GVR.String()] = true
			list, err := r.set.Dynamic().Resource(res.GVR).List(context.Background(), metav1.ListOptions{LabelSelector: metadata.InstanceIDLabel + "=" + string(uid)})
			if err != nil {
				r.t.Fatalf("listing %s: %v", res.GVR.Resource, err)
			}
			for i := range list.Items {
				u := &list.Items[i]
				out[u.GetKind()+" "+u.GetNamespace()+"/"+u.GetName()] = u
			}
		}
	}
	return out
}

func (r *rig) uid(g *graph.Graph, name string) types.UID {
	r.t.Helper()
	u, err := r.set.Dynamic().Resource(g.Instance.GVR).Namespace(r.ns).Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		r.t.Fatalf("reading instance %s: %v", name, err)
	}
	return u.GetUID()
}

// outcome is what really changed between two snapshots of an instance's
// children, in the plan's terms: "+ Kind ns/name", "~ Kind ns/name path",
// "- Kind ns/name".
func outcome(before, after map[string]*unstructured.Unstructured) []string {
	var out []string
	for k, a := range after {
		b, ok := before[k]
		if !ok {
			out = append(out, "+ "+k)
			continue
		}
		for _, f := range plan.Diff(b.Object, a.Object) {
			out = append(out, "~ "+k+" "+f.Path)
		}
	}
	for k := range before {
		if _, ok := after[k]; !ok {
			out = append(out, "- "+k)
		}
	}
	slices.Sort(out)
	return out
}

// planned is a plan's instance entries in outcome's terms (failures and
// pending entries as "! ..." and "? ...").
func planned(in plan.Instance) []string {
	var out []string
	for _, o := range in.Objects {
		k := o.Kind + " " + o.Namespace + "/" + o.Name
		switch o.Op {
		case plan.OpCreate:
			out = append(out, "+ "+k)
		case plan.OpPrune:
			out = append(out, "- "+k)
		case plan.OpChange:
			for _, f := range o.Fields {
				out = append(out, "~ "+k+" "+f.Path)
			}
		default:
			out = append(out, fmt.Sprintf("%s %s %s", plan.Sign(o.Op), o.Resource, k))
		}
	}
	slices.Sort(out)
	return out
}

// instanceOf returns the plan of the instance named.
func instanceOf(t *testing.T, p *plan.Plan, name string) plan.Instance {
	t.Helper()
	for _, in := range p.Instances {
		if in.Name == name {
			return in
		}
	}
	t.Fatalf("the plan has no instance %s: %+v", name, p.Instances)
	return plan.Instance{}
}

// expect fails unless got equals want.
func expect(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%s:\n got %q\nwant %q", what, got, want)
	}
}

// counter counts requests by verb and dry run: "GET", "LIST", "PATCH
// dryRun=All"...
type counter struct {
	mu sync.Mutex
	n  map[string]int
}

func (c *counter) wrap(cfg *rest.Config) *rest.Config {
	cfg = rest.CopyConfig(cfg)
	cfg.WrapTransport = func(rt http.RoundTripper) http.RoundTripper {
		return roundTrip(func(req *http.Request) (*http.Response, error) {
			verb := req.Method
			if d := req.URL.Query()["dryRun"]; len(d) > 0 {
				verb += " dryRun=" + strings.Join(d, ",")
			}
			c.mu.Lock()
			if c.n == nil {
				c.n = map[string]int{}
			}
			c.n[verb]++
			c.mu.Unlock()
			return rt.RoundTrip(req)
		})
	}
	return cfg
}

func (c *counter) counts() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return stdmaps.Clone(c.n)
}

type roundTrip func(*http.Request) (*http.Response, error)

func (f roundTrip) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// graph2 is a graph as served and as the plan changes it.
type graph2 struct{ old, new *graph.Graph }
