// Package krodetect tells whether kro's own controller may be reconciling
// the cluster, so that kroscope observes instead of fighting it over the
// same objects. The Detector collects evidence; Decide (presence.go) turns
// it into a verdict.
//
// Sightings of kro (presence.go's Sighting):
//
//   - kro's leader-election Lease (controller.kro.run, in any namespace):
//     live while held and not expired;
//   - a Deployment of kro's Helm chart (labels app.kubernetes.io/part-of=kro,
//     app.kubernetes.io/component=controller): live while it wants or has a
//     replica (kro starting counts: it writes before it reports ready);
//   - a write by one of kro's field managers on a ResourceGraphDefinition or
//     an instance that is newer than kroscope's own last write on it, from
//     the managedFields the engine sees anyway.
//
// Proofs of absence: a kro Lease expired, released, or gone after it was
// seen; a kro Deployment scaled to zero (no replica at all) or gone after
// it was seen; a change to a graph that kro left unanswered for
// Config.Silence. A Lease's or Deployment's proof covers only the writes
// made while that Lease or Deployment showed kro running; a silence covers
// every kro. Sightings and proofs are remembered: deleting the objects kro
// wrote does not make it absent.
package krodetect

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// What kro's controller (v0.9) leaves on a cluster.
const (
	// LeaseName is kro's leader-election ID (cmd/controller); the Lease
	// lives in the controller's namespace (kro-system with the Helm chart).
	LeaseName = "controller.kro.run"
	// DeploymentSelector selects the Deployment of kro's Helm chart.
	DeploymentSelector = "app.kubernetes.io/part-of=kro,app.kubernetes.io/component=controller"
	// Finalizer is the finalizer kro puts on every graph it serves.
	Finalizer = "kro.run/finalizer"
)

// KroManagers are the field managers kro writes with: its client's user
// agent (status, finalizers, CRDs), server-side apply of children, of the
// instance's metadata, and of labels.
var KroManagers = map[string]bool{
	"kro": true, "kro.run/applyset": true, "kro.run/applyset-parent": true, "kro.run/labeller": true,
}

// DefaultSilence is how long kro must leave a change to a graph unanswered
// (kro writes the graph's status, or removes its finalizer, within seconds)
// for that to prove it absent.
const DefaultSilence = 5 * time.Minute

// Config configures a Detector.
type Config struct {
	// Kube lists Leases and Deployments; nil disables those two checks.
	Kube kubernetes.Interface
	// OwnManager is kroscope's field manager: a write by it after kro's
	// means kroscope took over.
	OwnManager string
	// TakeOver sets aside sightings from before Since (see Facts).
	TakeOver bool
	Since    time.Time
	// Silence: see DefaultSilence (0 means it); negative never proves
	// absence by silence.
	Silence time.Duration
	// Now is the clock (tests); nil means time.Now.
	Now func() time.Time
}

// Detector collects evidence; it is safe for concurrent use.
type Detector struct {
	c Config

	mu      sync.Mutex
	leases  map[string]*source  // "lease ns/name"
	deploys map[string]*source  // "Deployment ns/name"
	writes  map[string]Sighting // source key ("" unknown) → newest write
	loose   span                // the unattributed writes' times
	pending map[string]time.Time
	silence Proof // newest silence proof
	denied  map[string]bool
}

// source is one Lease or Deployment: when it showed kro running, and the
// proof that it stopped.
type source struct {
	key  string // "lease ns/name", "Deployment ns/name"
	seen Sighting
	// Writes from `from` to `until` (kro seen running at both) are
	// taken for this kro's.
	from, until time.Time
	proof       Proof
	live        bool
}

type span struct{ first, last time.Time }

// New returns a Detector.
func New(c Config) *Detector {
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Silence == 0 {
		c.Silence = DefaultSilence
	}
	return &Detector{c: c, leases: map[string]*source{}, deploys: map[string]*source{},
		writes: map[string]Sighting{}, pending: map[string]time.Time{}, denied: map[string]bool{}}
}

