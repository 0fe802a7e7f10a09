package state

import "strings"

// Phase is an instance or resource state as the reconciler writes it
// (Instance.State, Resource.State): ACTIVE, IN_PROGRESS, WAITING_FOR_READINESS...
// The fields stay plain strings so writers need no conversion; readers ask
// a Phase what the state means instead of matching spellings.
type Phase string

// The phases kroscope's reconciler writes. "" is an instance that has not
// been reconciled yet.
const (
	PhaseNew                 Phase = ""
	PhaseActive              Phase = "ACTIVE"
	PhaseInProgress          Phase = "IN_PROGRESS"
	PhaseFailed              Phase = "FAILED"
	PhaseError               Phase = "ERROR"
	PhaseDeleting            Phase = "DELETING"
	PhaseSuspended           Phase = "SUSPENDED"
	PhasePending             Phase = "PENDING"
	PhaseSkipped             Phase = "SKIPPED"
	PhaseCreated             Phase = "CREATED"
	PhaseUpdating            Phase = "UPDATING"
	PhaseSynced              Phase = "SYNCED"
	PhaseWaitingForReadiness Phase = "WAITING_FOR_READINESS"
	PhaseWaitingForExternal  Phase = "WAITING_FOR_EXTERNAL_RESOURCE"
	PhasePendingDeletion     Phase = "PENDING_DELETION"
	PhaseDeleted             Phase = "DELETED"
)

// Class groups phases by what they mean to a reader: sorting, filtering,
// "next error" and the spinner ask for the class, the theme maps a class to
// a glyph and a colour.
type Class int

// The classes, in the order summaries list them.
const (
	ClassOK Class = iota
	ClassProgressing
	ClassWaiting
	ClassPending
	ClassSkipped
	ClassFailed
	ClassDeleting
	ClassSuspended
	ClassUnknown
	numClasses
)

// Classes lists every class in display order.
var Classes = []Class{ClassOK, ClassProgressing, ClassWaiting, ClassPending, ClassSkipped, ClassFailed, ClassDeleting, ClassSuspended, ClassUnknown}

// NumClasses is the number of classes (for arrays indexed by Class).
const NumClasses = int(numClasses)

// String is the class's word for filters (state:failed, state:waiting).
func (c Class) String() string {
	if c < 0 || c >= numClasses {
		return "unknown"
	}
	return [...]string{"ok", "progressing", "waiting", "pending", "skipped", "failed", "deleting", "suspended", "unknown"}[c]
}

// Class says what the phase means. WAITING_* states the reconciler may add
// later are waiting; anything else unknown is ClassUnknown.
func (p Phase) Class() Class {
	switch p {
	case PhaseActive, PhaseSynced:
		return ClassOK
	case PhaseInProgress, PhaseCreated, PhaseUpdating:
		return ClassProgressing
	case PhaseWaitingForReadiness, PhaseWaitingForExternal:
		return ClassWaiting
	case PhasePending, PhaseNew:
		return ClassPending
	case PhaseSkipped:
		return ClassSkipped
	case PhaseError, PhaseFailed:
		return ClassFailed
	case PhaseDeleting, PhasePendingDeletion, PhaseDeleted:
		return ClassDeleting
	case PhaseSuspended:
		return ClassSuspended
	}
	if strings.HasPrefix(string(p), "WAITING_") {
		return ClassWaiting
	}
	return ClassUnknown
}

// Word is the phase as shown on screen: the state itself, NEW before the
// first reconcile.
func (p Phase) Word() string {
	if p == PhaseNew {
		return "NEW"
	}
	return string(p)
}

// Short is the word in at most 12 cells, for columns too narrow for the
// long WAITING_FOR_* spellings.
func (p Phase) Short() string {
	switch p {
	case PhaseWaitingForReadiness:
		return "WAIT:READY"
	case PhaseWaitingForExternal:
		return "WAIT:EXTERN"
	case PhasePendingDeletion:
		return "DEL:PENDING"
	}
	w := p.Word()
	if rest, ok := strings.CutPrefix(w, "WAITING_FOR_"); ok {
		w = "WAIT:" + rest
	}
	if len(w) > 12 {
		w = w[:12]
	}
	return w
}

// Phrase is the phase in words for sentences ("waiting for deployment
// (not ready yet)").
func (p Phase) Phrase() string {
	switch p {
	case PhaseWaitingForReadiness:
		return "not ready yet"
	case PhaseWaitingForExternal:
		return "external object missing"
	case PhaseNew:
		return "not reconciled yet"
	}
	return strings.ToLower(strings.ReplaceAll(string(p), "_", " "))
}

// Ready reports whether a resource in this phase counts as ready
// (ReadyCount): synced, or excluded by includeWhen.
func (p Phase) Ready() bool { return p == PhaseSynced || p == PhaseSkipped }

// Phase is the instance's state as a Phase.
func (i *Instance) Phase() Phase { return Phase(i.State) }

// Phase is the resource's state as a Phase.
func (r *Resource) Phase() Phase { return Phase(r.State) }
