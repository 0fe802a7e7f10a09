package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kroscope/kroscope/reconciler"
	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/reconciler/metadata"
	"github.com/kroscope/kroscope/test/graphs"
)

// coldReader is a Reader that knows nothing yet, as the engine's watches
// before they see an object: every read it cannot answer is a request.
type coldReader struct{}

func (coldReader) Instance(schema.GroupVersionResource, string, string) (*unstructured.Unstructured, bool) {
	return nil, false
}
func (coldReader) Child(schema.GroupVersionResource, string, string) (*unstructured.Unstructured, bool) {
	return nil, false
}
func (coldReader) Unseen(schema.GroupVersionResource, string, string) bool               { return true }
func (coldReader) Read(schema.GroupVersionResource, *unstructured.Unstructured)          {}
func (coldReader) Wrote(schema.GroupVersionResource, *unstructured.Unstructured, string) {}
func (coldReader) Stale(schema.GroupVersionResource, string, string)                     {}
func (coldReader) Forget(schema.GroupVersionResource, string, string)                    {}

func withColdReader(c *rigConfig) { c.opts.Reader = coldReader{} }

// A new instance's children are created without reading first: each apply
// that creates one proves its name free (client.Objects.Create), where a
// GET answered 404 did before.
func TestReconcilerCreatesWithoutReading(t *testing.T) {
	r := newRig(t, graphs.Chain("rtnoread", "RtNoRead"), withColdReader)
	r.create("apiVersion: kro.run/v1alpha1\nkind: RtNoRead\nmetadata:\n  name: one\nspec: {}\n")
	r.Reset()
	o, err := r.reconcile("one")
	if err != nil || o.State.State != reconciler.InstanceStateActive {
		t.Fatalf("reconcile: %s (%s), %v; want ACTIVE", o.State.State, o.Message, err)
	}
	// The Reader knows nothing: the one read is the instance's own.
	if got := r.Reads(); got != 1 {
		t.Errorf("%d reads, want 1 (the instance)", got)
	}
	if got := r.Writes(); got != 5 {
		t.Errorf("%d writes, want 5: %v", got, r.FirstWrites())
	}
	for _, n := range []string{"one-a", "one-a-b", "one-a-b-c"} {
		cm := r.get(gvrConfigMap, r.ns, n)
		if cm == nil {
			t.Fatalf("%s was not created", n)
		}
		if m := cm.GetManagedFields(); len(m) != 1 || m[0].Manager != metadata.FieldManager || m[0].Operation != metav1.ManagedFieldsOperationApply {
			t.Errorf("%s managedFields %v, want one Apply entry of %s, as a plain apply makes", n, m, metadata.FieldManager)
		}
	}
}

// The instance's own child, unknown to the watches (every pass is as cold
// as a restart), is found through the refused create and updated in
// place, not recreated.
func TestReconcilerCreateRefusedOwnChildUpdated(t *testing.T) {
	r := newRig(t, chainGraph("RtOwnCold"), withColdReader)
	r.create(chainInstance("RtOwnCold", "app"))
	r.untilState("app", reconciler.InstanceStateActive)
	uid := r.get(gvrConfigMap, r.ns, "app-first").GetUID()
	r.patchSpec("app", map[string]any{"value": "two"})
	r.until("app", time.Minute, "the new value applied", func(o reconciler.Observation, _ error) bool {
		return o.State.State == reconciler.InstanceStateActive && cmData(t, r, "app-first", "value") == "two"
	})
	if got := r.get(gvrConfigMap, r.ns, "app-first").GetUID(); got != uid {
		t.Errorf("app-first was recreated (uid %s -> %s), want it updated in place", uid, got)
	}
}

// A name taken by an object kroscope does not own, unknown to the watches:
// the refused create leaves it untouched, and the instance is refused as
// when the name was read first.
func TestReconcilerCreateRefusedForeignChild(t *testing.T) {
	r := newRig(t, chainGraph("RtForeignCold"), withColdReader)
	plain := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "app-first", Namespace: r.ns}, Data: map[string]string{"value": "old"}}
	made, err := r.env.Kubernetes().CoreV1().ConfigMaps(r.ns).Create(ctxT(t), plain, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r.create(chainInstance("RtForeignCold", "app"))
	o := r.until("app", time.Minute, "ERROR", func(o reconciler.Observation, _ error) bool {
		return o.State.State == reconciler.InstanceStateError
	})
	if err := o.Resources["first"].Err; err == nil || !strings.Contains(err.Error(), "not managed by kroscope") {
		t.Fatalf("first error %v: want the object refused as not kroscope's", err)
	}
	if got := r.get(gvrConfigMap, r.ns, "app-first").GetResourceVersion(); got != made.ResourceVersion {
		t.Errorf("the foreign object was modified (resourceVersion %s -> %s)", made.ResourceVersion, got)
	}
}

var prunedFieldGraph = graphs.RGD("rtprunefield", "RtPruneField", "spec:\n  value: string | default=one",
	graphs.ConfigMap("cm", "${schema.metadata.name}-cm", "kept: ${schema.spec.value}\nDROPPED"))

// A field removed from the template is removed from a child that the
// guarded create made: the create leaves the field ownership a plain apply
// leaves, so later applies prune as before.
func TestReconcilerFieldRemovedFromTemplateIsRemoved(t *testing.T) {
	v1 := strings.Replace(prunedFieldGraph, "DROPPED", "dropped: gone-soon", 1)
	v2 := strings.Replace(prunedFieldGraph, "        DROPPED\n", "", 1)
	r := newRig(t, v1, withColdReader)
	r.create("apiVersion: kro.run/v1alpha1\nkind: RtPruneField\nmetadata:\n  name: app\nspec: {}\n")
	r.untilState("app", reconciler.InstanceStateActive)
	if got := cmData(t, r, "app-cm", "dropped"); got != "gone-soon" {
		t.Fatalf("dropped = %q before the change", got)
	}
	// The graph changed: the same kind and name, the field gone.
	rgds, err := graph.Parse([]byte(v2), t.Name())
	if err != nil {
		t.Fatal(err)
	}
	g, err := graph.NewBuilder(graph.WithRESTMapper(r.cs.RESTMapper())).Build(rgds[0])
	if err != nil {
		t.Fatal(err)
	}
	r.c = reconciler.NewController(logr.Discard(), reconciler.ReconcileConfig{DefaultRequeueDuration: time.Second, DeletionGraceTimeDuration: time.Minute},
		g.Instance.GVR, g, r.cs, g.DefaultServiceAccounts, metadata.NewGraphLabeler(g.Name, g.UID))
	r.c.SetOptions(reconciler.Options{Reader: coldReader{}})
	r.c.SetObserver(func(o reconciler.Observation) {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.obs[types.NamespacedName{Namespace: o.Namespace, Name: o.Name}] = o
	})
	r.until("app", time.Minute, "the field removed", func(o reconciler.Observation, _ error) bool {
		data, _ := r.get(gvrConfigMap, r.ns, "app-cm").Object["data"].(map[string]any)
		_, there := data["dropped"]
		return o.State.State == reconciler.InstanceStateActive && !there && data["kept"] == "one"
	})
}
