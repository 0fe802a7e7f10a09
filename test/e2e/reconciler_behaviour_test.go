package e2e

import (
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/tools/record"

	"github.com/kroscope/kroscope/reconciler"
	"github.com/kroscope/kroscope/reconciler/metadata"
	"github.com/kroscope/kroscope/reconciler/requeue"
	"github.com/kroscope/kroscope/test/envtest"
	"github.com/kroscope/kroscope/test/graphs"
)

// gatedGraph: gate is a Deployment that is ready only with an available
// replica; dependent reads it; independent reads only the instance.
var gatedGraph = graphs.RGD("rtgated", "RtGated", "spec:\n  image: string | default=nginx\nstatus:\n  gateReplicas: ${gate.status.availableReplicas}",
	graphs.Deployment("gate", "${schema.metadata.name}-gate", "image: ${schema.spec.image}", "readyWhen:\n- ${gate.status.availableReplicas >= 1}"),
	graphs.ConfigMap("dependent", "${schema.metadata.name}-dependent", "gate: ${gate.metadata.name}"),
	graphs.ConfigMap("independent", "${schema.metadata.name}-independent", "image: ${schema.spec.image}"))

// setDeploymentAvailable writes the status a controller-manager would.
func setDeploymentAvailable(t *testing.T, r *rig, name string, replicas int64) {
	t.Helper()
	d := r.get(gvrDeployment, r.ns, name)
	if d == nil {
		t.Fatalf("Deployment %s does not exist", name)
	}
	_ = unstructured.SetNestedField(d.Object, map[string]any{
		"observedGeneration": d.GetGeneration(),
		"replicas":           replicas, "readyReplicas": replicas, "availableReplicas": replicas, "updatedReplicas": replicas,
	}, "status")
	if _, err := r.dyn.Resource(gvrDeployment).Namespace(r.ns).UpdateStatus(ctxT(t), d, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("writing Deployment status: %v", err)
	}
}

func TestReconcilerReadyWhenHoldsOnlyDependents(t *testing.T) {
	r := newRig(t, gatedGraph)
	r.create("apiVersion: kro.run/v1alpha1\nkind: RtGated\nmetadata:\n  name: app\nspec: {}\n")

	// One pass applies everything whose inputs are ready.
	o, err := r.reconcile("app")
	var after *requeue.NeededAfter
	if !errors.As(err, &after) {
		t.Fatalf("reconcile returned %v, want a requeue-after while waiting", err)
	}
	if o.State.State != reconciler.InstanceStateInProgress {
		t.Fatalf("state %s, want IN_PROGRESS", o.State.State)
	}
	if got := o.Resources["gate"].State; got != reconciler.ResourceStateWaitingForReadiness {
		t.Errorf("gate: %s, want WAITING_FOR_READINESS", got)
	}
	if d := o.Resources["dependent"]; d.State != reconciler.ResourceStatePending || !strings.Contains(d.WaitingFor, "gate") {
		t.Errorf("dependent: %s (%s), want PENDING naming gate", d.State, d.WaitingFor)
	}
	if got := o.Resources["independent"].State; got != reconciler.ResourceStateCreated {
		t.Errorf("independent: %s, want CREATED in the same pass", got)
	}
	if r.get(gvrConfigMap, r.ns, "app-independent") == nil {
		t.Error("the independent branch waited for the gate")
	}
	if r.get(gvrConfigMap, r.ns, "app-dependent") != nil {
		t.Error("the dependent was created before its dependency was ready")
	}
	// A status field whose input is not there yet is left out, not an error.
	if st := r.instance("app").Object["status"].(map[string]any); st["gateReplicas"] != nil || st["state"] != "IN_PROGRESS" {
		t.Errorf("status %v: want IN_PROGRESS without gateReplicas", st)
	}
	// The condition says who waits for what.
	if c := envtest.Condition(r.instance("app"), "ResourcesReady"); c == nil || !strings.Contains(c["message"].(string), "dependent: waiting for gate") {
		t.Errorf("ResourcesReady %v does not say what dependent waits for", c)
	}

	setDeploymentAvailable(t, r, "app-gate", 1)
	r.untilState("app", reconciler.InstanceStateActive)
	if got := cmData(t, r, "app-dependent", "gate"); got != "app-gate" {
		t.Errorf("dependent.data.gate = %q", got)
	}
	if got := r.instance("app").Object["status"].(map[string]any)["gateReplicas"]; got != int64(1) {
		t.Errorf("status.gateReplicas = %v (%T), want 1", got, got)
	}
}

