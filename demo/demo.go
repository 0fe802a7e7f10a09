// Package demo assembles `kroscope demo`: an in-memory cluster (memcluster)
// with the bundled example graphs (examples) stored in it as
// ResourceGraphDefinitions, a workload simulator (demo/workload) that makes
// their children come alive, and instances created as soon as the engine
// serves their kinds. The engine and the reconciler that run on it are the
// real ones; only the API server is simulated.
package demo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/kroscope/kroscope/demo/workload"
	"github.com/kroscope/kroscope/engine"
	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/examples"
	"github.com/kroscope/kroscope/memcluster"
	"github.com/kroscope/kroscope/reconciler/client"
	"github.com/kroscope/kroscope/reconciler/graph"
)

// Namespace is where the demo's instances live unless their file says otherwise.
const Namespace = "demo"

// WorkersPerCPU is the engine's default worker count per CPU on the demo
// cluster. The engine's own default (engine.WorkersPerCPU, 16) is sized for
// an API server a network round trip away; the demo cluster answers at
// once, from this process's own CPUs, so more workers only queue on its
// lock and crowd out the UI: with 1,000 fanout instances on 2 cores, 32
// workers rolled out in 48 s with a key→frame p99 of 182 ms, 4 in 39 s with
// 14 ms.
const WorkersPerCPU = 2

// MemoryLimit is the soft memory limit (runtime/debug.SetMemoryLimit)
// `kroscope demo` sets unless GOMEMLIMIT is set: the demo cluster's store
// and the simulator live in the same process as the engine, so near the
// limit the collector works harder instead of letting the heap double. A
// small demo never comes near it; at 1,000 fanout instances it holds the
// peak RSS near 530 MB instead of 810 MB, for about a quarter more CPU.
const MemoryLimit = 450 << 20

// Options configure a demo.
type Options struct {
	// Examples to load by name (see examples.Names); empty means all but
	// examples.OptIn.
	Examples []string
	// Instances is how many instances of each example to create; 0 means
	// the ones its instances.yaml lists. More than listed repeats them
	// with numbered names (shop, shop-2, ...).
	Instances int
	// FailRate is the fraction of child writes that fail (see memcluster.Options).
	FailRate float64
	// Seed makes failure injection repeatable; 0 picks one.
	Seed int64
	// Workload tunes the simulated controllers.
	Workload workload.Options
	// ServeTimeout bounds how long Run waits for the engine to serve an
	// example's kind before reporting it (default 60s).
	ServeTimeout time.Duration
	Log          logr.Logger
	// FS holds the examples; nil means the embedded ones.
	FS fs.FS
}

// Demo is an in-memory cluster loaded with examples.
type Demo struct {
	Cluster   *memcluster.Cluster
	opts      Options
	graphs    []*unstructured.Unstructured
	instances []*unstructured.Unstructured
}

// New builds the cluster and stores the chosen examples' graphs in it, so an
// engine started afterwards finds them at once. Instances are created by Run.
func New(o Options) (*Demo, error) {
	if o.FS == nil {
		o.FS = examples.FS()
	}
	if o.ServeTimeout <= 0 {
		o.ServeTimeout = 60 * time.Second
	}
	if o.Instances < 0 {
		return nil, fmt.Errorf("--instances must be 0 or more, not %d", o.Instances)
	}
	if o.FailRate < 0 || o.FailRate > 1 {
		return nil, fmt.Errorf("--fail-rate must be between 0 and 1, not %g", o.FailRate)
	}
	available := []string{}
	if entries, err := fs.ReadDir(o.FS, "."); err == nil {
		for _, e := range entries {
			if e.IsDir() {
				available = append(available, e.Name())
			}
		}
	}
	names := o.Examples
	if len(names) == 0 {
		names = examples.Default(available)
	}
	d := &Demo{opts: o}
	for _, name := range names {
		name = strings.TrimSpace(name)
		if !slices.Contains(available, name) {
			return nil, fmt.Errorf("unknown example %q: choose from %s", name, strings.Join(available, ", "))
		}
		rgds, err := readDocs(o.FS, name+"/rgd.yaml")
		if err != nil {
			return nil, err
		}
		insts, err := readDocs(o.FS, name+"/instances.yaml")
		if err != nil {
			return nil, err
		}
		for _, r := range rgds {
			if r.GroupVersionKind() != graph.GroupVersionResource.GroupVersion().WithKind(graph.Kind) {
				return nil, fmt.Errorf("examples/%s/rgd.yaml: %s %q is not a %s", name, r.GetKind(), r.GetName(), graph.Kind)
			}
		}
		d.graphs = append(d.graphs, rgds...)
		d.instances = append(d.instances, scale(insts, o.Instances)...)
	}
	d.Cluster = memcluster.New(memcluster.Options{FailRate: o.FailRate, Seed: o.Seed, Namespaces: []string{Namespace}})
	ctx := context.Background()
	for _, r := range d.graphs {
		if _, err := d.Cluster.Dynamic().Resource(graph.GroupVersionResource).Create(ctx, r.DeepCopy(), metav1.CreateOptions{FieldManager: "kroscope-demo"}); err != nil {
			return nil, fmt.Errorf("storing graph %q in the demo cluster: %w", r.GetName(), err)
		}
	}
	return d, nil
}

