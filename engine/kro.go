package engine

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"

	"github.com/kroscope/kroscope/engine/krodetect"
	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/reconciler/metadata"
)

// graphRevisionGVR is kro's GraphRevision (kro v0.9.1 and later).
var graphRevisionGVR = schema.GroupVersionResource{Group: "internal.kro.run", Version: "v1alpha1", Resource: "graphrevisions"}

// startKroDetection makes the first check for kro's controller (its Lease,
// Deployment and, when the cluster has graphs, its writes on them) before
// anything is written, then watches them and checks every KroPollInterval.
func (e *Engine) startKroDetection(ctx context.Context, clusterRGDs bool) {
	kube := e.cl.base.Kubernetes()
	if e.o.KroPollInterval < 0 || kube == nil {
		return
	}
	d := krodetect.New(krodetect.Config{Kube: kube, OwnManager: metadata.FieldManager, TakeOver: e.o.TakeOver, Since: time.Now(), Silence: e.o.KroSilence})
	e.kro.detector.Store(d)
	poll := func() {
		for _, err := range d.Poll(ctx) {
			if ctx.Err() == nil {
				e.log.V(1).Info("kro detection", "error", err.Error())
			}
		}
	}
	poll()
	if clusterRGDs {
		list, err := e.cl.set.Dynamic().Resource(graph.GroupVersionResource).List(ctx, metav1.ListOptions{})
		if err == nil {
			for i := range list.Items {
				u := &list.Items[i]
				d.Note(rgdWhat(u.GetName()), u)
				d.NoteGraph(rgdWhat(u.GetName()), krodetect.Unanswered(u))
			}
		}
	}
	e.refreshKro(d)
	// kro's Lease and Deployment are watched: one that appears is acted
	// on at once (before kro's first reconcile completes); the poll is for
	// time passing (a Lease's expiry) and a watch this user may not have.
	changed := make(chan struct{}, 1)
	go d.Watch(ctx, func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	})
	go func() {
		t := time.NewTicker(e.o.KroPollInterval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			case <-changed:
			}
			poll()
			e.refreshKro(d)
		}
	}()
}

func rgdWhat(name string) string { return "ResourceGraphDefinition " + name }

func instanceWhat(resource string, u metav1.Object) string {
	if u.GetNamespace() == "" {
		return resource + " " + u.GetName()
	}
	return resource + " " + u.GetNamespace() + "/" + u.GetName()
}

// noteWrites passes an object's managedFields to the detector.
func (e *Engine) noteWrites(what string, obj metav1.Object) {
	d := e.kro.detector.Load()
	if d == nil {
		return
	}
	d.Note(what, obj)
	e.refreshKro(d)
}

// noteGraph passes a cluster graph to the detector: its writes, and
// whether it holds a change kro has not answered.
func (e *Engine) noteGraph(u *unstructured.Unstructured) {
	d := e.kro.detector.Load()
	if d == nil {
		return
	}
	d.Note(rgdWhat(u.GetName()), u)
	d.NoteGraph(rgdWhat(u.GetName()), krodetect.Unanswered(u))
	e.refreshKro(d)
}

// forgetGraph drops a deleted graph's unanswered change. What kro was
// seen writing on it is kept: a kro whose objects are gone is idle, not
// absent.
func (e *Engine) forgetGraph(name string) {
	d := e.kro.detector.Load()
	if d != nil {
		d.Forget(rgdWhat(name))
	}
}

// refreshKro asks the detector for its verdict; when whether kroscope may
// write changes (or why not), the gate, the lease campaign, the header and
// the log follow. kroMu keeps two callers (a watch event, the poll) from
// recording their verdicts in the other order, an older one last.
func (e *Engine) refreshKro(d *krodetect.Detector) {
	e.kro.mu.Lock()
	v := d.Verdict()
	line := v.Line(e.o.TakeOver)
	was := e.setKro(v) // the gate, the campaign and the header follow
	e.kro.mu.Unlock()
	switch {
	case line == was:
		return
	case line != "":
		e.log.Info(line)
	default:
		e.log.Info(v.Changed(), "was", was)
	}
	e.refreshKroViews()
}

// kroState is what the engine knows of kro's controller.
type kroState struct {
	// mu orders kro verdicts (see refreshKro).
	mu sync.Mutex
	// detector collects the evidence (nil without a real cluster).
	detector atomic.Pointer[krodetect.Detector]
	view     kroView
}