// A field another manager owns through server-side apply is never taken
// over: the resource is in ERROR naming that manager, and the object keeps
// the other manager's value.
func TestReconcilerApplyConflictIsError(t *testing.T) {
	r := newRig(t, chainGraph("RtConflict"))
	r.create(chainInstance("RtConflict", "app"))
	r.untilState("app", reconciler.InstanceStateActive)

	theirs := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ConfigMap",
		"metadata": map[string]any{"name": "app-first", "namespace": r.ns},
		"data":     map[string]any{"value": "theirs"},
	}}
	force := true
	if _, err := r.dyn.Resource(gvrConfigMap).Namespace(r.ns).Apply(ctxT(t), "app-first", theirs,
		metav1.ApplyOptions{FieldManager: "other-applier", Force: force}); err != nil {
		t.Fatal(err)
	}
	o := r.until("app", 60*time.Second, "ERROR", func(o reconciler.Observation, _ error) bool {
		return o.State.State == reconciler.InstanceStateError
	})
	if err := o.Resources["first"].Err; err == nil || !strings.Contains(err.Error(), "other-applier") {
		t.Fatalf("first error %v: want the other manager named", err)
	}
	if got := cmData(t, r, "app-first", "value"); got != "theirs" {
		t.Errorf("value %q: kroscope forced over another applier", got)
	}
}

var externalGraph = graphs.RGD("rtexternal", "RtExternal", "spec:\n  refName: string | default=shared-config",
	graphs.ExternalRef("shared", "v1", "ConfigMap", "${schema.spec.refName}"),
	graphs.ConfigMap("copy", "${schema.metadata.name}-copy", "color: ${shared.data.color}"))

func TestReconcilerExternalRefWaitsThenActive(t *testing.T) {
	r := newRig(t, externalGraph)
	r.create("apiVersion: kro.run/v1alpha1\nkind: RtExternal\nmetadata:\n  name: app\nspec: {}\n")
	o := r.until("app", 60*time.Second, "waiting for the external", func(o reconciler.Observation, _ error) bool {
		return o.Resources["shared"] != nil && o.Resources["shared"].State == reconciler.ResourceStateWaitingForExternalResource
	})
	if o.State.State != reconciler.InstanceStateInProgress {
		t.Errorf("state %s, want IN_PROGRESS", o.State.State)
	}
	if d := o.Resources["copy"]; d.State != reconciler.ResourceStatePending {
		t.Errorf("copy: %s, want PENDING", d.State)
	}

	ext := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "shared-config", Namespace: r.ns}, Data: map[string]string{"color": "blue"}}
	if _, err := r.env.Kubernetes().CoreV1().ConfigMaps(r.ns).Create(ctxT(t), ext, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	r.untilState("app", reconciler.InstanceStateActive)
	if got := cmData(t, r, "app-copy", "color"); got != "blue" {
		t.Errorf("copy.data.color = %q, want blue", got)
	}
	// The external object is read, never written.
	got := r.get(gvrConfigMap, r.ns, "shared-config")
	if len(got.GetLabels()) != 0 || len(got.GetOwnerReferences()) != 0 {
		t.Errorf("the external ConfigMap was modified: labels %v owners %v", got.GetLabels(), got.GetOwnerReferences())
	}
	r.deleteInstance("app")
	r.untilGone("app")
	if r.get(gvrConfigMap, r.ns, "shared-config") == nil {
		t.Error("deletion removed the external ConfigMap")
	}
}

