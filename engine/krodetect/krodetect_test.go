package krodetect

import (
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func withWrites(entries ...metav1.ManagedFieldsEntry) *metav1.ObjectMeta {
	return &metav1.ObjectMeta{Name: "web", ManagedFields: entries}
}

func entry(manager string, at time.Time) metav1.ManagedFieldsEntry {
	t := metav1.NewTime(at)
	return metav1.ManagedFieldsEntry{Manager: manager, Time: &t, Operation: metav1.ManagedFieldsOperationUpdate}
}

func TestNoteWrites(t *testing.T) {
	start := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	before, after := start.Add(-time.Hour), start.Add(time.Minute)
	for name, tc := range map[string]struct {
		takeOver bool
		obj      *metav1.ObjectMeta
		want     Presence
	}{
		"kro wrote":                     {false, withWrites(entry("kro", before)), Unproven},
		"kro applied children metadata": {false, withWrites(entry("kro.run/applyset-parent", before)), Unproven},
		"someone else":                  {false, withWrites(entry("kubectl", after)), NeverSeen},
		"kroscope wrote after kro":      {false, withWrites(entry("kro", before), entry("kroscope", after)), NeverSeen},
		"kro wrote after kroscope":      {false, withWrites(entry("kroscope", before), entry("kro", after)), Unproven},
		// The user's apply of a graph (engine.UserFieldManager) is not
		// kroscope's reconcile: kro's earlier write still counts.
		"a user applied after kro":     {false, withWrites(entry("kro", before), entry("kroscope-user", after)), Unproven},
		"take-over ignores old traces": {true, withWrites(entry("kro", before)), TakenOver},
		"take-over sees new writes":    {true, withWrites(entry("kro", after)), Unproven},
	} {
		t.Run(name, func(t *testing.T) {
			d := New(Config{OwnManager: "kroscope", TakeOver: tc.takeOver, Since: start})
			d.Note("ResourceGraphDefinition web", tc.obj)
			v := d.Verdict()
			if v.Presence != tc.want {
				t.Fatalf("Verdict() = %+v, want presence %d", v, tc.want)
			}
			if tc.want != NeverSeen && !strings.Contains(v.Reason, "ResourceGraphDefinition web") {
				t.Errorf("reason %q does not name the object", v.Reason)
			}
			// Issue #26: the object deleted, kro is still not proven gone.
			d.Forget("ResourceGraphDefinition web")
			if got := d.Verdict(); got != v {
				t.Errorf("after the object was deleted: %+v, was %+v", got, v)
			}
		})
	}
}

func TestHeadline(t *testing.T) {
	h := Headline("lease kro-system/controller.kro.run held by kro-1", false)
	if h != "kro is reconciling this cluster (lease kro-system/controller.kro.run held by kro-1): observing; --take-over to reconcile" {
		t.Errorf("headline %q", h)
	}
}
