// Package lease makes sure only one kroscope reconciles a cluster: it holds a
// coordination.k8s.io Lease through client-go's leader election and tells
// the engine when it starts and stops writing, and who holds the lease.
package lease

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/go-logr/logr"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"

	"github.com/kroscope/kroscope/engine/readonly"
	"github.com/kroscope/kroscope/engine/tick"
)

// Defaults. The Lease lives in kroscope's own namespace (deploy/ creates
// it and the Lease), so kroscope's rights never reach another component's
// Lease; a kroscope on a laptop finds the in-cluster replicas' Lease there
// with no flag. The duration is the one kro's controller uses.
const (
	DefaultNamespace     = "kroscope-system"
	DefaultName          = "kroscope"
	DefaultLeaseDuration = 15 * time.Second
)

// Config says which lease to hold and what to do on changes.
type Config struct {
	Client kubernetes.Interface
	// Rest, when set with a Fence, is Client's config: the Lease's own
	// writes then ride connections of their own that send only while
	// the write is fresh (Fence.MaySend).
	Rest      *rest.Config
	Namespace string
	Name      string
	Identity  string
	// LeaseDuration is how long a holder that went away keeps the lease;
	// renew deadline and retry period are derived from it.
	LeaseDuration time.Duration
	Log           logr.Logger

	// OnStarted is called when this process starts holding the lease;
	// OnStopped when it stops (lost, or ctx done). OnHolder reports the
	// holder's identity whenever it changes.
	OnStarted func()
	OnStopped func()
	OnHolder  func(identity string)
	// Fence, when set, is renewed by every accepted write of the Lease
	// naming this process and lapsed before its release (see Fence);
	// OnFence hears it lapse (false) and hold again (true).
	Fence   *Fence
	OnFence func(valid bool)
	// Scope is the one namespace whose instances this kroscope writes
	// ("" for all): written on the Lease (ScopeLabel), so that another
	// kroscope with another Lease can tell whether they would both write
	// the same instances (see Others).
	Scope string
}

// RenewDeadline is how long a holder tries to renew before it gives the
// Lease up (client-go's election), for a lease of duration d.
func RenewDeadline(d time.Duration) time.Duration { return d * 2 / 3 }

// FenceFor returns the Fence of a lease of duration d (0: the default):
// it holds for RenewDeadline − Margin after each renewal sent.
func FenceFor(d time.Duration) *Fence {
	if d <= 0 {
		d = DefaultLeaseDuration
	}
	return NewFence(RenewDeadline(d) - Margin(d))
}

// Labels mark every Lease kroscope campaigns for, so that a kroscope can
// find the others whatever their Lease's name and namespace.
var Labels = map[string]string{"app.kubernetes.io/name": "kroscope", "app.kubernetes.io/component": "writer-lease"}

// ScopeLabel on a kroscope Lease is the namespace whose instances its
// holder writes; empty (or absent, a kroscope before it) for all.
const ScopeLabel = "kroscope.dev/instances-namespace"

// Selector selects kroscope's Leases (Labels).
const Selector = "app.kubernetes.io/name=kroscope,app.kubernetes.io/component=writer-lease"

func labelsFor(scope string) map[string]string {
	l := map[string]string{ScopeLabel: scope}
	for k, v := range Labels {
		l[k] = v
	}
	return l
}

// Run campaigns for the lease until ctx is done, re-campaigning after a loss.
// It releases the lease on return so another process takes over at once.
func Run(ctx context.Context, c Config) error {
	if c.Client == nil {
		return fmt.Errorf("lease %s/%s: no Kubernetes client", c.Namespace, c.Name)
	}
	if c.LeaseDuration <= 0 {
		c.LeaseDuration = DefaultLeaseDuration
	}
	var lock resourcelock.Interface = &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: c.Namespace, Name: c.Name},
		Client:     lockClient(c).CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: c.Identity},
		Labels:     labelsFor(c.Scope),
	}
	if c.Fence != nil {
		lock = newFencedLock(lock, c.Fence, c.LeaseDuration)
		go watchFence(ctx, c.Fence, c.LeaseDuration, c.OnFence)
	}
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   c.LeaseDuration,
		RenewDeadline:   RenewDeadline(c.LeaseDuration),
		RetryPeriod:     c.LeaseDuration * 2 / 15,
		ReleaseOnCancel: true,
		Name:            c.Namespace + "/" + c.Name,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(context.Context) {
				c.Log.Info("holding the lease: reconciling", "lease", c.Namespace+"/"+c.Name, "identity", c.Identity)
				if c.OnStarted != nil {
					c.OnStarted()
				}
			},
			OnStoppedLeading: func() {
				if c.Fence != nil {
					c.Fence.Lapse() // the elector gave up: so do the writes
				}
				c.Log.Info("not holding the lease: observing", "lease", c.Namespace+"/"+c.Name)
				if c.OnStopped != nil {
					c.OnStopped()
				}
			},
			OnNewLeader: func(id string) {
				if c.OnHolder != nil {
					c.OnHolder(id)
				}
			},
		},
	})
	if err != nil {
		return fmt.Errorf("lease %s/%s: %w", c.Namespace, c.Name, err)
	}
	ensureNamespace(ctx, c)
	for ctx.Err() == nil {
		le.Run(ctx) // returns when the lease is lost or ctx ends
	}
	releaseIfHeld(c)
	return nil
}