var celErrorGraph = graphs.RGD("rtcelerror", "RtCelError", "spec:\n  total: integer | default=10\n  parts: integer | default=0",
	graphs.ConfigMap("share", "${schema.metadata.name}-share", "each: ${string(schema.spec.total / schema.spec.parts)}"),
	graphs.ConfigMap("other", "${schema.metadata.name}-other", "total: ${string(schema.spec.total)}"))

func TestReconcilerCELErrorFails(t *testing.T) {
	r := newRig(t, celErrorGraph)
	r.create("apiVersion: kro.run/v1alpha1\nkind: RtCelError\nmetadata:\n  name: app\nspec: {}\n")
	o := r.until("app", 60*time.Second, "FAILED", func(o reconciler.Observation, err error) bool {
		var none *requeue.NoRequeue
		return o.State.State == reconciler.InstanceStateFailed && errors.As(err, &none)
	})
	d := o.Resources["share"]
	if d.State != reconciler.ResourceStateFailed || d.Err == nil {
		t.Fatalf("share: %s %v, want FAILED with an error", d.State, d.Err)
	}
	for _, want := range []string{"share", "schema.spec.total / schema.spec.parts", "division by zero"} {
		if !strings.Contains(d.Err.Error(), want) {
			t.Errorf("error %q does not contain %q", d.Err, want)
		}
	}
	if got := o.Resources["other"].State; got != reconciler.ResourceStateSynced && got != reconciler.ResourceStateCreated {
		t.Errorf("other: %s; an independent resource must still be applied", got)
	}
	inst := r.instance("app")
	if inst.Object["status"].(map[string]any)["state"] != "FAILED" {
		t.Errorf("status.state %v", inst.Object["status"])
	}
	if c := envtest.Condition(inst, "Ready"); c["status"] != "False" || !strings.Contains(c["message"].(string), "schema.spec.total / schema.spec.parts") {
		t.Errorf("Ready condition %v does not carry the expression", c)
	}
	// Fixing the spec recovers.
	r.patchSpec("app", map[string]any{"parts": 2})
	r.untilState("app", reconciler.InstanceStateActive)
	if got := cmData(t, r, "app-share", "each"); got != "5" {
		t.Errorf("share.data.each = %q, want 5", got)
	}
}

func TestReconcilerForeignOwnedChild(t *testing.T) {
	r := newRig(t, chainGraph("RtForeign"))
	foreign := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{
		Name: "app-first", Namespace: r.ns,
		Labels: map[string]string{metadata.OwnedLabel: "true", metadata.InstanceIDLabel: "0000-other", metadata.InstanceNameLabel: "someone-else", metadata.InstanceNamespaceLabel: r.ns},
	}, Data: map[string]string{"value": "theirs"}}
	created, err := r.env.Kubernetes().CoreV1().ConfigMaps(r.ns).Create(ctxT(t), foreign, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r.create(chainInstance("RtForeign", "app"))
	o := r.until("app", 60*time.Second, "ERROR", func(o reconciler.Observation, _ error) bool {
		return o.State.State == reconciler.InstanceStateError
	})
	d := o.Resources["first"]
	if d.State != reconciler.ResourceStateError || d.Err == nil || !strings.Contains(d.Err.Error(), "someone-else") {
		t.Fatalf("first: %s %v, want ERROR naming the owner", d.State, d.Err)
	}
	if got := r.get(gvrConfigMap, r.ns, "app-first"); got.GetResourceVersion() != created.ResourceVersion {
		t.Errorf("the foreign object was modified (resourceVersion %s -> %s)", created.ResourceVersion, got.GetResourceVersion())
	}
	// Deleting the instance must not delete the foreign object either.
	r.deleteInstance("app")
	r.untilGone("app")
	if r.get(gvrConfigMap, r.ns, "app-first") == nil {
		t.Error("deletion removed an object owned by another instance")
	}
}