// ClientSet is what the engine should use (with failure injection).
func (d *Demo) ClientSet() *client.Set { return d.Cluster.ClientSet() }

// EngineOptions are the options `kroscope demo` runs the engine with on d
// (its benchmark too): the graphs are read from the cluster, where New
// stored them, and no Lease is taken (one process, one in-memory cluster:
// nobody to elect against). workers <= 0 means WorkersPerCPU per CPU.
func (d *Demo) EngineOptions(workers int, log logr.Logger) engine.Options {
	if workers <= 0 {
		workers = WorkersPerCPU * runtime.NumCPU()
	}
	return engine.Options{
		ClientSet:        d.ClientSet(),
		WatchClusterRGDs: true,
		DisableLease:     true,
		Workers:          workers,
		Log:              log,
		Cluster:          state.Cluster{Context: "demo", Server: "in-memory demo cluster", Demo: true},
	}
}

// Instances returns the instances Run creates (namespace/name of each kind).
func (d *Demo) Instances() []*unstructured.Unstructured {
	out := make([]*unstructured.Unstructured, len(d.instances))
	for i, u := range d.instances {
		out[i] = u.DeepCopy()
	}
	return out
}

// Run simulates the cluster's controllers and creates the instances once
// the engine serves their kinds, then keeps simulating until ctx is done.
func (d *Demo) Run(ctx context.Context) error {
	sim := workload.New(d.Cluster.Dynamic(), d.opts.Workload)
	simErr := make(chan error, 1)
	go func() { simErr <- sim.Run(ctx) }()

	err := d.createInstances(ctx)
	if err != nil && ctx.Err() == nil {
		d.opts.Log.Error(err, "demo: creating instances")
	}
	if serr := <-simErr; serr != nil && !errors.Is(serr, context.Canceled) {
		err = errors.Join(err, fmt.Errorf("workload simulator: %w", serr))
	}
	if ctx.Err() != nil && err == nil {
		return nil
	}
	return err
}

// createInstances waits until every instance's kind is served (its CRD
// established), then creates them all at once, so none of them is ACTIVE
// before the last one exists.
func (d *Demo) createInstances(ctx context.Context) error {
	mapper := d.Cluster.RESTMapper()
	gvrs := map[schema.GroupVersionKind]schema.GroupVersionResource{}
	var errs []error
	for _, in := range d.instances {
		gvk := in.GroupVersionKind()
		if _, ok := gvrs[gvk]; ok {
			continue
		}
		deadline := time.Now().Add(d.opts.ServeTimeout)
		for {
			m, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
			if err == nil {
				gvrs[gvk] = m.Resource
				break
			}
			if time.Now().After(deadline) {
				errs = append(errs, fmt.Errorf("%s is still not served after %s (is its graph valid?): its instances were not created", gvk.Kind, d.opts.ServeTimeout))
				gvrs[gvk] = schema.GroupVersionResource{}
				break
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(20 * time.Millisecond):
			}
		}
	}
	for _, in := range d.instances {
		gvr := gvrs[in.GroupVersionKind()]
		if gvr.Empty() {
			continue
		}
		_, err := d.Cluster.Dynamic().Resource(gvr).Namespace(in.GetNamespace()).Create(ctx, in.DeepCopy(), metav1.CreateOptions{FieldManager: "kroscope-demo"})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			errs = append(errs, fmt.Errorf("creating %s %s/%s: %w", in.GetKind(), in.GetNamespace(), in.GetName(), err))
		}
	}
	d.opts.Log.Info("demo instances created", "instances", len(d.instances))
	return errors.Join(errs...)
}

// readDocs reads every object of a multi-document YAML file.
func readDocs(fsys fs.FS, path string) ([]*unstructured.Unstructured, error) {
	data, err := fs.ReadFile(fsys, path)
	if err != nil {
		return nil, fmt.Errorf("examples/%s: %w", path, err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	var out []*unstructured.Unstructured
	for i := 0; ; i++ {
		obj := map[string]any{}
		if err := dec.Decode(&obj); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			return nil, fmt.Errorf("examples/%s: document %d: %w", path, i+1, err)
		}
		if len(obj) == 0 {
			continue
		}
		u := &unstructured.Unstructured{Object: obj}
		if u.GetKind() == "" || u.GetName() == "" {
			return nil, fmt.Errorf("examples/%s: document %d has no kind or metadata.name", path, i+1)
		}
		if u.GetNamespace() == "" && u.GetKind() != graph.Kind {
			u.SetNamespace(Namespace)
		}
		out = append(out, u)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("examples/%s: no objects", path)
	}
	return out, nil
}

// scale returns n instances cycling through insts (n == 0: insts as they
// are); repeats get numbered names.
func scale(insts []*unstructured.Unstructured, n int) []*unstructured.Unstructured {
	if n == 0 {
		return insts
	}
	out := make([]*unstructured.Unstructured, 0, n)
	for i := range n {
		u := insts[i%len(insts)].DeepCopy()
		if round := i / len(insts); round > 0 {
			u.SetName(fmt.Sprintf("%s-%d", u.GetName(), round+1))
		}
		out = append(out, u)
	}
	return out
}