// kroView is what kro reports per graph: the RGD objects as last seen and
// the GraphRevisions by graph name.
type kroView struct {
	mu   sync.Mutex
	rgds map[string]*unstructured.Unstructured
	revs map[string]map[string]revision // graph → GraphRevision name → revision
}

// all returns the cluster RGDs as last seen.
func (v *kroView) all() []*unstructured.Unstructured {
	v.mu.Lock()
	defer v.mu.Unlock()
	return slices.Collect(maps.Values(v.rgds))
}

type revision struct {
	number   int64
	verified string // GraphVerified status: True, False, Unknown or ""
	message  string
}

// noteKroRGD records a cluster RGD as seen (every update, status included).
func (e *Engine) noteKroRGD(ctx context.Context, u *unstructured.Unstructured) {
	e.noteGraph(u)
	e.releaseKroFinalizer(ctx, u)
	v := &e.kro.view
	v.mu.Lock()
	if v.rgds == nil {
		v.rgds = map[string]*unstructured.Unstructured{}
	}
	v.rgds[u.GetName()] = u
	v.mu.Unlock()
	e.refreshKroView(u.GetName())
}

func (e *Engine) forgetKroRGD(name string) {
	e.forgetGraph(name)
	v := &e.kro.view
	v.mu.Lock()
	delete(v.rgds, name)
	v.mu.Unlock()
	e.store.SetKro(name, nil)
}

func (e *Engine) refreshKroViews() {
	v := &e.kro.view
	v.mu.Lock()
	names := make([]string, 0, len(v.rgds))
	for n := range v.rgds {
		names = append(names, n)
	}
	v.mu.Unlock()
	for _, n := range names {
		e.refreshKroView(n)
	}
}

// refreshKroView derives kro's view of one graph. It is shown only when
// kro wrote the RGD's status last (kroscope's own status is not kro's).
func (e *Engine) refreshKroView(name string) {
	v := &e.kro.view
	v.mu.Lock()
	u := v.rgds[name]
	revs := v.revs[name]
	var list []revision
	for _, r := range revs {
		list = append(list, r)
	}
	v.mu.Unlock()
	if u == nil || !kroWroteStatus(u) {
		e.store.SetKro(name, nil)
		return
	}
	k := &state.KroGraph{}
	k.State, _, _ = unstructured.NestedString(u.Object, "status", "state")
	k.LatestRevision, _, _ = unstructured.NestedInt64(u.Object, "status", "lastIssuedRevision")
	var failed *revision
	for i, r := range list {
		k.LatestRevision = max(k.LatestRevision, r.number)
		if r.verified == "True" && r.number > k.Revision {
			k.Revision = r.number
		}
		if r.verified == "False" && (failed == nil || r.number > failed.number) {
			failed = &list[i]
		}
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	k.Conditions = conditionsOf(u)
	for _, t := range []string{"GraphAccepted", "KindReady", "ControllerReady", "GraphRevisionsResolved"} {
		for _, c := range conds {
			m, _ := c.(map[string]any)
			if m["type"] == t && m["status"] == "False" {
				k.Blocked = fmt.Sprintf("%s: %v", t, m["message"])
				break
			}
		}
		if k.Blocked != "" {
			break
		}
	}
	if k.Blocked == "" && failed != nil && failed.number > k.Revision {
		k.Blocked = fmt.Sprintf("revision %d failed: %s", failed.number, failed.message)
	}
	e.store.SetKro(name, k)
}

// kroWroteStatus: the RGD's status was last written by kro's manager.
func kroWroteStatus(u *unstructured.Unstructured) bool {
	var kro, other time.Time
	for _, f := range u.GetManagedFields() {
		if f.Subresource != "status" || f.Time == nil {
			continue
		}
		if krodetect.KroManagers[f.Manager] {
			kro = maxTime(kro, f.Time.Time)
		} else {
			other = maxTime(other, f.Time.Time)
		}
	}
	return !kro.IsZero() && !kro.Before(other)
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// watchGraphRevisions follows kro's GraphRevisions when the cluster has
// them, to show which revision kro serves and whether one failed.
// Until the API server serves them (kro's CRDs may be installed after
// kroscope starts, and discovery lags a freshly created CRD) it asks again,
// from every second up to every graphRevisionRetryMax (kro before v0.9.1
// has no GraphRevisions at all).
func (e *Engine) watchGraphRevisions(ctx context.Context) {
	d := e.cl.set.Discovery()
	if d == nil {
		return
	}
	for wait := time.Second; !e.servesGraphRevisions(d); wait = min(2*wait, graphRevisionRetryMax) {
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
	inf := dynamicinformer.NewFilteredDynamicInformer(e.cl.set.Dynamic(), graphRevisionGVR, "", 0, cache.Indexers{}, nil).Informer()
	mon := e.informers.group.Monitored(inf, graphRevisionGVR.Resource+"."+graphRevisionGVR.Group)
	put := func(obj any, gone bool) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				u, _ = t.Obj.(*unstructured.Unstructured)
			}
		}
		if u == nil {
			return
		}
		graphName, _, _ := unstructured.NestedString(u.Object, "spec", "snapshot", "name")
		if graphName == "" {
			return
		}
		r := revision{}
		r.number, _, _ = unstructured.NestedInt64(u.Object, "spec", "revision")
		conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
		for _, c := range conds {
			if m, _ := c.(map[string]any); m["type"] == "GraphVerified" {
				r.verified, _ = m["status"].(string)
				r.message, _ = m["message"].(string)
			}
		}
		v := &e.kro.view
		v.mu.Lock()
		if v.revs == nil {
			v.revs = map[string]map[string]revision{}
		}
		if v.revs[graphName] == nil {
			v.revs[graphName] = map[string]revision{}
		}
		if gone || u.GetDeletionTimestamp() != nil {
			delete(v.revs[graphName], u.GetName())
		} else {
			v.revs[graphName][u.GetName()] = r
		}
		v.mu.Unlock()
		e.refreshKroView(graphName)
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { mon.Event("add"); put(obj, false) },
		UpdateFunc: func(_, obj any) { mon.Event("update"); put(obj, false) },
		DeleteFunc: func(obj any) { mon.Event("delete"); put(obj, true) },
	})
	mon.Run(ctx, time.Second)
}

