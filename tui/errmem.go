package tui

import (
	"fmt"
	"strings"
	"time"

	"charm.land/lipgloss/v2"

	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/theme"
)

// errorMemory renders a remembered error: in the error colour while it
// holds, with the attempts and the next retry; dimmed once it has cleared,
// so the error that cleared a second ago can still be read.
func errorMemory(th *theme.Theme, e *state.ErrorMemory, w int, now time.Time) []string {
	if e == nil {
		return nil
	}
	attempts := fmt.Sprintf("%d attempts", e.Attempts)
	if e.Attempts == 1 {
		attempts = "1 attempt"
	}
	var head, meta string
	body := th.Dim
	if e.Active() {
		head = th.ClassStyle(state.ClassFailed).Render("Error")
		meta = fmt.Sprintf("%s since %s, last %s (%s ago)", attempts, e.Since.Format("15:04:05"), e.At.Format("15:04:05"), ago(now, e.At))
		if !e.NextRetry.IsZero() {
			meta += fmt.Sprintf("; backoff %s, next retry %s", dur(e.Backoff), retryIn(now, e.NextRetry))
		}
		body = lipgloss.NewStyle()
	} else {
		head = th.Dim.Render("Last error (cleared)")
		meta = fmt.Sprintf("cleared %s (%s ago) after %s; last seen %s", e.Cleared.Format("15:04:05"), ago(now, e.Cleared), attempts, e.At.Format("15:04:05"))
	}
	if e.Resource != "" {
		meta = "in " + e.Resource + ": " + meta
	}
	out := []string{"", head}
	for _, l := range wrap(meta, max(w-2, 8)) {
		out = append(out, "  "+th.Dim.Render(l))
	}
	for _, l := range wrap(e.Err, max(w-2, 8)) {
		out = append(out, "  "+body.Render(l))
	}
	return out
}

// retryIn says when the next retry is due: "in 1.6s", or "due" once past.
func retryIn(now, t time.Time) string {
	if !t.After(now) {
		return "due now"
	}
	return "in " + dur(t.Sub(now))
}

// errorSummary is the one line a flash gives a remembered error.
func errorSummary(e *state.ErrorMemory, now time.Time) string {
	if e == nil {
		return ""
	}
	msg := strings.ReplaceAll(e.Err, "\n", " ")
	if e.Active() {
		return msg
	}
	return fmt.Sprintf("cleared %s ago: %s", ago(now, e.Cleared), msg)
}
