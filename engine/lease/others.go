package lease

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/kroscope/kroscope/engine/tick"
)

// Writer is a kroscope's Lease as seen by another: who holds it, and
// which instances its holder writes.
type Writer struct {
	// Lease is "namespace/name".
	Lease string
	// Holder is spec.holderIdentity ("" when released).
	Holder string
	// Scope is the namespace whose instances the holder writes ("" all).
	Scope string
	// Acquired is spec.acquireTime (the holder's clock; zero when unset):
	// of two kroscopes that would write the same instances, the one that
	// took its Lease first keeps writing.
	Acquired time.Time
	// Live: held, and renewed within its duration (by the local clock
	// from when the renewal was seen).
	Live bool
}

// String names the writer for the header and the log.
func (w Writer) String() string {
	scope := "all namespaces"
	if w.Scope != "" {
		scope = "namespace " + w.Scope
	}
	return fmt.Sprintf("%s holds the lease %s and writes the instances of %s", w.Holder, w.Lease, scope)
}

// Others watches every kroscope Lease in the cluster (Selector): a kroscope
// that would write the instances another one writes under another Lease
// (another --lease-namespace or --lease-name) observes instead.
type Others struct {
	mu     sync.Mutex
	leases map[string]*seenWriter
}

type seenWriter struct {
	w        Writer
	rv       string
	seenAt   time.Time // local clock, when rv last changed
	duration time.Duration
}

// ListOthers makes the first list of kroscope's Leases (an error, such as
// a user who may not list Leases in all namespaces, is returned: the
// caller cannot know whether another kroscope writes), then follows them
// with a watch until ctx is done, calling onChange on every change of
// what Writers returns.
func ListOthers(ctx context.Context, client kubernetes.Interface, log logr.Logger, onChange func()) (*Others, error) {
	list, err := client.CoordinationV1().Leases(metav1.NamespaceAll).List(ctx, metav1.ListOptions{LabelSelector: Selector})
	if err != nil {
		return nil, fmt.Errorf("listing kroscope's Leases in all namespaces: %w", err)
	}
	o := &Others{leases: map[string]*seenWriter{}}
	for i := range list.Items {
		o.seen(&list.Items[i], time.Now())
	}
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0,
		informers.WithTweakListOptions(func(lo *metav1.ListOptions) { lo.LabelSelector = Selector }))
	inf := factory.Coordination().V1().Leases().Informer()
	_, err = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { o.event(obj, false, onChange) },
		UpdateFunc: func(_, obj any) { o.event(obj, false, onChange) },
		DeleteFunc: func(obj any) { o.event(obj, true, onChange) },
	})
	if err != nil {
		return nil, err
	}
	factory.Start(ctx.Done())
	go func() {
		defer factory.Shutdown()
		// Expiry is time passing, not an event.
		last := o.Writers()
		tick.Every(ctx, time.Second, nil, func() bool {
			if now := o.Writers(); !sameWriters(now, last) {
				last = now
				onChange()
			}
			return false
		})
	}()
	log.V(1).Info("following kroscope's Leases", "selector", Selector, "seen", len(list.Items))
	return o, nil
}

func (o *Others) event(obj any, deleted bool, onChange func()) {
	l, ok := obj.(*coordinationv1.Lease)
	if !ok {
		if d, isTomb := obj.(cache.DeletedFinalStateUnknown); isTomb {
			l, ok = d.Obj.(*coordinationv1.Lease)
		}
	}
	if !ok {
		return
	}
	if deleted {
		o.mu.Lock()
		delete(o.leases, l.Namespace+"/"+l.Name)
		o.mu.Unlock()
	} else {
		o.seen(l, time.Now())
	}
	onChange()
}

// seen records a Lease: its holder and scope, and when it last changed.
func (o *Others) seen(l *coordinationv1.Lease, now time.Time) {
	key := l.Namespace + "/" + l.Name
	o.mu.Lock()
	defer o.mu.Unlock()
	s := o.leases[key]
	if s == nil {
		s = &seenWriter{}
		o.leases[key] = s
	}
	h := holderOf(l, now)
	s.w = Writer{Lease: key, Holder: h.Identity, Scope: l.Labels[ScopeLabel]}
	if l.Spec.AcquireTime != nil {
		s.w.Acquired = l.Spec.AcquireTime.Time
	}
	s.duration = 0
	if l.Spec.LeaseDurationSeconds != nil {
		s.duration = time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second
	}
	if l.ResourceVersion != s.rv {
		first := s.rv == ""
		s.rv, s.seenAt = l.ResourceVersion, now
		if first && h.Expired {
			// Not renewed for longer than its duration by its own record.
			s.seenAt = now.Add(-s.duration - time.Second)
		}
	}
}

// Writers returns every kroscope Lease seen, sorted by Lease, with
// whether its holder is live now.
func (o *Others) Writers() []Writer {
	if o == nil {
		return nil
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	out := make([]Writer, 0, len(o.leases))
	for _, s := range o.leases {
		w := s.w
		w.Live = w.Holder != "" && time.Since(s.seenAt) <= s.duration
		out = append(out, w)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Lease < out[j].Lease })
	return out
}

func sameWriters(a, b []Writer) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
