// Package workload simulates the controllers a real cluster runs, so objects
// in the demo cluster come alive: Deployments and StatefulSets roll out one
// replica at a time, Jobs run and complete, Services get a cluster IP (and a
// load-balancer hostname), Ingresses get an address and PVCs bind.
//
// It watches the cluster through informers and writes only status (and a
// Service's spec.clusterIP, which the API server itself allocates on a real
// cluster), with its own field manager and no fault injection.
package workload

import (
	"context"
	"fmt"
	"hash/fnv"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
)

// FieldManager is the field manager of every write the simulator makes.
const FieldManager = "demo-workload"

// Options tune the simulation's pace.
type Options struct {
	// Step is the time between two rollout steps (one more replica ready);
	// default 600ms. Each object gets up to half a step of extra delay,
	// derived from its name, so parallel rollouts do not move in lockstep.
	Step time.Duration
	// JobDuration is how long a Job runs before it completes; default 3s.
	JobDuration time.Duration
	// Workers process objects in parallel; default 4.
	Workers int
	// Now returns the time written in status fields; default time.Now.
	Now func() time.Time
}

// Simulator drives status of the watched kinds.
type Simulator struct {
	dyn   dynamic.Interface
	opts  Options
	queue workqueue.TypedDelayingInterface[item]

	mu     sync.Mutex
	nextAt map[item]time.Time // when the object may take its next step

	informers map[schema.GroupVersionResource]cache.SharedIndexInformer
}

// item is one object to look at.
type item struct {
	gvr       schema.GroupVersionResource
	namespace string
	name      string
}

// simulated maps each watched resource to the function that computes its
// next status.
var simulated = map[schema.GroupVersionResource]stepFunc{
	{Group: "apps", Version: "v1", Resource: "deployments"}:            deploymentStep,
	{Group: "apps", Version: "v1", Resource: "statefulsets"}:           statefulSetStep,
	{Group: "apps", Version: "v1", Resource: "daemonsets"}:             daemonSetStep,
	{Group: "batch", Version: "v1", Resource: "jobs"}:                  jobStep,
	{Version: "v1", Resource: "services"}:                              serviceStep,
	{Group: "networking.k8s.io", Version: "v1", Resource: "ingresses"}: ingressStep,
	{Version: "v1", Resource: "persistentvolumeclaims"}:                pvcStep,
}

// New returns a simulator writing through dyn (use the cluster's own client,
// not the fault-injecting one).
func New(dyn dynamic.Interface, opts Options) *Simulator {
	if opts.Step <= 0 {
		opts.Step = 600 * time.Millisecond
	}
	if opts.JobDuration <= 0 {
		opts.JobDuration = 3 * time.Second
	}
	if opts.Workers <= 0 {
		opts.Workers = 4
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Simulator{
		dyn:       dyn,
		opts:      opts,
		queue:     workqueue.NewTypedDelayingQueue[item](),
		nextAt:    map[item]time.Time{},
		informers: map[schema.GroupVersionResource]cache.SharedIndexInformer{},
	}
}

// Run watches and simulates until ctx is done. It returns once its caches
// have synced and its workers stopped, i.e. after ctx ends.
func (s *Simulator) Run(ctx context.Context) error {
	factory := dynamicinformer.NewDynamicSharedInformerFactory(s.dyn, 0)
	synced := []cache.InformerSynced{}
	for gvr := range simulated {
		inf := factory.ForResource(gvr).Informer()
		if err := inf.SetTransform(slim); err != nil {
			return fmt.Errorf("watching %s: %w", gvr.Resource, err)
		}
		if _, err := inf.AddEventHandler(s.handler(gvr)); err != nil {
			return fmt.Errorf("watching %s: %w", gvr.Resource, err)
		}
		s.informers[gvr] = inf
		synced = append(synced, inf.HasSynced)
	}
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	defer s.queue.ShutDown()
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		return ctx.Err()
	}
	var wg sync.WaitGroup
	for range s.opts.Workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for s.processNext(ctx) {
			}
		}()
	}
	<-ctx.Done()
	s.queue.ShutDown()
	wg.Wait()
	return nil
}

// slim is the simulator's informer transform: its cache (a copy of every
// simulated object: at 1,000 fanout instances 8,000 of them) keeps only what
// the step functions read — identity, generation, deletion, the few spec
// fields below and status — not managedFields or pod templates, most of an
// object.
func slim(obj any) (any, error) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return obj, nil
	}
	out := map[string]any{"apiVersion": u.Object["apiVersion"], "kind": u.Object["kind"]}
	if md, ok := u.Object["metadata"].(map[string]any); ok {
		m := make(map[string]any, len(slimMetadata))
		for _, k := range slimMetadata {
			if v, ok := md[k]; ok {
				m[k] = v
			}
		}
		out["metadata"] = m
	}
	if spec, ok := u.Object["spec"].(map[string]any); ok {
		m := map[string]any{}
		for _, k := range slimSpec {
			if v, ok := spec[k]; ok {
				m[k] = v
			}
		}
		out["spec"] = m
	}
	if status, ok := u.Object["status"]; ok {
		out["status"] = status
	}
	u.Object = out
	return u, nil
}

