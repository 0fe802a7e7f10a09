package state

import "time"

// InstanceDetail is what the instance pane shows beyond the graph: the
// instance object itself, its conditions and its Events. It is read on
// demand (Engine.InstanceDetail), not kept in every Snapshot.
type InstanceDetail struct {
	Key InstanceKey
	// Object is the instance as the API server last sent it (managedFields
	// dropped).
	Object     map[string]any
	Conditions []Condition
	// Events are the API server's Events about the instance, newest first.
	Events []Event
	// EventsErr says why Events could not be listed (RBAC, say); the rest
	// of the detail is still good.
	EventsErr string
	// At is when the detail was read.
	At time.Time
}

// Condition is one entry of the instance's status.conditions.
type Condition struct {
	Type, Status, Reason, Message string
	LastTransition                time.Time
	ObservedGeneration            int64
}

// Event is one Kubernetes Event about the instance.
type Event struct {
	Type, Reason, Message string
	// Source is the component that reported it.
	Source string
	Count  int64
	// Last is when it last happened.
	Last time.Time
}
