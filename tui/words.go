package tui

import (
	"regexp"
	"strings"

	"github.com/kroscope/kroscope/engine/state"
)

// One vocabulary: states are shown as the reconciler spells them (ACTIVE,
// IN_PROGRESS, WAITING_FOR_READINESS...), and sentences about them use
// state.Phase.Phrase, so "waiting for" is never said twice in a row.

// waitingOn matches the reconciler's "waiting for <id> (<state in words>)".
var waitingOn = regexp.MustCompile(`^waiting for (\S+) \(([a-z ]+)\)$`)

// reason is the one line that says why a resource is where it is.
func reason(r *state.Resource) string {
	why := strings.TrimSpace(r.WaitingFor)
	if r.Phase() == state.PhaseSkipped {
		if len(r.IncludeWhen) > 0 && (why == "" || strings.Contains(why, "includeWhen")) {
			exprs := make([]string, len(r.IncludeWhen))
			for i, e := range r.IncludeWhen {
				exprs[i] = expr(e)
			}
			return "excluded: includeWhen " + strings.Join(exprs, " and ") + " is false"
		}
		if why == "" {
			return "excluded"
		}
		return "excluded: " + strings.TrimPrefix(why, "excluded: ")
	}
	if r.Phase() == state.PhaseWaitingForReadiness {
		if rw := readyWhy(r); rw != "" {
			return rw
		}
	}
	if m := waitingOn.FindStringSubmatch(why); m != nil {
		dep := state.Phase(strings.ToUpper(strings.ReplaceAll(m[2], " ", "_")))
		return "waiting for " + m[1] + " (" + dep.Phrase() + ")"
	}
	return why
}

// expr writes an expression as the graph does, inside ${...}.
func expr(e string) string {
	if strings.HasPrefix(e, "${") {
		return e
	}
	return "${" + e + "}"
}
