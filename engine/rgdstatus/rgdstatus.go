// Package rgdstatus computes the status of a ResourceGraphDefinition that
// kroscope serves, with the values kro writes, so that `kubectl get rgd` and
// scripts read the same whichever of the two serves the graph:
//
//   - state Active when GraphAccepted, KindReady and ControllerReady are
//     True, otherwise Inactive;
//   - the conditions GraphRevisionsResolved, GraphAccepted, KindReady,
//     ControllerReady and the root Ready (last), each with kro's reasons, the
//     RGD's generation as observedGeneration, and a lastTransitionTime that
//     only moves when the condition's status changes;
//   - topologicalOrder, and resources[] {id, dependencies[{id}]} for the
//     resources that have dependencies.
//
// kroscope compiles the spec itself and creates no GraphRevisions, so
// GraphRevisionsResolved is True with kro's reason and a message that says
// so. Conditions of a step that was not reached keep their last value, as
// kro leaves them.
package rgdstatus

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Condition types and reasons, as kro writes them.
const (
	Ready                  = "Ready"
	GraphRevisionsResolved = "GraphRevisionsResolved"
	GraphAccepted          = "GraphAccepted"
	KindReady              = "KindReady"
	ControllerReady        = "ControllerReady"

	StateActive   = "Active"
	StateInactive = "Inactive"
)

// dependents are the conditions Ready summarises, in kro's order.
var dependents = []string{GraphRevisionsResolved, GraphAccepted, KindReady, ControllerReady}

// Outcome is how far serving the graph got.
type Outcome struct {
	// BuildErr is set when the graph does not compile: GraphAccepted False.
	BuildErr error
	// Kind is the instance kind once the graph compiled.
	Kind string
	// TopologicalOrder and Dependencies (id → ids it reads) once compiled.
	TopologicalOrder []string
	Dependencies     map[string][]string
	// CRDErr is set when the instance CRD could not be made ready (also a
	// refused breaking change): KindReady False.
	CRDErr error
	// CRDReady: the CRD is Established, KindReady True.
	CRDReady bool
	// ServeErr is set when the instance controller failed to start;
	// Serving once it runs: ControllerReady.
	ServeErr error
	Serving  bool
}

// Settled reports whether serving the graph came to an end: it runs, or a
// step failed. A graph still starting has an outcome that is no state
// of its own (every condition but GraphAccepted still Unknown): writing it
// would flap the status of every served graph on each start, so it waits
// for the step that settles it, which writes then.
func (o Outcome) Settled() bool {
	return o.Serving || o.BuildErr != nil || o.CRDErr != nil || o.ServeErr != nil
}

// Condition is one status condition.
type Condition struct {
	Type               string `json:"type"`
	Status             string `json:"status"`
	Reason             string `json:"reason"`
	Message            string `json:"message"`
	LastTransitionTime string `json:"lastTransitionTime,omitempty"`
	ObservedGeneration int64  `json:"observedGeneration,omitempty"`
}

// Desired returns the status fields kroscope writes for rgd (the current
// cluster object) after outcome o, and whether they differ from what rgd
// carries. now stamps conditions whose status changed.
func Desired(rgd *unstructured.Unstructured, o Outcome, now time.Time) (status map[string]any, changed bool) {
	cur := conditionsOf(rgd)
	conds := startConditions(cur, rgd.GetGeneration(), rgd.GetCreationTimestamp().Time, now)
	conds.record(o)
	conds.summarise()

	var order []string
	var resources []any
	if o.BuildErr == nil {
		order, resources = o.TopologicalOrder, resourcesOf(o)
	}
	status = map[string]any{"state": conds.state(), "conditions": toAny(conds.ordered(cur))}
	status["topologicalOrder"] = stringsAny(order)
	status["resources"] = nil
	if len(resources) > 0 {
		status["resources"] = resources
	}
	curStatus, _, _ := unstructured.NestedMap(rgd.Object, "status")
	return status, !sameStatus(curStatus, status)
}

