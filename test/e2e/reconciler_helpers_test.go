package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/yaml"

	"github.com/kroscope/kroscope/engine"
	"github.com/kroscope/kroscope/reconciler"
	"github.com/kroscope/kroscope/reconciler/client"
	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/reconciler/metadata"
	"github.com/kroscope/kroscope/test/engrun"
	"github.com/kroscope/kroscope/test/envtest"
	"github.com/kroscope/kroscope/test/krocrds"
)

// rig is one graph served by a reconciler.Controller on the test API server.
// Tests drive Reconcile themselves (the engine is not involved).
type rig struct {
	t   testing.TB
	env *envtest.Env
	cs  *client.Set
	dyn dynamic.Interface // admin client, not counted
	g   *graph.Graph
	c   *reconciler.Controller
	ns  string

	// Counter counts the controller's requests: Writes, and WritesBy
	// impersonated user.
	*engrun.Counter

	mu  sync.Mutex
	obs map[types.NamespacedName]reconciler.Observation
}

type rigConfig struct {
	cfg  reconciler.ReconcileConfig
	opts reconciler.Options
	sas  map[string]string
	// clientConfig, when set, builds the controller's client Set.
	clientConfig *rest.Config
	// graphOpts are extra graph build options (e.g. graph.WithCELOmit).
	graphOpts []graph.Option
	// graphUID, when set, is the graph's UID (as if read from a cluster).
	graphUID types.UID
	// storeThroughKroCRD stores the graph through kro's real RGD CRD and
	// builds what the API server gives back (kro's defaults filled in, its
	// UID as the graph id), typed as the engine types cluster graphs.
	storeThroughKroCRD bool
	// crdMod, when set, changes the instance CRD before it is installed.
	crdMod func(*apiextensionsv1.CustomResourceDefinition)
}

// newRig builds the graph from YAML, installs its CRD and a Controller.
func newRig(t testing.TB, rgdYAML string, mods ...func(*rigConfig)) *rig {
	t.Helper()
	env := envtest.Start(t)
	rc := &rigConfig{cfg: reconciler.ReconcileConfig{DefaultRequeueDuration: time.Second, DeletionGraceTimeDuration: time.Minute}}
	for _, m := range mods {
		m(rc)
	}
	r := &rig{t: t, env: env, obs: map[types.NamespacedName]reconciler.Observation{}, Counter: &engrun.Counter{}}
	cfg := rest.CopyConfig(env.Config)
	if rc.clientConfig != nil {
		cfg = rest.CopyConfig(rc.clientConfig)
	}
	cfg.Wrap(r.Counter.Wrap)
	cs, err := client.NewSet(cfg)
	if err != nil {
		t.Fatalf("client set: %v", err)
	}
	r.cs = cs
	r.dyn = dynamic.NewForConfigOrDie(env.Config)

	rgds, err := graph.Parse([]byte(rgdYAML), t.Name())
	if err != nil || len(rgds) != 1 {
		t.Fatalf("parsing the graph: %v (%d definitions)", err, len(rgds))
	}
	opts := append([]graph.Option{graph.WithRESTMapper(cs.RESTMapper())}, rc.graphOpts...)
	if rc.storeThroughKroCRD {
		rgds[0] = storeThroughKroCRD(t, env, rgdYAML)
		opts = append(engine.GraphOptions(cs, graph.NewCachedSchemaResolver(cs.Discovery(), 0), false), rc.graphOpts...)
	}
	g, err := graph.NewBuilder(opts...).Build(rgds[0])
	if err != nil {
		t.Fatalf("building the graph: %v", err)
	}
	if g.Instance.CRD == nil {
		t.Fatalf("graph %s has no instance CRD", g.Name)
	}
	crd := g.Instance.CRD.DeepCopy()
	if rc.crdMod != nil {
		rc.crdMod(crd)
	}
	env.InstallCRDs(t, crd)
	if rc.graphUID != "" {
		g.UID = rc.graphUID
	}
	r.g = g
	sas := rc.sas
	if sas == nil {
		sas = g.DefaultServiceAccounts
	}
	r.c = reconciler.NewController(logr.Discard(), rc.cfg, g.Instance.GVR, g, cs, sas, metadata.NewGraphLabeler(g.Name, g.UID))
	r.c.SetOptions(rc.opts)
	r.c.SetObserver(func(o reconciler.Observation) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.obs[types.NamespacedName{Namespace: o.Namespace, Name: o.Name}] = o
	})
	r.ns = env.Namespace(t)
	return r
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// instanceGVR is the instance resource.
func (r *rig) instanceGVR() schema.GroupVersionResource { return r.g.Instance.GVR }