// lockClient is the client the election writes the Lease with: with a
// Fence and a config, one whose connections refuse to send a Lease write
// past its deadline (a process paused between deciding a renewal and
// sending it would otherwise send it on waking, after the Lease moved).
func lockClient(c Config) kubernetes.Interface {
	if c.Fence == nil || c.Rest == nil {
		return c.Client
	}
	wc := readonly.SendWhile(c.Rest, c.Fence.MaySend, func() error { return errLateLeaseWrite })
	if wc == nil {
		return c.Client
	}
	kube, err := kubernetes.NewForConfig(wc)
	if err != nil {
		return c.Client
	}
	return kube
}

// ensureNamespace creates the Lease's namespace when neither it nor the
// Lease exists (a cluster where kroscope was never deployed: the first
// kroscope to write makes kroscope's namespace, so the next finds its
// Lease where the Deployment's would be). Failures are logged: the
// election then says what it meets.
func ensureNamespace(ctx context.Context, c Config) {
	_, err := c.Client.CoordinationV1().Leases(c.Namespace).Get(ctx, c.Name, metav1.GetOptions{})
	if !apierrors.IsNotFound(err) {
		return
	}
	nss := c.Client.CoreV1().Namespaces()
	if _, err := nss.Get(ctx, c.Namespace, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		return
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: c.Namespace, Labels: map[string]string{"app.kubernetes.io/part-of": "kroscope"}}}
	if _, err := nss.Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		c.Log.Error(err, "creating the lease's namespace", "namespace", c.Namespace)
		return
	}
	c.Log.Info("created the lease's namespace", "namespace", c.Namespace)
}

// releaseIfHeld gives the Lease back when it still names this process.
// The elector releases what it knows it holds; but when ctx ends while its
// acquiring write is in flight, the write can land after the elector gave
// up on it, and the Lease would name a process that no longer renews it
// until it expires (an engine that failed at start did that). The write is
// conditional on the version read, so a new holder is never cleared.
func releaseIfHeld(c Config) {
	if c.Fence != nil {
		c.Fence.Lapse()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	leases := c.Client.CoordinationV1().Leases(c.Namespace)
	l, err := leases.Get(ctx, c.Name, metav1.GetOptions{})
	if err != nil || l.Spec.HolderIdentity == nil || *l.Spec.HolderIdentity != c.Identity {
		return
	}
	one := int32(1)
	now := metav1.NewMicroTime(time.Now())
	l.Spec.HolderIdentity, l.Spec.LeaseDurationSeconds, l.Spec.RenewTime = nil, &one, &now
	if _, err := leases.Update(ctx, l, metav1.UpdateOptions{}); err != nil {
		c.Log.Error(err, "releasing the lease", "lease", c.Namespace+"/"+c.Name)
	}
}

// watchFence calls onChange when the fence lapses or holds again, checked
// a few times per retry period (the gate itself asks at each write; this
// is for the log and the queue), until ctx is done.
func watchFence(ctx context.Context, f *Fence, d time.Duration, onChange func(bool)) {
	if onChange == nil {
		return
	}
	t := time.NewTicker(max(d/60, 10*time.Millisecond))
	defer t.Stop()
	was := f.Valid()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if v := f.Valid(); v != was {
			was = v
			onChange(v)
		}
	}
}

// Holder is what a process that does not campaign knows of the Lease.
type Holder struct {
	// Identity is spec.holderIdentity ("" when nobody holds it).
	Identity string
	// Expired is true when the holder has not renewed within the lease
	// duration: it went away without releasing the Lease.
	Expired bool
}

