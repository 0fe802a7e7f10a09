package engine

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/tools/cache"

	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/engine/watch"
)

// informers are the engine's shared watches and their health: the
// metadata-only watches of children and external objects (one per kind,
// namespace and selector, shared by every graph), and the monitors of
// every informer, whose health the state shows. Set up by Run's first
// step; the other groups use them through these methods.
type informers struct {
	group   *watch.Group
	watches *watch.Manager
}

// start creates the watches: their events go to route, and a watch that
// is forbidden, or works again, to onAccess.
func (i *informers) start(ctx context.Context, store *state.Store, md metadata.Interface, route func(watch.Event), onAccess func(state.Watch, bool)) {
	i.group = watch.NewGroup(store)
	i.group.OnAccess(onAccess)
	i.watches = watch.NewManager(ctx, md, i.group, route)
}

// probe checks the API server every two seconds; while it fails every
// watch is reported broken, and onBack runs once it answers again.
func (i *informers) probe(ctx context.Context, ask func(context.Context) error, onBack func()) {
	i.group.Probe(ctx, 2*time.Second, ask, onBack)
}

// watchGroup is the group an informer started elsewhere joins (the
// cluster's graphs).
func (i *informers) watchGroup() *watch.Group { return i.group }

// monitored reports inf's health under name.
func (i *informers) monitored(inf cache.SharedIndexInformer, name string) *watch.Monitor {
	return i.group.Monitored(inf, name)
}

// monitoredScope reports the health of an instance kind's informer.
func (i *informers) monitoredScope(inf cache.SharedIndexInformer, name, resource, namespace string) *watch.Monitor {
	return i.group.MonitoredScope(inf, name, resource, namespace)
}

// acquire shares the watch of sp until release.
func (i *informers) acquire(sp watch.Spec) (release func()) { return i.watches.Acquire(sp) }

// waitForSync waits until every watch of specs has synced (false: ctx done).
func (i *informers) waitForSync(ctx context.Context, specs ...watch.Spec) bool {
	return i.watches.WaitForSync(ctx, specs...)
}

// lookup finds an object in the watch of sp (ok: that watch has synced).
func (i *informers) lookup(sp watch.Spec, namespace, name string) (obj metav1.Object, exists, ok bool) {
	return i.watches.Lookup(sp, namespace, name)
}