func TestReconcilerAdoption(t *testing.T) {
	for _, allow := range []bool{false, true} {
		name := map[bool]string{false: "RtNoAdopt", true: "RtAdopt"}[allow]
		t.Run(name, func(t *testing.T) {
			r := newRig(t, chainGraph(name), func(c *rigConfig) { c.opts.AllowAdoption = allow })
			plain := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app-first", Namespace: r.ns}, Data: map[string]string{"value": "old"}}
			if _, err := r.env.Kubernetes().CoreV1().ConfigMaps(r.ns).Create(ctxT(t), plain, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			r.create(chainInstance(name, "app"))
			if !allow {
				o := r.until("app", 60*time.Second, "ERROR", func(o reconciler.Observation, _ error) bool {
					return o.State.State == reconciler.InstanceStateError
				})
				if err := o.Resources["first"].Err; err == nil || !strings.Contains(err.Error(), "adopt") {
					t.Fatalf("first error %v: want an explanation of how to adopt", err)
				}
				if got := cmData(t, r, "app-first", "value"); got != "old" {
					t.Errorf("unadopted object changed: value %q", got)
				}
				return
			}
			r.untilState("app", reconciler.InstanceStateActive)
			if got := cmData(t, r, "app-first", "value"); got != "one" {
				t.Errorf("adopted object value %q, want one", got)
			}
		})
	}
}

func TestReconcilerConvergedMakesNoWrites(t *testing.T) {
	fake := record.NewFakeRecorder(100)
	r := newRig(t, gatedGraph, func(c *rigConfig) { c.opts.Recorder = fake })
	r.create("apiVersion: kro.run/v1alpha1\nkind: RtGated\nmetadata:\n  name: app\nspec: {}\n")
	r.until("app", 60*time.Second, "gate waiting", func(o reconciler.Observation, _ error) bool {
		return r.get(gvrDeployment, r.ns, "app-gate") != nil
	})
	setDeploymentAvailable(t, r, "app-gate", 1)
	r.untilState("app", reconciler.InstanceStateActive)

	inst := r.instance("app")
	children := map[string]string{}
	for _, n := range []string{"app-dependent", "app-independent"} {
		children[n] = r.get(gvrConfigMap, r.ns, n).GetResourceVersion()
	}
	gateRV := r.get(gvrDeployment, r.ns, "app-gate").GetResourceVersion()
	r.Reset()
	events := len(fake.Events)

	end := time.Now().Add(30 * time.Second)
	n := 0
	for time.Now().Before(end) {
		o, err := r.reconcile("app")
		if err != nil || o.State.State != reconciler.InstanceStateActive {
			t.Fatalf("converged reconcile: state %s err %v", o.State.State, err)
		}
		n++
		time.Sleep(250 * time.Millisecond)
	}
	if w := r.Writes(); w != 0 {
		t.Errorf("%d write requests over 30s of %d reconciles of a converged instance, want 0", w, n)
	}
	if got := r.instance("app").GetResourceVersion(); got != inst.GetResourceVersion() {
		t.Errorf("instance resourceVersion moved %s -> %s", inst.GetResourceVersion(), got)
	}
	for name, rv := range children {
		if got := r.get(gvrConfigMap, r.ns, name).GetResourceVersion(); got != rv {
			t.Errorf("%s resourceVersion moved %s -> %s", name, rv, got)
		}
	}
	if got := r.get(gvrDeployment, r.ns, "app-gate").GetResourceVersion(); got != gateRV {
		t.Errorf("gate resourceVersion moved %s -> %s", gateRV, got)
	}
	if got := len(fake.Events); got != events {
		t.Errorf("%d events emitted while converged", got-events)
	}
	t.Logf("%d reconciles in 30s, 0 writes", n)
}

func TestReconcilerObserveModeWritesNothing(t *testing.T) {
	r := newRig(t, chainGraph("RtObserve"), func(c *rigConfig) { c.opts.Observe = true })
	r.create(chainInstance("RtObserve", "app"))
	r.Reset()
	o, _ := r.reconcile("app")
	if w := r.Writes(); w != 0 {
		t.Errorf("observe mode sent %d write requests", w)
	}
	if d := o.Resources["first"]; d.State != reconciler.ResourceStatePending || !strings.Contains(d.WaitingFor, "observing") {
		t.Errorf("first: %s (%s), want PENDING saying it is not created while observing", d.State, d.WaitingFor)
	}
	if r.get(gvrConfigMap, r.ns, "app-first") != nil {
		t.Error("observe mode created a child")
	}
	if fins := r.instance("app").GetFinalizers(); len(fins) != 0 {
		t.Errorf("observe mode added finalizers %v", fins)
	}
}

var invalidGraph = graphs.RGD("rtinvalid", "RtInvalid", "spec:\n  port: integer | default=80",
	graphs.Resource("svc", `template:
  apiVersion: v1
  kind: Service
  metadata:
    name: ${schema.metadata.name}-svc
  spec:
    ports:
    - port: ${schema.spec.port}`))

// An object the API server rejects as invalid cannot fix itself: FAILED,
// not retried, until the spec changes.
func TestReconcilerInvalidObjectFails(t *testing.T) {
	r := newRig(t, invalidGraph)
	r.create("apiVersion: kro.run/v1alpha1\nkind: RtInvalid\nmetadata:\n  name: app\nspec:\n  port: 70000\n")
	o := r.until("app", 60*time.Second, "FAILED", func(o reconciler.Observation, err error) bool {
		var none *requeue.NoRequeue
		return o.State.State == reconciler.InstanceStateFailed && errors.As(err, &none)
	})
	if err := o.Resources["svc"].Err; err == nil || !strings.Contains(err.Error(), "rejected") || !strings.Contains(err.Error(), "70000") {
		t.Fatalf("svc error %v: want the API server's rejection", err)
	}
	r.patchSpec("app", map[string]any{"port": 8080})
	r.untilState("app", reconciler.InstanceStateActive)
}

// Observing an instance another process reconciles: states come from the
// live objects, readyWhen included, drift is reported and nothing is written.
func TestReconcilerObserveModeReadsStates(t *testing.T) {
	testObserving(t, func(r *rig) { r.c.SetOptions(reconciler.Options{Observe: true}) })
}

// A client set whose write gate is closed (the engine's, while it
// observes) makes the reconcile observe, with the options unchanged: it
// asks the gate instead of failing at each write.
func TestReconcilerObservesWhileTheGateIsClosed(t *testing.T) {
	testObserving(t, func(r *rig) { r.cs.GateWrites(func() bool { return false }) })
}

// testObserving reconciles an instance until its children exist, then
// observes it (observe sets the mode) and checks nothing is written.
func testObserving(t *testing.T, observe func(*rig)) {
	r := newRig(t, gatedGraph)
	r.create("apiVersion: kro.run/v1alpha1\nkind: RtGated\nmetadata:\n  name: app\nspec: {}\n")
	r.until("app", 60*time.Second, "gate applied", func(o reconciler.Observation, _ error) bool {
		return r.get(gvrDeployment, r.ns, "app-gate") != nil
	})
	observe(r)
	r.Reset()
	o, _ := r.reconcile("app")
	if got := o.Resources["gate"].State; got != reconciler.ResourceStateWaitingForReadiness {
		t.Errorf("gate: %s, want WAITING_FOR_READINESS from readyWhen", got)
	}
	if got := o.Resources["independent"].State; got != reconciler.ResourceStateSynced {
		t.Errorf("independent: %s, want SYNCED", got)
	}
	cm := r.get(gvrConfigMap, r.ns, "app-independent")
	cm.Object["data"] = map[string]any{"image": "edited"}
	if _, err := r.dyn.Resource(gvrConfigMap).Namespace(r.ns).Update(ctxT(t), cm, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	o, _ = r.reconcile("app")
	if d := o.Resources["independent"]; d.State != reconciler.ResourceStateInProgress || !strings.Contains(d.WaitingFor, ".data.image") {
		t.Errorf("independent: %s (%s), want the drift at .data.image reported", d.State, d.WaitingFor)
	}
	if w := r.Writes(); w != 0 {
		t.Errorf("observe mode sent %d write requests", w)
	}
	if cmData(t, r, "app-independent", "image") != "edited" {
		t.Error("observe mode corrected the drift")
	}
}