// Poll lists kro's Lease and Deployment and checks the silences. It
// returns the checks that could not be made (RBAC), each once, for the
// caller to log; a failed list changes nothing (it proves nothing).
func (d *Detector) Poll(ctx context.Context) []error {
	var errs []error
	if d.c.Kube != nil {
		leases, err := d.listLeases(ctx)
		errs = d.keep(errs, "leases", err)
		deploys, err := d.listDeployments(ctx)
		errs = d.keep(errs, "deployments", err)
		d.mu.Lock()
		if leases != nil {
			d.merge(d.leases, leases)
		}
		if deploys != nil {
			d.merge(d.deploys, deploys)
		}
		d.mu.Unlock()
	}
	d.mu.Lock()
	d.attribute()
	d.checkSilence()
	d.mu.Unlock()
	return errs
}

// keep reports a forbidden check once, and every other error.
func (d *Detector) keep(errs []error, what string, err error) []error {
	if err == nil {
		return errs
	}
	if apierrors.IsForbidden(err) {
		d.mu.Lock()
		seen := d.denied[what]
		d.denied[what] = true
		d.mu.Unlock()
		if seen {
			return errs
		}
	}
	return append(errs, fmt.Errorf("cannot check kro's %s: %w", what, err))
}

// merge takes the sources listed now into the remembered ones. One seen
// running before and no longer listed is gone: proven stopped from now.
// A stop that goes on keeps the time it was first seen.
func (d *Detector) merge(known, now map[string]*source) {
	at := d.c.Now()
	for key, s := range now {
		k := known[key]
		switch {
		case k == nil:
		case s.seen.At.IsZero() || s.seen.At.Before(k.seen.At):
			s.seen, s.from, s.until = k.seen, k.from, k.until
			s.seen.Live = false
		case k.live:
			s.from = minTime(k.from, s.from)
		}
		if k != nil && k.proof.At.After(s.seen.At) && !s.proof.At.IsZero() && k.proof.At.Before(s.proof.At) {
			s.proof = k.proof
		}
		known[key] = s
	}
	for key, k := range known {
		if now[key] != nil {
			continue
		}
		k.live, k.seen.Live = false, false
		if !k.seen.At.IsZero() && !k.proof.At.After(k.seen.At) {
			k.proof = Proof{What: key + ", seen before, is gone", At: at, Of: key}
		}
	}
}

func minTime(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}

// Headline is the one line the header and log show while kro is active.
func Headline(reason string, takeOver bool) string {
	hint := "--take-over to reconcile"
	if takeOver {
		hint = "kro is running now, so --take-over waits for it to stop"
	}
	return fmt.Sprintf("kro is reconciling this cluster (%s): observing; %s", strings.TrimSpace(reason), hint)
}

// Watch follows kro's Leases and Deployments (the ones Poll lists) and
// calls changed on every event, until ctx is done: a kro that starts
// while kroscope writes is seen as its Lease or Deployment appears, before
// its first reconcile, not at the next poll. Without the rights to watch
// them (a failed list is retried by the informer) the caller's poll is
// what is left.
func (d *Detector) Watch(ctx context.Context, changed func()) {
	if d.c.Kube == nil {
		return
	}
	on := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { changed() },
		UpdateFunc: func(any, any) { changed() },
		DeleteFunc: func(any) { changed() },
	}
	leases := informers.NewSharedInformerFactoryWithOptions(d.c.Kube, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.FieldSelector = "metadata.name=" + LeaseName
	}))
	deploys := informers.NewSharedInformerFactoryWithOptions(d.c.Kube, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.LabelSelector = DeploymentSelector
	}))
	_, _ = leases.Coordination().V1().Leases().Informer().AddEventHandler(on)
	_, _ = deploys.Apps().V1().Deployments().Informer().AddEventHandler(on)
	leases.Start(ctx.Done())
	deploys.Start(ctx.Done())
	<-ctx.Done()
	leases.Shutdown()
	deploys.Shutdown()
}