// slimMetadata and slimSpec are the fields slim keeps: what steps.go reads
// (and the informer needs), for every simulated kind.
var (
	slimMetadata = []string{"name", "namespace", "uid", "resourceVersion", "generation", "deletionTimestamp"}
	slimSpec     = []string{
		"replicas",          // Deployment, StatefulSet
		"completions",       // Job
		"type", "clusterIP", // Service
		"accessModes", "resources", // PersistentVolumeClaim
	}
)

func (s *Simulator) handler(gvr schema.GroupVersionResource) cache.ResourceEventHandler {
	enqueue := func(obj any) {
		if u, ok := obj.(*unstructured.Unstructured); ok {
			s.queue.Add(item{gvr: gvr, namespace: u.GetNamespace(), name: u.GetName()})
		}
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    enqueue,
		UpdateFunc: func(_, obj any) { enqueue(obj) },
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if u, ok := obj.(*unstructured.Unstructured); ok {
				s.mu.Lock()
				delete(s.nextAt, item{gvr: gvr, namespace: u.GetNamespace(), name: u.GetName()})
				s.mu.Unlock()
			}
		},
	}
}

func (s *Simulator) processNext(ctx context.Context) bool {
	it, quit := s.queue.Get()
	if quit {
		return false
	}
	defer s.queue.Done(it)
	if err := s.step(ctx, it); err != nil && ctx.Err() == nil {
		// Conflicts and races with deletion are normal: look again soon.
		s.queue.AddAfter(it, s.opts.Step)
	}
	return true
}

// stepFunc returns the next status (or patch) for obj, whether it still has
// steps to go, and how long to wait before the next one.
type stepFunc func(s *Simulator, obj *unstructured.Unstructured) (change, bool, time.Duration)

// change is one write: a status to apply, or a merge patch of the object.
type change struct {
	status map[string]any
	patch  []byte
}

func (s *Simulator) step(ctx context.Context, it item) error {
	inf := s.informers[it.gvr]
	key := it.name
	if it.namespace != "" {
		key = it.namespace + "/" + it.name
	}
	raw, exists, err := inf.GetStore().GetByKey(key)
	if err != nil || !exists {
		return err
	}
	obj := raw.(*unstructured.Unstructured).DeepCopy()
	if obj.GetDeletionTimestamp() != nil {
		return nil
	}
	now := s.opts.Now()
	s.mu.Lock()
	at, seen := s.nextAt[it]
	if !seen {
		// Objects start after a short, per-object delay.
		at = now.Add(s.jitter(it))
		s.nextAt[it] = at
	}
	s.mu.Unlock()
	if wait := at.Sub(now); wait > 0 {
		s.queue.AddAfter(it, wait)
		return nil
	}
	ch, more, after := simulated[it.gvr](s, obj)
	if err := s.write(ctx, it, obj, ch); err != nil {
		return err
	}
	if more {
		s.mu.Lock()
		s.nextAt[it] = now.Add(after)
		s.mu.Unlock()
		s.queue.AddAfter(it, after)
	}
	return nil
}

func (s *Simulator) write(ctx context.Context, it item, obj *unstructured.Unstructured, ch change) error {
	res := s.dyn.Resource(it.gvr).Namespace(it.namespace)
	if ch.patch != nil {
		_, err := res.Patch(ctx, it.name, types.MergePatchType, ch.patch, metav1.PatchOptions{FieldManager: FieldManager})
		return ignoreGone(err)
	}
	if ch.status == nil || equalJSON(obj.Object["status"], ch.status) {
		return nil
	}
	apply := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": obj.GetAPIVersion(),
		"kind":       obj.GetKind(),
		"metadata":   map[string]any{"name": it.name, "namespace": it.namespace},
		"status":     ch.status,
	}}
	_, err := res.ApplyStatus(ctx, it.name, apply, metav1.ApplyOptions{FieldManager: FieldManager, Force: true})
	return ignoreGone(err)
}

func ignoreGone(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}

// jitter is a stable per-object delay in [step/4, 3*step/4).
func (s *Simulator) jitter(it item) time.Duration {
	h := fnv.New32a()
	_, _ = h.Write([]byte(it.namespace + "/" + it.name + "/" + it.gvr.Resource))
	return s.opts.Step/4 + time.Duration(h.Sum32()%1000)*s.opts.Step/2000
}