// Settle returns the conditions (in kro's order) and state Desired writes
// after outcome o on an RGD of generation gen, created at createdAt, whose
// conditions are cur: for a graph with no object to write (a file), or to
// show what kroscope writes.
func Settle(cur []Condition, gen int64, createdAt, now time.Time, o Outcome) ([]Condition, string) {
	conds := startConditions(cur, gen, createdAt, now)
	conds.record(o)
	conds.summarise()
	return conds.ordered(cur), conds.state()
}

// conditions are the RGD's conditions by type while Desired settles them.
type conditions struct {
	byType map[string]Condition
	gen    int64  // the RGD's generation, every set condition's observedGeneration
	stamp  string // now, for conditions whose status changes
}

// startConditions is the RGD's current conditions, the pre-v0.9
// ResourceGraphAccepted dropped (as kro does), and every condition never
// set yet Unknown, "transitioned" at the RGD's creation.
func startConditions(cur []Condition, gen int64, createdAt, now time.Time) *conditions {
	cs := &conditions{byType: map[string]Condition{}, gen: gen, stamp: now.UTC().Format(time.RFC3339)}
	for _, c := range cur {
		if c.Type != "ResourceGraphAccepted" {
			cs.byType[c.Type] = c
		}
	}
	created := createdAt.UTC().Format(time.RFC3339)
	for _, t := range append([]string{Ready}, dependents...) {
		if _, ok := cs.byType[t]; !ok {
			cs.byType[t] = Condition{Type: t, Status: "Unknown", Reason: "AwaitingReconciliation",
				Message: fmt.Sprintf("condition %q is awaiting reconciliation", t), LastTransitionTime: created, ObservedGeneration: cs.gen}
		}
	}
	return cs
}

// set writes one condition; its transition time moves only when its status
// changes.
func (cs *conditions) set(t, status, reason, msg string) {
	c := cs.byType[t]
	if c.Status != status {
		c.LastTransitionTime = cs.stamp
	}
	c.Status, c.Reason, c.Message, c.ObservedGeneration = status, reason, msg, cs.gen
	cs.byType[t] = c
}

// record sets the dependent conditions for the steps o reached; the others
// keep their last value, as kro leaves them.
func (cs *conditions) record(o Outcome) {
	if o.BuildErr != nil {
		cs.set(GraphAccepted, "False", "InvalidResourceGraph", o.BuildErr.Error())
		return
	}
	cs.set(GraphRevisionsResolved, "True", "Resolved", "kroscope serves the current spec (no GraphRevision)")
	cs.set(GraphAccepted, "True", "Valid", "resource graph and schema are valid")
	switch {
	case o.CRDErr != nil:
		cs.set(KindReady, "False", "Failed", o.CRDErr.Error())
	case o.CRDReady:
		cs.set(KindReady, "True", "Ready", fmt.Sprintf("kind %s has been accepted and ready", o.Kind))
	}
	switch {
	case o.ServeErr != nil:
		cs.set(ControllerReady, "False", "FailedToStart", o.ServeErr.Error())
	case o.Serving:
		cs.set(ControllerReady, "True", "Running", "controller is running")
	}
}

// summarise sets Ready: True when every dependent is True for this
// generation, otherwise the most recent False (else Unknown) dependent's.
func (cs *conditions) summarise() {
	root := Condition{Status: "True", Reason: Ready}
	var unhealthy []Condition
	for _, t := range dependents {
		if c := cs.byType[t]; c.Status != "True" || c.ObservedGeneration != cs.gen {
			unhealthy = append(unhealthy, c)
		}
	}
	sort.SliceStable(unhealthy, func(i, j int) bool { return unhealthy[i].LastTransitionTime > unhealthy[j].LastTransitionTime })
	for _, want := range []string{"False", "Unknown"} {
		if root.Status != "True" {
			break
		}
		for _, c := range unhealthy {
			if c.Status == want {
				root = Condition{Status: c.Status, Reason: c.Reason, Message: c.Message}
				break
			}
		}
	}
	cs.set(Ready, root.Status, root.Reason, root.Message)
}

