package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/kroscope/kroscope/engine"
	"github.com/kroscope/kroscope/engine/logsink"
	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/headless"
	"github.com/kroscope/kroscope/test/engrun"
	"github.com/kroscope/kroscope/test/envtest"
	"github.com/kroscope/kroscope/test/graphs"
)

// engRig is a namespace and a folder of graphs on the test API server.
type engRig struct {
	t   *testing.T
	env *envtest.Env
	cfg *rest.Config // admin
	ns  string
	dir string
	dyn dynamic.Interface // admin client, not counted
}

func newEngRig(t *testing.T) *engRig {
	t.Helper()
	env := envtest.Start(t)
	return &engRig{t: t, env: env, cfg: env.Config, ns: env.Namespace(t), dir: t.TempDir(), dyn: dynamic.NewForConfigOrDie(env.Config)}
}

// writeFile writes a graph (or anything) into the rig's folder.
func (r *engRig) writeFile(name, content string) string {
	r.t.Helper()
	p := filepath.Join(r.dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
	return p
}

// engRun is one engine running in the test process, with its requests
// counted (engrun.Counter: Writes, Requests, Deletes...).
type engRun struct {
	*engrun.Run
	t *testing.T
	e *engine.Engine // Run.E
}

// start runs an engine on the rig's namespace. Defaults: no lease, no
// cluster graphs, quick requeues. mod adjusts the options.
func (r *engRig) start(mod func(*engine.Options)) *engRun {
	r.t.Helper()
	run := &engRun{t: r.t}
	run.Run = engrun.Start(r.t, engrun.Config{
		Rest:            r.cfg,
		Namespace:       r.ns,
		RequeueInterval: 5 * time.Second,
		LogLines:        40,
		LogPrefix:       "engine log: ",
	}, mod)
	run.e = run.E
	return run
}

// stop ends the engine (idempotent) and returns Run's error.
func (run *engRun) stop() error { return run.Stop() }

// waitFor waits until cond holds on the engine's state (engrun.Run.Until).
func (run *engRun) waitFor(timeout time.Duration, what string, cond func(*state.Snapshot) bool) *state.Snapshot {
	run.t.Helper()
	return run.Until(timeout, what, func(s *state.Snapshot) (bool, string) { return cond(s), "" })
}

// graphServed waits for a graph to be served and returns its instance GVR.
func (run *engRun) graphServed(name string) schema.GroupVersionResource {
	run.t.Helper()
	var g state.Graph
	run.waitFor(2*time.Minute, "graph "+name+" served", func(s *state.Snapshot) bool {
		for _, x := range s.Graphs {
			if x.Name == name && x.Served {
				g = x
				return true
			}
		}
		return false
	})
	gv, err := schema.ParseGroupVersion(g.APIVersion)
	if err != nil {
		run.t.Fatal(err)
	}
	plural, _, _ := strings.Cut(g.Resource, ".")
	return gv.WithResource(plural)
}

// allInState waits until n instances of resource exist and all are in st.
func (run *engRun) allInState(resource string, n int, st string, timeout time.Duration) *state.Snapshot {
	run.t.Helper()
	return run.waitFor(timeout, fmt.Sprintf("%d %s instances %s", n, resource, st), func(s *state.Snapshot) bool {
		c := 0
		for _, in := range s.Instances {
			if in.Key.Resource != resource {
				continue
			}
			if in.State != st {
				return false
			}
			c++
		}
		return c == n
	})
}

// serveFile starts an engine on the graph doc, written to the rig's
// rgd.yaml, mod (if not nil) adjusting the options, and waits until it
// serves the graph named name.
func (r *engRig) serveFile(name, doc string, mod func(*engine.Options)) (*engRun, schema.GroupVersionResource) {
	r.t.Helper()
	path := r.writeFile("rgd.yaml", doc)
	run := r.start(func(o *engine.Options) {
		o.RGDPaths = []string{path}
		if mod != nil {
			mod(o)
		}
	})
	return run, run.graphServed(name)
}

// watchesOnly sets requeues ten minutes apart: within a test, only a watch
// event wakes an instance.
func watchesOnly(o *engine.Options) { o.RequeueInterval = 10 * time.Minute }

// serveChain starts an engine on the rig's folder holding graphs.Chain(name,
// kind) and waits until it serves it.
func (r *engRig) serveChain(name, kind string) (*engRun, schema.GroupVersionResource) {
	r.t.Helper()
	r.writeFile("chain.yaml", graphs.Chain(name, kind))
	run := r.start(func(o *engine.Options) { o.RGDPaths = []string{r.dir} })
	return run, run.graphServed(name)
}

// createInstance creates an instance of gvr in the rig's namespace.
func (r *engRig) createInstance(gvr schema.GroupVersionResource, kind, name string, spec map[string]any) *unstructured.Unstructured {
	r.t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": gvr.GroupVersion().String(), "kind": kind,
		"metadata": map[string]any{"name": name, "namespace": r.ns},
		"spec":     spec,
	}}
	if spec == nil {
		u.Object["spec"] = map[string]any{}
	}
	out, err := r.dyn.Resource(gvr).Namespace(r.ns).Create(context.Background(), u, metav1.CreateOptions{})
	if err != nil {
		r.t.Fatalf("creating %s %s: %v", kind, name, err)
	}
	return out
}

// applyYAML creates an object from YAML with the admin client.
func (r *engRig) applyYAML(gvr schema.GroupVersionResource, namespace, doc string) *unstructured.Unstructured {
	r.t.Helper()
	obj := map[string]any{}
	if err := yaml.Unmarshal([]byte(doc), &obj); err != nil {
		r.t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: obj}
	var ri dynamic.ResourceInterface = r.dyn.Resource(gvr)
	if namespace != "" {
		ri = r.dyn.Resource(gvr).Namespace(namespace)
	}
	out, err := ri.Create(context.Background(), u, metav1.CreateOptions{})
	if err != nil {
		r.t.Fatalf("creating %s: %v", u.GetName(), err)
	}
	return out
}

// startJSON runs an engine on the graph files as `kroscope run -o json`
// runs it: its output kept in out, its log (debug level: some refusals are
// logged there) in logs. Run.Stop returns RunHeadless's error.
func (r *engRig) startJSON(files []string, out, logs *engrun.Buffer) *engrun.Run {
	r.t.Helper()
	return engrun.Start(r.t, engrun.Config{
		Rest: r.cfg, Namespace: r.ns, LogLines: 40, LogPrefix: "engine log: ",
		Run: func(ctx context.Context, e *engine.Engine) error {
			return headless.Run(ctx, e, out, headless.Options{Output: "json"})
		},
	}, func(o *engine.Options) {
		o.RGDPaths = files
		o.Log = logsink.New(logsink.Options{Writer: logs, Verbosity: 1})
	})
}
