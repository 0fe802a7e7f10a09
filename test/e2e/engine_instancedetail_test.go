package e2e

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8stypes "k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"

	"github.com/kroscope/kroscope/engine/state"
)

// The engine's InstanceDetail returns the instance from its cache with its
// conditions, and the API server's Events about it (and no other), newest
// first.
func TestEngineInstanceDetailReadsEventsNewestFirst(t *testing.T) {
	rig := newEngRig(t)
	run, gvr := rig.serveChain("detail-chain", "DetailChain")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var uids []string
	for _, n := range []string{"seen", "other"} {
		u := rig.createInstance(gvr, "DetailChain", n, map[string]any{"value": "v-" + n})
		uids = append(uids, string(u.GetUID()))
	}
	run.allInState("detailchains."+gvr.Group, 2, "ACTIVE", time.Minute)

	kube := kubernetes.NewForConfigOrDie(rig.cfg)
	event := func(name, uid, reason string, at time.Time) {
		ev := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: rig.ns},
			InvolvedObject: corev1.ObjectReference{APIVersion: gvr.Group + "/" + gvr.Version, Kind: "DetailChain", Namespace: rig.ns, Name: "seen", UID: k8stypes.UID(uid)},
			Reason:         reason, Message: reason + " happened", Type: corev1.EventTypeWarning, Count: 2,
			Source:         corev1.EventSource{Component: "tester"},
			FirstTimestamp: metav1.NewTime(at), LastTimestamp: metav1.NewTime(at)}
		if _, err := kube.CoreV1().Events(rig.ns).Create(ctx, ev, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	now := time.Now().Truncate(time.Second)
	event("older", uids[0], "Older", now.Add(-time.Minute))
	event("newer", uids[0], "Newer", now)
	event("not-mine", uids[1], "NotMine", now)

	// ACTIVE is in the state store once the status write returned; the
	// cache the detail reads holds it when its watch delivers the write.
	key := state.InstanceKey{Resource: "detailchains." + gvr.Group, Namespace: rig.ns, Name: "seen"}
	var d state.InstanceDetail
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		var err error
		if d, err = run.e.InstanceDetail(ctx, key); err != nil {
			t.Fatal(err)
		}
		if conds, _, _ := unstructured.NestedSlice(d.Object, "status", "conditions"); len(conds) > 0 || time.Now().After(deadline) {
			break
		}
	}
	if d.EventsErr != "" {
		t.Fatalf("events: %s", d.EventsErr)
	}
	var reasons []string
	for _, e := range d.Events {
		if e.Source == "tester" {
			reasons = append(reasons, e.Reason)
		}
	}
	if len(reasons) != 2 || reasons[0] != "Newer" || reasons[1] != "Older" {
		t.Fatalf("events %v, want [Newer Older] (newest first, only this instance's)", reasons)
	}
	if v, _, _ := unstructured.NestedString(d.Object, "spec", "value"); v != "v-seen" {
		t.Fatalf("spec.value = %q", v)
	}
	if _, ok, _ := unstructured.NestedFieldNoCopy(d.Object, "metadata", "managedFields"); ok {
		t.Fatal("managedFields kept")
	}
	conds, _, _ := unstructured.NestedSlice(d.Object, "status", "conditions")
	if len(conds) == 0 || len(d.Conditions) != len(conds) {
		t.Fatalf("conditions: object has %d, detail %d: %+v", len(conds), len(d.Conditions), d.Conditions)
	}
}
