package reconciler

// mayWrite is the one decision of whether a reconcile writes (applies,
// deletes, sets finalizers, status or Events): only when the caller did not
// ask to observe (Options.Observe) and the client set's write gate is open
// (client.Set.MayWrite, the engine's readonly.Gate). It is taken once per
// reconcile, so a gate closing midway makes the gate refuse the rest, not
// the steps disagree about the mode.
func mayWrite(observe, gateOpen bool) bool { return !observe && gateOpen }

// runOptions are the controller's options resolved for one reconcile.
type runOptions struct {
	Options
	// observe is mayWrite's answer, negated (zero: writes). The run asks
	// observing and hands the answer to its parts (reach.observe), never
	// the option or the gate.
	observe bool
}

// observing reports whether this reconcile only reads: it computes states
// from what it sees and writes nothing.
func (r *run) observing() bool { return r.opts.observe }
