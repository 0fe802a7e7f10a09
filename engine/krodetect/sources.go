package krodetect

import (
	"context"
	"fmt"
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// listLeases returns kro's Leases by key, or nil on an error.
func (d *Detector) listLeases(ctx context.Context) (map[string]*source, error) {
	list, err := d.c.Kube.CoordinationV1().Leases(metav1.NamespaceAll).List(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + LeaseName})
	if err != nil {
		return nil, err
	}
	return sourcesOf(list.Items, d.c.Now(), leaseSource), nil
}

// sourcesOf turns each listed object into its source, keyed by what it says
// it is (source.key).
func sourcesOf[T any](items []T, now time.Time, of func(*T, time.Time) *source) map[string]*source {
	out := make(map[string]*source, len(items))
	for i := range items {
		src := of(&items[i], now)
		out[src.key] = src
	}
	return out
}

// leaseSource: a Lease with a holder shows kro running until it expires;
// expired or released, it proves the holder stopped. A write made between
// the Lease's creation and its last renewal is taken for the leader's (a
// write after it, by a leader that died then or by another kro, is not).
func leaseSource(l *coordinationv1.Lease, now time.Time) *source {
	key := "lease " + l.Namespace + "/" + l.Name
	s := l.Spec
	last := l.CreationTimestamp.Time
	if s.AcquireTime != nil {
		last = s.AcquireTime.Time
	}
	if s.RenewTime != nil {
		last = s.RenewTime.Time
	}
	var dur time.Duration
	if s.LeaseDurationSeconds != nil {
		dur = time.Duration(*s.LeaseDurationSeconds) * time.Second
	}
	end := last.Add(dur)
	src := &source{key: key, from: l.CreationTimestamp.Time, until: last}
	if s.HolderIdentity == nil || *s.HolderIdentity == "" {
		src.proof = Proof{What: key + " released", At: end, Of: key}
		return src
	}
	src.seen = Sighting{What: fmt.Sprintf("%s held by %s", key, *s.HolderIdentity), At: last, Source: key}
	if end.After(now) {
		src.live, src.seen.Live = true, true
		return src
	}
	src.proof = Proof{What: fmt.Sprintf("%s held by %s expired at %s", key, *s.HolderIdentity, end.UTC().Format(time.RFC3339)), At: end, Of: key}
	return src
}

// listDeployments returns kro's Deployments by key, or nil on an error.
func (d *Detector) listDeployments(ctx context.Context) (map[string]*source, error) {
	list, err := d.c.Kube.AppsV1().Deployments(metav1.NamespaceAll).List(ctx, metav1.ListOptions{LabelSelector: DeploymentSelector})
	if err != nil {
		return nil, err
	}
	return sourcesOf(list.Items, d.c.Now(), deploySource), nil
}

// deploySource: a ready replica shows kro running, and so does a replica
// wanted or existing but not ready: a kro starting writes before it
// reports ready (its first reconcile is not to be raced), and one that
// crashes in a loop writes between crashes. No replica at all, wanted or
// existing, proves it stopped.
func deploySource(dep *appsv1.Deployment, now time.Time) *source {
	key := "Deployment " + dep.Namespace + "/" + dep.Name
	src := &source{key: key}
	want := int32(1)
	if dep.Spec.Replicas != nil {
		want = *dep.Spec.Replicas
	}
	ready := max(dep.Status.ReadyReplicas, dep.Status.AvailableReplicas)
	what := fmt.Sprintf("%s with %d ready replica(s)", key, ready)
	if ready == 0 {
		what = fmt.Sprintf("%s with %d replica(s) wanted, none ready yet", key, max(want, dep.Status.Replicas))
	}
	if ready > 0 || want > 0 || dep.Status.Replicas > 0 {
		src.live, src.from, src.until = true, now, now
		src.seen = Sighting{What: what, At: now, Live: true, Source: key}
		return src
	}
	src.proof = Proof{What: key + " scaled to zero", At: now, Of: key}
	return src
}

