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
		active   bool
	}{
		"kro wrote":                     {false, withWrites(entry("kro", before)), true},
		"kro applied children metadata": {false, withWrites(entry("kro.run/applyset-parent", before)), true},
		"someone else":                  {false, withWrites(entry("kubectl", after)), false},
		"kroscope wrote after kro":      {false, withWrites(entry("kro", before), entry("kroscope", after)), false},
		"kro wrote after kroscope":      {false, withWrites(entry("kroscope", before), entry("kro", after)), true},
		"take-over ignores old traces":  {true, withWrites(entry("kro", before)), false},
		"take-over sees new writes":     {true, withWrites(entry("kro", after)), true},
	} {
		t.Run(name, func(t *testing.T) {
			d := New(Config{OwnManager: "kroscope", TakeOver: tc.takeOver, Since: start})
			d.Note("ResourceGraphDefinition web", tc.obj)
			got := d.Active()
			if (got != "") != tc.active {
				t.Fatalf("Active() = %q, want active=%v", got, tc.active)
			}
			if tc.active && !strings.Contains(got, "ResourceGraphDefinition web") {
				t.Errorf("reason %q does not name the object", got)
			}
			d.Forget("ResourceGraphDefinition web")
			if d.Active() != "" {
				t.Error("Forget must drop the evidence")
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
