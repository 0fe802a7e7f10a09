package krodetect

import (
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// clock is a settable Now for a Detector.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

var t0 = time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)

func kroLease(holder string, created, renewed time.Time) *coordinationv1.Lease {
	dur := int32(15)
	r := metav1.NewMicroTime(renewed)
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Namespace: "kro-system", Name: LeaseName, CreationTimestamp: metav1.NewTime(created)},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &holder, LeaseDurationSeconds: &dur, RenewTime: &r},
	}
}

// pollLeases is Poll with the given Leases listed.
func (d *Detector) pollLeases(ls ...*coordinationv1.Lease) {
	now := map[string]*source{}
	for _, l := range ls {
		now["lease "+l.Namespace+"/"+l.Name] = leaseSource(l, d.c.Now())
	}
	d.mu.Lock()
	d.merge(d.leases, now)
	d.attribute()
	d.checkSilence()
	d.mu.Unlock()
}

func (d *Detector) pollDeployments(ds ...*appsv1.Deployment) {
	now := map[string]*source{}
	for _, dep := range ds {
		now["Deployment "+dep.Namespace+"/"+dep.Name] = deploySource(dep, d.c.Now())
	}
	d.mu.Lock()
	d.merge(d.deploys, now)
	d.attribute()
	d.checkSilence()
	d.mu.Unlock()
}

func kroWrite(at time.Time) *metav1.ObjectMeta { return withWrites(entry("kro", at)) }

func wantPresence(t *testing.T, d *Detector, step string, want Presence) {
	t.Helper()
	if v := d.Verdict(); v.Presence != want {
		t.Fatalf("%s: %+v, want presence %d", step, v, want)
	}
}

// A leader-elected kro: its writes are taken for the leader's, and its
// Lease's expiry proves it gone.
func TestDetectorLeaderStops(t *testing.T) {
	c := &clock{t0}
	d := New(Config{OwnManager: "kroscope", Since: t0, Now: c.now})
	d.pollLeases(kroLease("kro-1", t0.Add(-time.Hour), t0))
	wantPresence(t, d, "lease held", Present)
	d.Note("ResourceGraphDefinition web", kroWrite(t0.Add(-time.Minute)))
	c.t = t0.Add(2 * time.Second)
	d.pollLeases(kroLease("kro-1", t0.Add(-time.Hour), c.t))
	c.t = t0.Add(time.Minute)
	d.pollLeases(kroLease("kro-1", t0.Add(-time.Hour), t0.Add(2*time.Second)))
	wantPresence(t, d, "lease expired", Absent)
}

// A kro Lease a stopped kro left held does not explain a later write: its
// expiry proves nothing about the kro that wrote.
func TestDetectorStaleLeaseExplainsNoLaterWrite(t *testing.T) {
	c := &clock{t0}
	d := New(Config{OwnManager: "kroscope", Since: t0, Now: c.now})
	stale := kroLease("kro-old", t0.Add(-time.Hour), t0.Add(-5*time.Second))
	d.pollLeases(stale)
	d.Note("ResourceGraphDefinition web", kroWrite(t0))
	c.t = t0.Add(time.Minute)
	d.pollLeases(stale)
	wantPresence(t, d, "stale lease expired", Unproven)
}

// Issue #26: kro without Lease or Deployment wrote, then the object went:
// still not proven gone, whatever the time, until a change stays
// unanswered for the silence.
func TestDetectorPlainKro(t *testing.T) {
	c := &clock{t0}
	d := New(Config{OwnManager: "kroscope", Since: t0, Now: c.now, Silence: time.Minute})
	d.pollLeases()
	d.Note("ResourceGraphDefinition web", kroWrite(t0))
	d.Forget("ResourceGraphDefinition web")
	c.t = t0.Add(time.Hour)
	d.pollLeases()
	wantPresence(t, d, "an hour later", Unproven)

	changed := &unstructured.Unstructured{Object: map[string]any{"metadata": map[string]any{"name": "next", "generation": int64(1)}}}
	if !Unanswered(changed) {
		t.Fatal("a graph with no status is answered")
	}
	d.NoteGraph("ResourceGraphDefinition next", Unanswered(changed))
	c.t = c.t.Add(59 * time.Second)
	d.pollLeases()
	wantPresence(t, d, "before the silence is over", Unproven)
	c.t = c.t.Add(time.Second)
	d.pollLeases()
	wantPresence(t, d, "after the silence", Absent)
	d.Forget("ResourceGraphDefinition next")
	c.t = c.t.Add(time.Hour)
	d.pollLeases()
	wantPresence(t, d, "the silent graph deleted", Absent)
	d.Note("ResourceGraphDefinition web", kroWrite(c.t))
	wantPresence(t, d, "kro writes again", Unproven)
}

// A Lease seen held and then deleted is proven gone from when it was
// first found missing; its writes are covered.
func TestDetectorLeaseDeleted(t *testing.T) {
	c := &clock{t0}
	d := New(Config{OwnManager: "kroscope", Since: t0, Now: c.now})
	d.pollLeases(kroLease("kro-1", t0.Add(-time.Hour), t0))
	d.Note("ResourceGraphDefinition web", kroWrite(t0.Add(-time.Second)))
	c.t = t0.Add(time.Second)
	d.pollLeases()
	wantPresence(t, d, "lease deleted", Absent)
	c.t = t0.Add(time.Hour)
	d.pollLeases()
	wantPresence(t, d, "an hour later", Absent)
}

// A Deployment that had a ready replica, scaled to zero: proven gone
// from the first poll that saw no replica; present while a replica is
// wanted or exists, ready or not (kro starting, or crashing in a loop).
func TestDetectorDeploymentScaledDown(t *testing.T) {
	c := &clock{t0}
	d := New(Config{OwnManager: "kroscope", Since: t0, Now: c.now})
	one, zero := int32(1), int32(0)
	dep := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "kro-system", Name: "kro"}, Spec: appsv1.DeploymentSpec{Replicas: &one},
		Status: appsv1.DeploymentStatus{Replicas: 1, ReadyReplicas: 1}}
	d.pollDeployments(dep)
	wantPresence(t, d, "ready", Present)
	c.t = t0.Add(10 * time.Second)
	d.Note("ResourceGraphDefinition web", kroWrite(t0.Add(5*time.Second)))
	d.pollDeployments(dep)
	dep.Status.ReadyReplicas = 0
	c.t = t0.Add(20 * time.Second)
	d.pollDeployments(dep)
	wantPresence(t, d, "a replica not ready (crashing)", Present)
	dep.Spec.Replicas, dep.Status.Replicas = &zero, 0
	c.t = t0.Add(30 * time.Second)
	d.pollDeployments(dep)
	wantPresence(t, d, "scaled to zero", Absent)
	c.t = t0.Add(40 * time.Second)
	d.pollDeployments(dep)
	// A write between the first zero poll and this one is after the
	// proof, which keeps its first time.
	d.Note("ResourceGraphDefinition web", kroWrite(t0.Add(35*time.Second)))
	wantPresence(t, d, "written after the scale-down", Unproven)
}

// kro's Deployment just created (no replica yet, none ready): kro is
// starting, and will write before it reports ready.
func TestDetectorDeploymentStarting(t *testing.T) {
	c := &clock{t0}
	d := New(Config{OwnManager: "kroscope", Since: t0, Now: c.now})
	d.pollDeployments(&appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: "kro-system", Name: "kro"}})
	wantPresence(t, d, "created", Present)
	if v := d.Verdict(); !strings.Contains(v.Reason, "wanted, none ready yet") {
		t.Errorf("reason %q", v.Reason)
	}
}
