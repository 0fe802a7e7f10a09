package engine

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kroscope/kroscope/engine/mask"
	"github.com/kroscope/kroscope/engine/rgdstatus"
	"github.com/kroscope/kroscope/engine/slim"
	"github.com/kroscope/kroscope/engine/source"
	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/termtext"
)

// secretMask replaces a Secret's values in a definition's YAML.
const secretMask = "********"

// definitionOf is the definition as written, for the graphs screen: its
// scope, its cluster object's UID, and its YAML with every Secret's values
// masked (a template may carry literal Secret data), its status left out;
// nil when nothing of it could be read.
func definitionOf(u source.Update) *state.GraphDefinition {
	var obj map[string]any
	switch {
	case u.Object != nil:
		// Its status is left out: it is what it was when the spec was
		// read, and the Status tab shows the conditions as they are.
		obj = map[string]any{}
		for k, v := range slim.WithoutManagedFields(u.Object.Object) {
			if k != "status" {
				obj[k] = v
			}
		}
	case u.RGD != nil:
		obj = u.RGD.Object
	}
	if obj == nil && u.RGD == nil {
		return nil
	}
	d := &state.GraphDefinition{Scope: graph.ScopeNamespaced}
	if u.RGD != nil && u.RGD.Spec.Schema.Scope == graph.ScopeCluster {
		d.Scope = graph.ScopeCluster
	}
	if u.Object != nil {
		d.UID = string(u.Object.GetUID())
		if s, _, _ := unstructured.NestedString(u.Object.Object, "spec", "schema", "scope"); s == graph.ScopeCluster {
			d.Scope = graph.ScopeCluster
		}
	}
	if obj != nil {
		// Escaped before it is encoded: YAML refuses a raw C1 control, so
		// a definition carrying one would show no YAML at all. The text is
		// for the graphs screen only (see docs/text-boundary.md).
		m, _ := mask.Secrets(termtext.Deep(obj), secretMask, false).(map[string]any)
		if b, err := yaml.Marshal(m); err == nil {
			d.YAML = string(b)
		} else {
			d.YAML = "# cannot render as YAML: " + err.Error() + "\n"
		}
	}
	return d
}

// shownConditions are the conditions kroscope settles for a graph (what
// it writes, or would write, on the RGD's status), kept between outcomes
// so that a condition's transition time moves only when its status does.
type shownConditions struct {
	gen     int64
	created time.Time
	conds   []rgdstatus.Condition
}

func shownFor(u source.Update) shownConditions {
	if u.Object != nil {
		return shownConditions{gen: u.Object.GetGeneration(), created: u.Object.GetCreationTimestamp().Time}
	}
	return shownConditions{created: time.Now()}
}

// stateConditions converts RGD conditions for the state.
func stateConditions(cs []rgdstatus.Condition) []state.Condition {
	out := make([]state.Condition, 0, len(cs))
	for _, c := range cs {
		sc := state.Condition{Type: c.Type, Status: c.Status, Reason: c.Reason, Message: c.Message, ObservedGeneration: c.ObservedGeneration}
		if t, err := time.Parse(time.RFC3339, c.LastTransitionTime); err == nil {
			sc.LastTransition = t
		}
		out = append(out, sc)
	}
	return out
}

// GraphEvents lists the Events about a cluster graph's
// ResourceGraphDefinition (by its UID), newest first. The graph screen
// asks only while its Events tab shows. A graph read from a file has none.
func (e *Engine) GraphEvents(ctx context.Context, name string) ([]state.Event, error) {
	uid := ""
	for _, g := range e.store.Snapshot().Graphs {
		if g.Name == name && g.Definition != nil {
			uid = g.Definition.UID
		}
	}
	if uid == "" {
		return nil, fmt.Errorf("graph %s was read from a file: it has no Events", name)
	}
	events, err := listEvents(ctx, e.cl.gated(), "", uid)
	if err != nil {
		return nil, fmt.Errorf("listing the Events of ResourceGraphDefinition %s: %w", name, err)
	}
	return events, nil
}
