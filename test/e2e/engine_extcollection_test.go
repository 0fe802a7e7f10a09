package e2e

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/reconciler"
	"github.com/kroscope/kroscope/test/graphs"
)

// engExtCollectionRGD reads, in every namespace (the engine watches its
// own), the ConfigMaps labelled team=engext-a.
var engExtCollectionRGD = graphs.RGD("engextcoll", "EngExtcoll", "spec:\n  suffix: string | default=x",
	graphs.Resource("cms", "externalRef:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    selector:\n      matchLabels:\n        team: engext-a"),
	graphs.ConfigMap("summary", "${schema.metadata.name}-summary", "count: ${string(size(cms))}"))

// A matching ConfigMap created (or relabelled away) after the instance
// settled wakes it through the selector watch: the requeue timer is ten
// minutes.
func TestEngineExtcollectionWatch(t *testing.T) {
	r := newEngRig(t)
	run, gvr := r.serveFile("engextcoll", engExtCollectionRGD, watchesOnly)
	run.waitFor(time.Minute, "the selector watch", func(s *state.Snapshot) bool {
		for _, w := range s.Watches {
			if w.Name == "configmaps (external selector "+r.ns+" team=engext-a)" && w.Synced {
				return true
			}
		}
		return false
	})
	r.createInstance(gvr, "EngExtcoll", "coll", nil)
	key := state.InstanceKey{Resource: gvr.Resource + "." + gvr.Group, Namespace: r.ns, Name: "coll"}
	summary := func() string {
		cm, err := r.dyn.Resource(gvrConfigMap).Namespace(r.ns).Get(context.Background(), "coll-summary", metav1.GetOptions{})
		if err != nil {
			return ""
		}
		v, _ := cm.Object["data"].(map[string]any)["count"].(string)
		return v
	}
	settled := func(items string, count string) func(*state.Snapshot) bool {
		return func(s *state.Snapshot) bool {
			in := s.Instance(key)
			if in == nil || in.State != reconciler.InstanceStateActive {
				return false
			}
			res := in.Resource("cms")
			return res != nil && res.Name == items && res.State == reconciler.ResourceStateSynced && summary() == count
		}
	}
	run.waitFor(time.Minute, "ACTIVE with no item", settled("0 items", "0"))
	// Let the passes the instance's own writes cause (the summary's watch
	// event, the status) finish: from here only the selector watch can wake it.
	time.Sleep(3 * time.Second)

	t0 := time.Now()
	r.applyYAML(gvrConfigMap, r.ns, "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: member\n  labels:\n    team: engext-a\ndata:\n  x: \"1\"\n")
	run.waitFor(30*time.Second, "the new member counted", settled("1 item", "1"))
	t.Logf("matching ConfigMap created → summary updated in %s", time.Since(t0).Round(time.Millisecond))

	// Leaving the selector (only the old labels match) wakes it too.
	patch := []byte(`{"metadata":{"labels":{"team":"elsewhere"}}}`)
	if _, err := r.dyn.Resource(gvrConfigMap).Namespace(r.ns).Patch(context.Background(), "member", types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	s := run.waitFor(30*time.Second, "the member gone from the collection", settled("0 items", "0"))
	if in := s.Instance(key); in.Resource("cms") == nil || !in.Resource("cms").External {
		t.Errorf("cms is not shown as external")
	}
	for _, w := range s.Watches {
		if strings.Contains(w.Name, "(children)") && strings.Contains(w.Name, "engext") {
			t.Errorf("selector watch shown as children: %s", w.Name)
		}
	}
}
