package tui

import tea "charm.land/bubbletea/v2"

// host is how a screen asks for what only the root may do: change the
// screen stack, set the flash line, quit. A screen never calls the root
// model (a test parses the package to keep it so): it posts requests
// here, and the root applies them, in order, once the message that caused
// them is handled. A command's goroutine returns them as a requestsMsg
// instead (the host belongs to the UI goroutine).
type host struct{ reqs []request }

type requestOp int

const (
	reqPush     requestOp = iota
	reqPop                // the top screen
	reqPopWhile           // the top screens match takes, down to the list
	reqRaise              // back to the first screen match takes; none: to the list, then make's
	reqToList             // back to the list, which then gets msg
	reqFlash
	reqQuit
)

type request struct {
	op    requestOp
	s     screen
	match func(screen) bool
	make  func() screen
	msg   tea.Msg
	text  string
	isErr bool
}

// requestsMsg carries requests back from a command.
type requestsMsg []request

func pushReq(s screen) request { return request{op: reqPush, s: s} }
func flashReq(text string, isErr bool) request {
	return request{op: reqFlash, text: text, isErr: isErr}
}

func (h *host) post(r ...request)                { h.reqs = append(h.reqs, r...) }
func (h *host) push(s screen)                    { h.post(pushReq(s)) }
func (h *host) pop()                             { h.post(request{op: reqPop}) }
func (h *host) flash(text string, isErr bool)    { h.post(flashReq(text, isErr)) }
func (h *host) toList(msg tea.Msg)               { h.post(request{op: reqToList, msg: msg}) }
func (h *host) quit()                            { h.post(request{op: reqQuit}) }
func (h *host) popWhile(match func(screen) bool) { h.post(request{op: reqPopWhile, match: match}) }

// raise brings the first screen match takes to the front, or a new one.
func (h *host) raise(match func(screen) bool, make func() screen) {
	h.post(request{op: reqRaise, match: match, make: make})
}

// take hands the requests to the root and forgets them.
func (h *host) take() []request {
	r := h.reqs
	h.reqs = nil
	return r
}