// Note looks at an object's managedFields: a write by one of kro's
// managers newer than kroscope's own last write on it is a sighting of
// kro. what names the object in the reason ("ResourceGraphDefinition
// webapp"). Call it for every version seen.
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
			own = maxTime(own, t)
		}
	}
	if kro.IsZero() || !kro.After(own) {
		return
	}
	// managedFields times are whole seconds: the write may be up to one
	// second later.
	s := Sighting{What: fmt.Sprintf("%s written by field manager %s at %s", what, manager, kro.UTC().Format(time.RFC3339)), At: kro, Slack: time.Second}
	d.mu.Lock()
	defer d.mu.Unlock()
	if old, ok := d.writes[""]; !ok || s.At.After(old.At) {
		d.writes[""] = s
	}
	if d.loose.first.IsZero() || kro.Before(d.loose.first) {
		d.loose.first = kro
	}
	d.loose.last = maxTime(d.loose.last, kro)
	d.attribute()
}

// attribute gives the writes not yet taken for a Lease's or Deployment's
// kro to one that was seen running before and after all of them (a live
// one's last renewal or ready poll catches up at the next Poll).
func (d *Detector) attribute() {
	w, ok := d.writes[""]
	if !ok {
		return
	}
	for _, m := range []map[string]*source{d.leases, d.deploys} {
		for key, src := range m {
			if src.from.IsZero() || src.from.After(d.loose.first) || d.loose.last.After(src.until) {
				continue
			}
			w.Source = key
			if old, ok := d.writes[key]; !ok || w.At.After(old.At) {
				d.writes[key] = w
			}
			delete(d.writes, "")
			d.loose = span{}
			return
		}
	}
}

// NoteGraph records whether a graph holds a change kro has not answered
// (see Unanswered); what names it as for Note.
func (d *Detector) NoteGraph(what string, unanswered bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !unanswered {
		delete(d.pending, what)
	} else if _, ok := d.pending[what]; !ok {
		d.pending[what] = d.c.Now()
	}
}

// Forget drops a deleted graph's unanswered change; what kro was seen
// doing is kept.
func (d *Detector) Forget(what string) {
	d.mu.Lock()
	delete(d.pending, what)
	d.mu.Unlock()
}

// checkSilence turns a change unanswered for Silence into a proof that
// no kro ran since it was first seen.
func (d *Detector) checkSilence() {
	if d.c.Silence < 0 {
		return
	}
	now := d.c.Now()
	for what, since := range d.pending {
		if now.Sub(since) >= d.c.Silence && since.After(d.silence.At) {
			d.silence = Proof{What: fmt.Sprintf("%s: a change left unanswered by kro since %s", what, since.UTC().Format(time.RFC3339)), At: since}
		}
	}
}

// Unanswered reports whether kro's controller, if it ran, would already
// have written to a graph: kro writes status conditions carrying the
// generation they answer on every change, and removes its finalizer from
// a graph being deleted.
func Unanswered(u *unstructured.Unstructured) bool {
	if u.GetDeletionTimestamp() != nil {
		return slices.Contains(u.GetFinalizers(), Finalizer)
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	var answered int64
	for _, c := range conds {
		m, _ := c.(map[string]any)
		switch g := m["observedGeneration"].(type) {
		case int64:
			answered = max(answered, g)
		case float64:
			answered = max(answered, int64(g))
		}
	}
	return answered < u.GetGeneration()
}

// Verdict decides from the evidence collected so far.
func (d *Detector) Verdict() Verdict {
	d.mu.Lock()
	defer d.mu.Unlock()
	f := Facts{TakeOver: d.c.TakeOver, Since: d.c.Since}
	for _, m := range []map[string]*source{d.leases, d.deploys} {
		for _, src := range m {
			if !src.seen.At.IsZero() {
				f.Sightings = append(f.Sightings, src.seen)
			}
			if !src.proof.At.IsZero() {
				f.Proofs = append(f.Proofs, src.proof)
			}
		}
	}
	for _, w := range d.writes {
		f.Sightings = append(f.Sightings, w)
	}
	if !d.silence.At.IsZero() {
		f.Proofs = append(f.Proofs, d.silence)
	}
	return Decide(f)
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
