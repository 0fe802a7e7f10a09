package engine

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"

	"github.com/kroscope/kroscope/engine/krodetect"
	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/reconciler/client"
	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/reconciler/metadata"
)

// graphRevisionGVR is kro's GraphRevision (kro v0.9.1 and later).
var graphRevisionGVR = schema.GroupVersionResource{Group: "internal.kro.run", Version: "v1alpha1", Resource: "graphrevisions"}

// kroView decides what the graphs screen shows of kro's own view of each
// cluster graph (state.KroGraph): from the RGD objects as last seen and
// kro's GraphRevisions. It also lets go of kro's finalizer on a graph
// deleted while kro does not run.
type kroView struct {
	mu   sync.Mutex
	rgds map[string]*unstructured.Unstructured
	revs map[string]map[string]revision // graph → GraphRevision name → revision

	set       *client.Set
	informers *informers
	store     *state.Store
	log       logr.Logger
	writing   func() bool // whether this process writes now
}

type revision struct {
	number   int64
	verified string // GraphVerified status: True, False, Unknown or ""
	message  string
}

// note records a cluster RGD as seen (every update, status included).
func (v *kroView) note(ctx context.Context, u *unstructured.Unstructured) {
	v.releaseFinalizer(ctx, u)
	v.mu.Lock()
	if v.rgds == nil {
		v.rgds = map[string]*unstructured.Unstructured{}
	}
	v.rgds[u.GetName()] = u
	v.mu.Unlock()
	v.refresh(u.GetName())
}

// forget drops a deleted graph.
func (v *kroView) forget(name string) {
	v.mu.Lock()
	delete(v.rgds, name)
	v.mu.Unlock()
	v.store.SetKro(name, nil)
}

// refreshAll derives kro's view of every graph again.
func (v *kroView) refreshAll() {
	v.mu.Lock()
	names := slices.Collect(maps.Keys(v.rgds))
	v.mu.Unlock()
	for _, n := range names {
		v.refresh(n)
	}
}

// refresh derives kro's view of one graph. It is shown only when kro
// wrote the RGD's status last (kroscope's own status is not kro's).
func (v *kroView) refresh(name string) {
	v.mu.Lock()
	u := v.rgds[name]
	list := slices.Collect(maps.Values(v.revs[name]))
	v.mu.Unlock()
	if u == nil || !kroWroteStatus(u) {
		v.store.SetKro(name, nil)
		return
	}
	v.store.SetKro(name, kroGraph(u, list))
}

// kroGraph is what kro reports of one graph: its state, the revision it
// serves and the latest, and why it is blocked.
func kroGraph(u *unstructured.Unstructured, list []revision) *state.KroGraph {
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
	return k
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

// watchRevisions follows kro's GraphRevisions when the cluster has
// them, to show which revision kro serves and whether one failed.
// Until the API server serves them (kro's CRDs may be installed after
// kroscope starts, and discovery lags a freshly created CRD) it asks again,
// from every second up to every graphRevisionRetryMax (kro before v0.9.1
// has no GraphRevisions at all).
func (v *kroView) watchRevisions(ctx context.Context) {
	d := v.set.Discovery()
	if d == nil {
		return
	}
	for wait := time.Second; !servesGraphRevisions(d); wait = min(2*wait, graphRevisionRetryMax) {
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
	inf := dynamicinformer.NewFilteredDynamicInformer(v.set.Dynamic(), graphRevisionGVR, "", 0, cache.Indexers{}, nil).Informer()
	mon := v.informers.monitored(inf, graphRevisionGVR.Resource+"."+graphRevisionGVR.Group)
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { mon.Event("add"); v.putRevision(obj, false) },
		UpdateFunc: func(_, obj any) { mon.Event("update"); v.putRevision(obj, false) },
		DeleteFunc: func(obj any) { mon.Event("delete"); v.putRevision(obj, true) },
	})
	mon.Run(ctx, time.Second)
}

// putRevision records a GraphRevision's event (gone: its deletion).
func (v *kroView) putRevision(obj any, gone bool) {
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
	v.refresh(graphName)
}

// graphRevisionRetryMax bounds how seldom kroscope asks discovery whether
// GraphRevisions are served yet.
const graphRevisionRetryMax = time.Minute

// servesGraphRevisions reports whether discovery lists kro's GraphRevisions.
func servesGraphRevisions(d interface {
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

// releaseFinalizers lets go of kro's finalizer on every RGD deleted while
// another process wrote (this one starts writing).
func (v *kroView) releaseFinalizers(ctx context.Context) {
	v.mu.Lock()
	rgds := slices.Collect(maps.Values(v.rgds))
	v.mu.Unlock()
	for _, u := range rgds {
		v.releaseFinalizer(ctx, u)
	}
}

// releaseFinalizer removes kro's finalizer from an RGD being deleted
// while kroscope writes (so kro is not running): kro would remove it after
// stopping the graph's controller, and without kro the RGD would never go
// away. Like kro by default, the instance CRD is kept.
func (v *kroView) releaseFinalizer(ctx context.Context, u *unstructured.Unstructured) {
	if u.GetDeletionTimestamp() == nil || !v.writing() {
		return
	}
	for i, f := range u.GetFinalizers() {
		if f != kroFinalizer {
			continue
		}
		patch := fmt.Sprintf(`[{"op":"test","path":"/metadata/finalizers/%d","value":%q},{"op":"remove","path":"/metadata/finalizers/%d"}]`, i, kroFinalizer, i)
		name := u.GetName()
		go func() {
			_, err := v.set.Dynamic().Resource(graph.GroupVersionResource).Patch(ctx, name, types.JSONPatchType, []byte(patch), metav1.PatchOptions{FieldManager: metadata.FieldManager})
			switch {
			case err == nil:
				v.log.Info("ResourceGraphDefinition deleted: removed kro's finalizer (kro is not running; the instance CRD is kept)", "graph", name)
			case ctx.Err() == nil:
				v.log.Error(err, "removing kro's finalizer from a deleted ResourceGraphDefinition", "graph", name)
			}
		}()
		return
	}
}
