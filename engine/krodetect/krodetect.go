// Package krodetect tells whether kro's own controller is reconciling the
// cluster, so that kroscope observes instead of fighting it over the same
// objects. Three kinds of evidence count:
//
//   - kro's leader-election Lease (controller.kro.run, in any namespace) held
//     and not expired;
//   - a Deployment of kro's Helm chart (labels app.kubernetes.io/part-of=kro,
//     app.kubernetes.io/component=controller) with a ready replica;
//   - a write by one of kro's field managers on a ResourceGraphDefinition or
//     an instance that is newer than kroscope's own last write on it (kro
//     wrote last), from the managedFields the engine sees anyway.
//
// With TakeOver, writes from before Since (the process start) are ignored:
// they are the traces of a kro that was stopped. A held Lease, a ready
// Deployment and a newer write still count, so a kro that starts again later
// flips kroscope back to observing.
package krodetect

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// What kro's controller (v0.9) leaves on a cluster.
const (
	// LeaseName is kro's leader-election ID (cmd/controller); the Lease
	// lives in the controller's namespace (kro-system with the Helm chart).
	LeaseName = "controller.kro.run"
	// DeploymentSelector selects the Deployment of kro's Helm chart.
	DeploymentSelector = "app.kubernetes.io/part-of=kro,app.kubernetes.io/component=controller"
)

// KroManagers are the field managers kro writes with: its client's user
// agent (status, finalizers, CRDs), server-side apply of children, of the
// instance's metadata, and of labels.
var KroManagers = map[string]bool{
	"kro": true, "kro.run/applyset": true, "kro.run/applyset-parent": true, "kro.run/labeller": true,
}

// Config configures a Detector.
type Config struct {
	// Kube lists Leases and Deployments; nil disables those two checks.
	Kube kubernetes.Interface
	// OwnManager is kroscope's field manager: a write by it after kro's
	// means kroscope took over.
	OwnManager string
	// TakeOver ignores kro's writes from before Since.
	TakeOver bool
	Since    time.Time
	// Now is the clock (tests); nil means time.Now.
	Now func() time.Time
}

// Detector collects evidence; it is safe for concurrent use.
type Detector struct {
	c Config

	mu     sync.Mutex
	lease  string            // held lease, described; "" when none
	deploy string            // ready Deployment, described
	writes map[string]string // object → description of kro's last write
	denied map[string]bool   // checks the API server forbids (reported once)
}

// New returns a Detector.
func New(c Config) *Detector {
	if c.Now == nil {
		c.Now = time.Now
	}
	return &Detector{c: c, writes: map[string]string{}, denied: map[string]bool{}}
}

// Poll lists kro's Lease and Deployment. It returns the checks that could
// not be made (RBAC), each once, for the caller to log.
func (d *Detector) Poll(ctx context.Context) []error {
	if d.c.Kube == nil {
		return nil
	}
	var errs []error
	lease, err := d.heldLease(ctx)
	errs = d.keep(errs, "leases", err)
	deploy, err := d.readyDeployment(ctx)
	errs = d.keep(errs, "deployments", err)
	d.mu.Lock()
	d.lease, d.deploy = lease, deploy
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

func (d *Detector) heldLease(ctx context.Context) (string, error) {
	list, err := d.c.Kube.CoordinationV1().Leases(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + LeaseName})
	if err != nil {
		return "", err
	}
	now := d.c.Now()
	for _, l := range list.Items {
		s := l.Spec
		if s.HolderIdentity == nil || *s.HolderIdentity == "" || s.LeaseDurationSeconds == nil {
			continue
		}
		last := l.CreationTimestamp.Time
		if s.AcquireTime != nil {
			last = s.AcquireTime.Time
		}
		if s.RenewTime != nil {
			last = s.RenewTime.Time
		}
		if last.Add(time.Duration(*s.LeaseDurationSeconds) * time.Second).After(now) {
			return fmt.Sprintf("lease %s/%s held by %s", l.Namespace, l.Name, *s.HolderIdentity), nil
		}
	}
	return "", nil
}

func (d *Detector) readyDeployment(ctx context.Context) (string, error) {
	list, err := d.c.Kube.AppsV1().Deployments(metav1.NamespaceAll).List(ctx, metav1.ListOptions{LabelSelector: DeploymentSelector})
	if err != nil {
		return "", err
	}
	for _, dep := range list.Items {
		if n := max(dep.Status.ReadyReplicas, dep.Status.AvailableReplicas); n > 0 {
			return fmt.Sprintf("Deployment %s/%s with %d ready replica(s)", dep.Namespace, dep.Name, n), nil
		}
	}
	return "", nil
}

// Note looks at an object's managedFields: if one of kro's managers wrote
// it after kroscope did (and, with TakeOver, after Since), kro counts as
// active. what names the object in the reason ("ResourceGraphDefinition
// webapp"). Call it for every version seen; a later kroscope write clears
// the evidence.
func (d *Detector) Note(what string, obj metav1.Object) {
	var kro, own time.Time
	manager := ""
	for _, f := range obj.GetManagedFields() {
		if f.Time == nil {
			continue
		}
		t := f.Time.Time
		switch {
		case KroManagers[f.Manager]:
			if t.After(kro) {
				kro, manager = t, f.Manager
			}
		case f.Manager == d.c.OwnManager:
			if t.After(own) {
				own = t
			}
		}
	}
	key := what
	d.mu.Lock()
	defer d.mu.Unlock()
	if kro.IsZero() || !kro.After(own) || (d.c.TakeOver && !kro.After(d.c.Since)) {
		delete(d.writes, key)
		return
	}
	d.writes[key] = fmt.Sprintf("%s written by field manager %s at %s", what, manager, kro.UTC().Format(time.RFC3339))
}

// Forget drops the evidence of an object that was deleted.
func (d *Detector) Forget(what string) {
	d.mu.Lock()
	delete(d.writes, what)
	d.mu.Unlock()
}

// Active returns why kro counts as reconciling the cluster, or "".
func (d *Detector) Active() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	switch {
	case d.lease != "":
		return d.lease
	case d.deploy != "":
		return d.deploy
	case len(d.writes) > 0:
		keys := make([]string, 0, len(d.writes))
		for k := range d.writes {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		reason := d.writes[keys[0]]
		if len(keys) > 1 {
			reason += fmt.Sprintf(" (and %d more objects)", len(keys)-1)
		}
		return reason
	}
	return ""
}

// Headline is the one line the header and log show while kro is active.
func Headline(reason string, takeOver bool) string {
	hint := "--take-over to reconcile"
	if takeOver {
		hint = "kro is running now, so --take-over waits for it to stop"
	}
	return fmt.Sprintf("kro is reconciling this cluster (%s): observing; %s", strings.TrimSpace(reason), hint)
}