// graphRevisionRetryMax bounds how seldom kroscope asks discovery whether
// GraphRevisions are served yet.
const graphRevisionRetryMax = time.Minute

// servesGraphRevisions reports whether discovery lists kro's GraphRevisions.
func (e *Engine) servesGraphRevisions(d interface {
	ServerResourcesForGroupVersion(string) (*metav1.APIResourceList, error)
}) bool {
	list, err := d.ServerResourcesForGroupVersion(graphRevisionGVR.GroupVersion().String())
	if err != nil || list == nil {
		return false
	}
	for _, r := range list.APIResources {
		if r.Name == graphRevisionGVR.Resource {
			return true
		}
	}
	return false
}

// kroFinalizer is the finalizer kro puts on every RGD it serves.
const kroFinalizer = krodetect.Finalizer

// releaseKroFinalizer removes kro's finalizer from an RGD being deleted
// while kroscope writes (so kro is not running): kro would remove it after
// stopping the graph's controller, and without kro the RGD would never go
// away. Like kro by default, the instance CRD is kept.
func (e *Engine) releaseKroFinalizer(ctx context.Context, u *unstructured.Unstructured) {
	if u.GetDeletionTimestamp() == nil || !e.writing() {
		return
	}
	for i, f := range u.GetFinalizers() {
		if f != kroFinalizer {
			continue
		}
		patch := fmt.Sprintf(`[{"op":"test","path":"/metadata/finalizers/%d","value":%q},{"op":"remove","path":"/metadata/finalizers/%d"}]`, i, kroFinalizer, i)
		name := u.GetName()
		go func() {
			_, err := e.cl.set.Dynamic().Resource(graph.GroupVersionResource).Patch(ctx, name, types.JSONPatchType, []byte(patch), metav1.PatchOptions{FieldManager: metadata.FieldManager})
			switch {
			case err == nil:
				e.log.Info("ResourceGraphDefinition deleted: removed kro's finalizer (kro is not running; the instance CRD is kept)", "graph", name)
			case ctx.Err() == nil:
				e.log.Error(err, "removing kro's finalizer from a deleted ResourceGraphDefinition", "graph", name)
			}
		}()
		return
	}
}
