package memcluster

import (
	"fmt"
	"strconv"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
)

// event is one change, kept in the log so watches can resume from a
// resourceVersion. obj is the version the event carries (shared with the
// store while it is current); old is the metadata of the version before, for
// selectors (nil for ADDED).
type event struct {
	rv  int64
	gvr schema.GroupVersionResource
	typ watch.EventType
	obj *stored
	old *objMeta
}

// selector is a parsed label and field selector.
type selector struct {
	labels labels.Selector
	fields fields.Selector
}

func parseSelectors(opts metav1.ListOptions) (selector, error) {
	s := selector{labels: labels.Everything(), fields: fields.Everything()}
	var err error
	if opts.LabelSelector != "" {
		if s.labels, err = labels.Parse(opts.LabelSelector); err != nil {
			return s, apierrors.NewBadRequest(fmt.Sprintf("invalid label selector %q: %v", opts.LabelSelector, err))
		}
	}
	if opts.FieldSelector != "" {
		if s.fields, err = fields.ParseSelector(opts.FieldSelector); err != nil {
			return s, apierrors.NewBadRequest(fmt.Sprintf("invalid field selector %q: %v", opts.FieldSelector, err))
		}
	}
	return s, nil
}

func (s selector) matches(m *objMeta) bool {
	if m == nil {
		return false
	}
	if !s.labels.Matches(labels.Set(m.labels)) {
		return false
	}
	if s.fields.Empty() {
		return true
	}
	set := fields.Set{"metadata.name": m.name, "metadata.namespace": m.namespace}
	for k, v := range m.fields {
		set[k] = v
	}
	return s.fields.Matches(set)
}

// recordLocked appends e to the log and hands it to every watcher.
func (c *Cluster) recordLocked(e event) {
	c.events = append(c.events, e)
	c.logBytes += len(e.obj.data)
	if len(c.events) > c.eventCap || c.logBytes > c.eventCapBytes {
		// Drop the oldest quarter at once, so the copy is rare.
		drop := max(len(c.events)/4, 1)
		for _, d := range c.events[:drop] {
			c.logBytes -= len(d.obj.data)
		}
		c.logFloor = c.events[drop-1].rv
		c.events = append(c.events[:0:0], c.events[drop:]...)
	}
	for w := range c.watchers {
		w.offer(e)
	}
}

// watch starts a watch of gvr in ns. A resourceVersion replays the logged
// events after it (410 Gone when they are no longer logged); none, or
// sendInitialEvents, starts with an ADDED event per existing object.
func (c *Cluster) watch(gvr schema.GroupVersionResource, ns string, opts metav1.ListOptions, transform func(*unstructured.Unstructured) runtime.Object) (watch.Interface, error) {
	sel, err := parseSelectors(opts)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	k, err := c.kindLocked(gvr)
	if err != nil {
		return nil, err
	}
	if !k.namespaced {
		ns = ""
	}
	w := newWatcher(c, gvr, ns, sel, transform)
	initial := opts.ResourceVersion == "" || opts.ResourceVersion == "0" ||
		(opts.SendInitialEvents != nil && *opts.SendInitialEvents)
	if initial {
		for key, s := range c.objects[gvr] {
			if ns == "" || key.Namespace == ns {
				w.offer(event{rv: c.rv, gvr: gvr, typ: watch.Added, obj: s})
			}
		}
		if opts.SendInitialEvents != nil && *opts.SendInitialEvents {
			bm := &unstructured.Unstructured{}
			bm.SetGroupVersionKind(k.gvk)
			bm.SetResourceVersion(strconv.FormatInt(c.rv, 10))
			bm.SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
			w.push(watch.Event{Type: watch.Bookmark, Object: transform(bm)})
		}
	} else {
		from, err := strconv.ParseInt(opts.ResourceVersion, 10, 64)
		if err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("invalid resourceVersion %q", opts.ResourceVersion))
		}
		if from < c.logFloor {
			return nil, apierrors.NewResourceExpired(fmt.Sprintf("too old resource version: %d (%d)", from, c.logFloor))
		}
		for _, e := range c.events {
			if e.rv > from && e.gvr == gvr {
				w.offer(e)
			}
		}
	}
	c.watchers[w] = struct{}{}
	return w, nil
}

// watcher delivers events through an unbounded queue, so a slow consumer
// never blocks a write (client-go's fake watcher panics when 100 events wait).
type watcher struct {
	c         *Cluster
	gvr       schema.GroupVersionResource
	ns        string
	sel       selector
	transform func(*unstructured.Unstructured) runtime.Object

	mu      sync.Mutex
	cond    *sync.Cond
	queue   []queued
	stopped bool
	out     chan watch.Event
	done    chan struct{} // closed by Stop
}

func newWatcher(c *Cluster, gvr schema.GroupVersionResource, ns string, sel selector, transform func(*unstructured.Unstructured) runtime.Object) *watcher {
	w := &watcher{c: c, gvr: gvr, ns: ns, sel: sel, transform: transform, out: make(chan watch.Event), done: make(chan struct{})}
	w.cond = sync.NewCond(&w.mu)
	go w.run()
	return w
}

// offer queues e if it concerns this watch, turning a change that moves an
// object into or out of the selector into ADDED or DELETED as the API
// server does.
func (w *watcher) offer(e event) {
	if e.gvr != w.gvr || (w.ns != "" && e.obj.namespace != w.ns) {
		return
	}
	now, before := w.sel.matches(&e.obj.objMeta), w.sel.matches(e.old)
	typ := e.typ
	switch e.typ {
	case watch.Modified:
		switch {
		case now && before:
		case now:
			typ = watch.Added
		case before:
			typ = watch.Deleted
		default:
			return
		}
	case watch.Deleted:
		if !before {
			return
		}
	default:
		if !now {
			return
		}
	}
	w.enqueue(queued{typ: typ, obj: e.obj})
}

// queued is one event waiting for delivery: a stored version (decoded only
// when it is sent, so a backlog holds no copies) or a ready event.
type queued struct {
	typ   watch.EventType
	obj   *stored
	ready watch.Event
}

func (w *watcher) push(e watch.Event) { w.enqueue(queued{ready: e}) }

func (w *watcher) enqueue(q queued) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopped {
		return
	}
	w.queue = append(w.queue, q)
	w.cond.Signal()
}

// event turns q into the watch event the client receives.
func (w *watcher) event(q queued) watch.Event {
	if q.obj == nil {
		return q.ready
	}
	obj, err := q.obj.decode()
	if err != nil {
		return watch.Event{Type: watch.Error, Object: &apierrors.NewInternalError(err).ErrStatus}
	}
	return watch.Event{Type: q.typ, Object: w.transform(obj)}
}

func (w *watcher) run() {
	defer close(w.out)
	for {
		w.mu.Lock()
		for len(w.queue) == 0 && !w.stopped {
			w.cond.Wait()
		}
		if w.stopped {
			w.mu.Unlock()
			return
		}
		q := w.queue[0]
		w.queue[0] = queued{}
		w.queue = w.queue[1:]
		w.mu.Unlock()
		select {
		case w.out <- w.event(q):
		case <-w.done:
			return
		}
	}
}

// Stop ends the watch and closes its result channel.
func (w *watcher) Stop() {
	w.c.mu.Lock()
	delete(w.c.watchers, w)
	w.c.mu.Unlock()
	w.mu.Lock()
	if !w.stopped {
		w.stopped = true
		close(w.done)
		w.cond.Broadcast()
	}
	w.mu.Unlock()
}

// ResultChan returns the events.
func (w *watcher) ResultChan() <-chan watch.Event { return w.out }
