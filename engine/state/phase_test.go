package state

import "testing"

func TestPhaseClass(t *testing.T) {
	for p, want := range map[Phase]Class{
		"ACTIVE": ClassOK, "SYNCED": ClassOK, "IN_PROGRESS": ClassProgressing, "CREATED": ClassProgressing,
		"UPDATING": ClassProgressing, "WAITING_FOR_READINESS": ClassWaiting, "WAITING_FOR_EXTERNAL_RESOURCE": ClassWaiting,
		"WAITING_FOR_SOMETHING_NEW": ClassWaiting, "PENDING": ClassPending, "": ClassPending, "SKIPPED": ClassSkipped,
		"ERROR": ClassFailed, "FAILED": ClassFailed, "DELETING": ClassDeleting, "PENDING_DELETION": ClassDeleting,
		"DELETED": ClassDeleting, "SUSPENDED": ClassSuspended, "BOGUS": ClassUnknown,
	} {
		if got := p.Class(); got != want {
			t.Errorf("%q.Class() = %s, want %s", p, got, want)
		}
	}
}

func TestPhaseWords(t *testing.T) {
	for _, c := range []struct{ p, word, short, phrase string }{
		{"", "NEW", "NEW", "not reconciled yet"},
		{"WAITING_FOR_READINESS", "WAITING_FOR_READINESS", "WAIT:READY", "not ready yet"},
		{"WAITING_FOR_EXTERNAL_RESOURCE", "WAITING_FOR_EXTERNAL_RESOURCE", "WAIT:EXTERN", "external object missing"},
		{"IN_PROGRESS", "IN_PROGRESS", "IN_PROGRESS", "in progress"},
	} {
		p := Phase(c.p)
		if p.Word() != c.word || p.Short() != c.short || p.Phrase() != c.phrase {
			t.Errorf("%q: word %q short %q phrase %q", c.p, p.Word(), p.Short(), p.Phrase())
		}
		if len(p.Short()) > 12 {
			t.Errorf("%q: short form %q longer than 12", c.p, p.Short())
		}
	}
}