// state is Active when the graph compiled, its kind is ready and its
// controller runs.
func (cs *conditions) state() string {
	if cs.byType[GraphAccepted].Status == "True" && cs.byType[KindReady].Status == "True" && cs.byType[ControllerReady].Status == "True" {
		return StateActive
	}
	return StateInactive
}

// ordered lists the dependents by transition time, Ready last (kro's order
// for kubectl); the current order is kept when only the order would change.
func (cs *conditions) ordered(cur []Condition) []Condition {
	list := make([]Condition, 0, len(cs.byType))
	for _, c := range cs.byType {
		if c.Type != Ready {
			list = append(list, c)
		}
	}
	sort.SliceStable(list, func(i, j int) bool {
		if list[i].LastTransitionTime != list[j].LastTransitionTime {
			return list[i].LastTransitionTime < list[j].LastTransitionTime
		}
		return rank(list[i].Type) < rank(list[j].Type)
	})
	list = append(list, cs.byType[Ready])
	if sameSet(cur, list) {
		return cur
	}
	return list
}

// resourcesOf is status.resources: each resource that has dependencies,
// in topological order, with the ids it reads.
func resourcesOf(o Outcome) []any {
	var resources []any
	for _, id := range o.TopologicalOrder {
		deps := o.Dependencies[id]
		if len(deps) == 0 {
			continue
		}
		list := make([]any, 0, len(deps))
		for _, d := range deps {
			list = append(list, map[string]any{"id": d})
		}
		resources = append(resources, map[string]any{"id": id, "dependencies": list})
	}
	return resources
}

// reached is the order in which kro settles the conditions of a new graph,
// which orders conditions that changed in the same second.
var reached = []string{GraphAccepted, GraphRevisionsResolved, KindReady, ControllerReady}

func rank(t string) int {
	for i, d := range reached {
		if d == t {
			return i
		}
	}
	return len(reached)
}

// conditionsOf reads the RGD's current conditions.
func conditionsOf(rgd *unstructured.Unstructured) []Condition {
	raw, _, _ := unstructured.NestedSlice(rgd.Object, "status", "conditions")
	data, err := json.Marshal(raw)
	if err != nil {
		return nil
	}
	var out []Condition
	if err := json.Unmarshal(data, &out); err != nil {
		return nil
	}
	return out
}

func sameSet(a, b []Condition) bool {
	if len(a) != len(b) {
		return false
	}
	m := map[string]Condition{}
	for _, c := range a {
		m[c.Type] = c
	}
	for _, c := range b {
		if m[c.Type] != c {
			return false
		}
	}
	return true
}

func toAny(cs []Condition) []any {
	out := make([]any, 0, len(cs))
	for _, c := range cs {
		data, _ := json.Marshal(c)
		var m map[string]any
		_ = json.Unmarshal(data, &m)
		out = append(out, m)
	}
	return out
}

func stringsAny(ss []string) any {
	if len(ss) == 0 {
		return nil
	}
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// sameStatus compares the fields kroscope writes, through JSON so that
// numbers and empty lists compare as the API server stores them.
func sameStatus(cur, want map[string]any) bool {
	for _, k := range []string{"state", "conditions", "topologicalOrder", "resources"} {
		if !sameJSON(cur[k], want[k]) {
			return false
		}
	}
	return true
}

func sameJSON(a, b any) bool {
	norm := func(v any) any {
		if v == nil {
			return nil
		}
		if l, ok := v.([]any); ok && len(l) == 0 {
			return nil
		}
		data, _ := json.Marshal(v)
		var out any
		_ = json.Unmarshal(data, &out)
		return out
	}
	return reflect.DeepEqual(norm(a), norm(b))
}

// Patch is the JSON merge patch for the status subresource. Empty lists
// become null so that stale values are removed, as kro's patch does.
func Patch(status map[string]any) ([]byte, error) {
	out := map[string]any{}
	for k, v := range status {
		if l, ok := v.([]any); (ok && len(l) == 0) || v == nil {
			out[k] = nil
			continue
		}
		out[k] = v
	}
	return json.Marshal(map[string]any{"status": out})
}