// Free reports whether the Lease may be taken without fighting anyone:
// nobody holds it, self holds it (a restart), or its holder has not renewed
// it within its duration. A missing Lease is free. The renew time is the
// holder's clock, so a large clock skew can mistake a live holder for an
// expired one: only a process that asked to campaign when free uses this.
func Free(ctx context.Context, client kubernetes.Interface, namespace, name, self string, now time.Time) (bool, Holder, error) {
	l, err := client.CoordinationV1().Leases(namespace).Get(ctx, name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return true, Holder{}, nil
	}
	if err != nil {
		return false, Holder{}, fmt.Errorf("lease %s/%s: %w", namespace, name, err)
	}
	h := holderOf(l, now)
	return h.Identity == "" || h.Identity == self || h.Expired, h, nil
}

func holderOf(l *coordinationv1.Lease, now time.Time) Holder {
	h := Holder{}
	if l.Spec.HolderIdentity != nil {
		h.Identity = *l.Spec.HolderIdentity
	}
	if h.Identity != "" && l.Spec.LeaseDurationSeconds != nil {
		renewed := l.Spec.RenewTime
		if renewed == nil {
			renewed = l.Spec.AcquireTime
		}
		if renewed != nil {
			h.Expired = now.After(renewed.Add(time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second))
		}
	}
	return h
}

// Follow watches the Lease without ever writing it and calls onChange with
// its holder whenever the holder or its expiry changes, until ctx is done.
// Expiry is judged by the local clock from when this process last saw the
// Lease renewed (as client-go's election does), so clock skew does not
// matter once the Lease has been seen to change.
func Follow(ctx context.Context, client kubernetes.Interface, namespace, name string, log logr.Logger, onChange func(Holder)) {
	f := &follower{onChange: onChange}
	factory := informers.NewSharedInformerFactoryWithOptions(client, 0,
		informers.WithNamespace(namespace),
		informers.WithTweakListOptions(func(o *metav1.ListOptions) {
			o.FieldSelector = fields.OneTermEqualSelector("metadata.name", name).String()
		}))
	inf := factory.Coordination().V1().Leases().Informer()
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { f.observe(obj, false) },
		UpdateFunc: func(_, obj any) { f.observe(obj, false) },
		DeleteFunc: func(obj any) { f.observe(obj, true) },
	}); err != nil {
		log.Error(err, "following the lease", "lease", namespace+"/"+name)
		return
	}
	factory.Start(ctx.Done())
	defer factory.Shutdown()
	// Expiry is a matter of time passing, not of events.
	tick.Every(ctx, time.Second, nil, func() bool {
		f.mu.Lock()
		f.report()
		f.mu.Unlock()
		return false
	})
}

// follower is what Follow remembers of the Lease between events.
type follower struct {
	onChange func(Holder)
	mu       sync.Mutex
	last     Holder
	reported bool
	record   string    // resourceVersion last seen
	seenAt   time.Time // when it changed, local clock
	duration time.Duration
	identity string
}

// report calls onChange when the holder or its expiry changed since the
// last call. f.mu is held.
func (f *follower) report() {
	h := Holder{Identity: f.identity}
	if f.identity != "" && f.duration > 0 && !f.seenAt.IsZero() {
		h.Expired = time.Since(f.seenAt) > f.duration
	}
	if f.reported && h == f.last {
		return
	}
	f.last, f.reported = h, true
	f.onChange(h)
}

// observe records an informer event for the Lease and reports.
func (f *follower) observe(obj any, deleted bool) {
	l, ok := obj.(*coordinationv1.Lease)
	if !ok {
		if d, isTomb := obj.(cache.DeletedFinalStateUnknown); isTomb {
			l, ok = d.Obj.(*coordinationv1.Lease)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if deleted || !ok {
		f.identity, f.duration, f.seenAt, f.record = "", 0, time.Time{}, ""
	} else {
		f.seen(l)
	}
	f.report()
}

// seen records the Lease's holder and duration, and when it last changed.
func (f *follower) seen(l *coordinationv1.Lease) {
	h := holderOf(l, time.Now())
	f.duration = 0
	if l.Spec.LeaseDurationSeconds != nil {
		f.duration = time.Duration(*l.Spec.LeaseDurationSeconds) * time.Second
	}
	if l.ResourceVersion != f.record {
		first := f.record == ""
		f.record = l.ResourceVersion
		f.seenAt = time.Now()
		if first && h.Expired {
			// First sight of a Lease nobody has renewed for longer
			// than its duration (by its own record).
			f.seenAt = f.seenAt.Add(-f.duration - time.Second)
		}
	}
	f.identity = h.Identity
}
