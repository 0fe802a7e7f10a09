package engine

import (
	"github.com/go-logr/logr"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/engine/watch"
	"github.com/kroscope/kroscope/reconciler"
	"github.com/kroscope/kroscope/reconciler/metadata"
)

// router decides which instances a watch event of a child or an external
// object wakes, over the graphs served (one handler serves every graph),
// and which to wake all at once (the gate changed, the API server came
// back).
type router struct {
	table *graphTable
	work  *workQueue
	store *state.Store
	log   logr.Logger
}

// itemOf is key's queue item in s.
func itemOf(s *served, key state.InstanceKey) item {
	return item{gvr: s.gvr, namespace: key.Namespace, name: key.Name}
}

// enqueueAll adds every cached instance of s (optionally of one namespace).
func (r *router) enqueueAll(s *served, namespace ...string) int {
	if s.inf == nil {
		return 0
	}
	n := 0
	for _, k := range s.inf.GetIndexer().ListKeys() {
		ns, name, err := cache.SplitMetaNamespaceKey(k)
		if err != nil || (len(namespace) > 0 && ns != namespace[0]) {
			continue
		}
		r.work.add(item{gvr: s.gvr, namespace: ns, name: name})
		n++
	}
	return n
}

// wakeAll adds every instance of every graph served.
func (r *router) wakeAll() {
	for _, s := range r.table.all() {
		r.enqueueAll(s)
	}
}

// retryFailed runs when the API server is reachable again: instances that
// failed during the outage are retried now instead of after their backoff.
// Locally only: an attached engine must not write requeue annotations on
// its own.
func (r *router) retryFailed() {
	n := 0
	for _, in := range r.store.Snapshot().Instances {
		if in.State != reconciler.InstanceStateError {
			continue
		}
		if s, err := r.table.servedFor(in.Key); err == nil {
			r.work.addNow(itemOf(s, in.Key))
			n++
		}
	}
	r.log.Info("API server reachable again; retrying failed instances", "instances", n)
}

// route wakes the instances a child or external event concerns.
func (r *router) route(ev watch.Event) {
	if ev.Spec.ExternalSelector {
		r.routeSelected(ev)
		return
	}
	if ev.Spec.FieldSelector != "" {
		for s := range r.table.each() {
			for _, ref := range s.external {
				if ref.gvr != ev.Spec.GVR || ref.name != ev.Name {
					continue
				}
				if ref.namespace == "" {
					r.enqueueAll(s, ev.Namespace) // instances in the object's namespace read it
				} else if ref.namespace == ev.Namespace {
					r.enqueueAll(s)
				}
			}
		}
		return
	}
	r.routeChild(ev.Spec.GVR, ev.Labels, &ev)
	if ev.OldLabels != nil && ev.OldLabels[metadata.InstanceIDLabel] != ev.Labels[metadata.InstanceIDLabel] {
		r.routeChild(ev.Spec.GVR, ev.OldLabels, nil) // it left its instance: tell the old one too
	}
}

// routeSelected wakes every instance of the graphs whose external
// collection the object belongs to, or belonged to before an update (its
// labels left the selector).
func (r *router) routeSelected(ev watch.Event) {
	for s := range r.table.each() {
		for _, sel := range s.selectors {
			if sel.gvr != ev.Spec.GVR || (sel.namespace != "" && sel.namespace != ev.Namespace) {
				continue
			}
			if sel.selector.Matches(labels.Set(ev.Labels)) || (ev.OldLabels != nil && sel.selector.Matches(labels.Set(ev.OldLabels))) {
				r.enqueueAll(s)
				break
			}
		}
	}
}

// routeChild wakes the instance whose labels the child carries, in every
// graph that has children of that kind, when the instance's UID matches
// (ev is the child's event, nil to wake it in any case).
func (r *router) routeChild(gvr schema.GroupVersionResource, labels map[string]string, ev *watch.Event) {
	uid := labels[metadata.InstanceIDLabel]
	name := labels[metadata.InstanceNameLabel]
	if uid == "" || name == "" {
		return
	}
	ns := labels[metadata.InstanceNamespaceLabel]
	key := name
	if ns != "" {
		key = ns + "/" + name
	}
	for s := range r.table.each() {
		if !s.children[gvr] || s.inf == nil {
			continue
		}
		obj, ok, err := s.inf.GetIndexer().GetByKey(key)
		if err != nil || !ok {
			continue
		}
		if m := watch.MetaOf(obj); m != nil && string(m.GetUID()) == uid {
			r.work.wakeForChild(item{gvr: s.gvr, namespace: ns, name: name}, ev)
		}
	}
}