// create creates an instance from YAML in the rig's namespace.
func (r *rig) create(instYAML string) *unstructured.Unstructured {
	r.t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(instYAML), &u.Object); err != nil {
		r.t.Fatalf("instance YAML: %v", err)
	}
	u.SetNamespace(r.ns)
	out, err := r.dyn.Resource(r.instanceGVR()).Namespace(r.ns).Create(ctxT(r.t), u, metav1.CreateOptions{})
	if err != nil {
		r.t.Fatalf("creating instance: %v", err)
	}
	return out
}

// get reads an object with the admin client; nil when not found.
func (r *rig) get(gvr schema.GroupVersionResource, ns, name string) *unstructured.Unstructured {
	r.t.Helper()
	var ri dynamic.ResourceInterface = r.dyn.Resource(gvr)
	if ns != "" {
		ri = r.dyn.Resource(gvr).Namespace(ns)
	}
	u, err := ri.Get(ctxT(r.t), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		r.t.Fatalf("getting %s %s/%s: %v", gvr.Resource, ns, name, err)
	}
	return u
}

func (r *rig) instance(name string) *unstructured.Unstructured {
	return r.get(r.instanceGVR(), r.ns, name)
}

// patchSpec merge-patches the instance spec.
func (r *rig) patchSpec(name string, spec map[string]any) {
	r.t.Helper()
	body := mustJSON(r.t, map[string]any{"spec": spec})
	if _, err := r.dyn.Resource(r.instanceGVR()).Namespace(r.ns).Patch(ctxT(r.t), name, types.MergePatchType, body, metav1.PatchOptions{}); err != nil {
		r.t.Fatalf("patching instance spec: %v", err)
	}
}

func (r *rig) last(name string) (reconciler.Observation, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	o, ok := r.obs[types.NamespacedName{Namespace: r.ns, Name: name}]
	return o, ok
}

// reconcile runs one Reconcile and returns its observation and error.
func (r *rig) reconcile(name string) (reconciler.Observation, error) {
	err := r.c.Reconcile(ctxT(r.t), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: r.ns, Name: name}})
	o, _ := r.last(name)
	return o, err
}

// until reconciles repeatedly until cond holds on the observation (with the
// error Reconcile returned), failing after timeout with the last state.
func (r *rig) until(name string, timeout time.Duration, what string, cond func(reconciler.Observation, error) bool) reconciler.Observation {
	r.t.Helper()
	deadline := time.Now().Add(timeout)
	var o reconciler.Observation
	var err error
	for {
		o, err = r.reconcile(name)
		if cond(o, err) {
			return o
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("instance %s: %s not reached after %s; state %s: %s (err %v)\n%s", name, what, timeout, o.State.State, o.Message, err, describe(o))
		}
		time.Sleep(150 * time.Millisecond)
	}
}

func (r *rig) untilState(name, state string) reconciler.Observation {
	r.t.Helper()
	return r.until(name, 90*time.Second, "state "+state, func(o reconciler.Observation, _ error) bool { return o.State.State == state })
}

// untilGone reconciles until the instance no longer exists.
func (r *rig) untilGone(name string) reconciler.Observation {
	r.t.Helper()
	o := r.until(name, 90*time.Second, "gone", func(o reconciler.Observation, _ error) bool { return o.Gone })
	if inst := r.instance(name); inst != nil {
		r.t.Fatalf("instance %s still exists after the finalizer was removed: finalizers %v", name, inst.GetFinalizers())
	}
	return o
}

// deleteInstance asks the API server to delete the instance.
func (r *rig) deleteInstance(name string) {
	r.t.Helper()
	if err := r.dyn.Resource(r.instanceGVR()).Namespace(r.ns).Delete(ctxT(r.t), name, metav1.DeleteOptions{}); err != nil {
		r.t.Fatalf("deleting instance %s: %v", name, err)
	}
}

func describe(o reconciler.Observation) string {
	var b strings.Builder
	for id, d := range o.Resources {
		fmt.Fprintf(&b, "  %s: %s", id, d.State)
		if d.WaitingFor != "" {
			fmt.Fprintf(&b, " (%s)", d.WaitingFor)
		}
		if d.Err != nil {
			fmt.Fprintf(&b, " err=%v", d.Err)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func mustJSON(t testing.TB, v any) []byte {
	t.Helper()
	b, err := yaml.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	j, err := yaml.YAMLToJSON(b)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

var (
	gvrConfigMap  = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	gvrDeployment = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	gvrJob        = schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}
)

// assertSubset checks that every field of want is in got with the same
// value, the way a Chainsaw assert file does. Keys in parentheses (JMESPath
// filters) are not supported and are skipped by the caller.
func assertSubset(want, got any, path string) error {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: want an object, got %T", path, got)
		}
		for k, wv := range w {
			if strings.HasPrefix(k, "(") {
				continue
			}
			gv, ok := g[k]
			if !ok {
				return fmt.Errorf("%s.%s: missing", path, k)
			}
			if err := assertSubset(wv, gv, path+"."+k); err != nil {
				return err
			}
		}
		return nil
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Errorf("%s: want %d items, got %v", path, len(w), got)
		}
		for i := range w {
			if err := assertSubset(w[i], g[i], fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		return nil
	}
	if fmt.Sprint(want) == fmt.Sprint(got) || reflect.DeepEqual(want, got) {
		return nil
	}
	return fmt.Errorf("%s: want %v, got %v", path, want, got)
}

// storeThroughKroCRD creates the graph through kro's RGD CRD, as a user
// applies it to a cluster where kro runs, and reads it back as kroscope
// serves it; the object is deleted at cleanup.
func storeThroughKroCRD(t testing.TB, env *envtest.Env, rgdYAML string) *graph.ResourceGraphDefinition {
	t.Helper()
	env.InstallCRDs(t, krocrds.RGD(t))
	// Read as kubectl apply reads a file (its YAML document reader ends the
	// last line with a newline, which a literal block at the very end of a
	// file keeps), so the stored graph holds what a user's apply stores.
	doc, err := utilyaml.NewYAMLReader(bufio.NewReader(strings.NewReader(rgdYAML))).Read()
	if err != nil {
		t.Fatal(err)
	}
	js, err := yaml.YAMLToJSON(doc)
	if err != nil {
		t.Fatal(err)
	}
	obj := map[string]any{}
	if err := json.Unmarshal(js, &obj); err != nil {
		t.Fatal(err)
	}
	ri := dynamic.NewForConfigOrDie(env.Config).Resource(graph.GroupVersionResource)
	ctx := context.Background()
	u, err := ri.Create(ctx, &unstructured.Unstructured{Object: obj}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("storing the graph through kro's CRD: %v", err)
	}
	t.Cleanup(func() { _ = ri.Delete(context.Background(), u.GetName(), metav1.DeleteOptions{}) })
	rgd, err := graph.FromUnstructured(u)
	if err != nil {
		t.Fatalf("reading the stored graph back: %v", err)
	}
	return rgd
}
