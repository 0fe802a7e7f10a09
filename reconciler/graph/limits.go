package graph

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/interpreter"
	"k8s.io/apiserver/pkg/cel/library"
)

// Flag names of the CEL limits, quoted in the errors that hit them.
const (
	CostLimitFlag = "cel-cost-limit"
	TimeoutFlag   = "cel-timeout"
)

// Limits bound one evaluation of one expression. Graphs and instances are
// written by other people than the one running kroscope: without a bound a
// single readyWhen can keep a worker busy forever or exhaust memory (the
// panic guard cannot catch a Go out-of-memory).
type Limits struct {
	// Cost is cel-go's runtime cost limit (roughly: list elements and
	// characters touched) of one evaluation.
	Cost uint64
	// Timeout is the wall-clock deadline of one evaluation.
	Timeout time.Duration
}

// DefaultLimits are kroscope's defaults: far above what any example graph
// needs (the largest uses a few thousand), far below a hang.
var DefaultLimits = Limits{Cost: 1_000_000, Timeout: 100 * time.Millisecond}

// interruptEvery is how many comprehension iterations run between checks of
// the evaluation's deadline.
const interruptEvery = 100

// WithLimits sets the CEL limits of every expression the Builder compiles;
// zero fields keep DefaultLimits.
func WithLimits(l Limits) Option {
	return func(b *Builder) { b.limits = l.orDefault() }
}

func (l Limits) orDefault() Limits {
	if l.Cost == 0 {
		l.Cost = DefaultLimits.Cost
	}
	if l.Timeout <= 0 {
		l.Timeout = DefaultLimits.Timeout
	}
	return l
}

// programOptions are the options every program is planned with: cost
// tracking (with the Kubernetes libraries' costs), the cost limit,
// interruption by the evaluation's context, and the meter of every call
// (guardCalls: the size bound and the deadline between comprehension
// steps too).
func (l Limits) programOptions() []cel.ProgramOption {
	l = l.orDefault()
	return []cel.ProgramOption{
		cel.CostTracking(&library.CostEstimator{}),
		cel.CostLimit(l.Cost),
		cel.InterruptCheckFrequency(interruptEvery),
		cel.CustomDecoratorV2(guardCalls),
	}
}

// run evaluates prg on act within the limits; a limit that stopped it is
// returned as a *LimitError. Every evaluation of a graph's expressions
// goes through here. The time limit is wall-clock: a process starved of
// CPU (a loaded machine) trips it on an expression well within it, which
// showed as a resource in ERROR for a pass (#38, `a == b` stopped at
// 100ms). A second evaluation confirms it: a slow expression trips it
// again.
func (l Limits) run(prg cel.Program, act map[string]any) (ref.Val, *cel.EvalDetails, error) {
	out, det, err := l.runOnce(prg, act)
	var lerr *LimitError
	if errors.As(err, &lerr) && lerr.Limit == "time" {
		out, det, err = l.runOnce(prg, act)
	}
	return out, det, err
}

// runOnce is one evaluation of run's.
func (l Limits) runOnce(prg cel.Program, act map[string]any) (ref.Val, *cel.EvalDetails, error) {
	l = l.orDefault()
	ctx, cancel := context.WithTimeout(context.Background(), l.Timeout)
	defer cancel()
	m := newMeter(l.Timeout)
	act[meterVar] = m
	out, det, err := prg.ContextEval(ctx, act)
	if err == nil {
		return out, det, nil
	}
	if lerr, ok := l.limitError(ctx, m, err); ok {
		return nil, det, lerr
	}
	return nil, det, err
}

// LimitError is an evaluation stopped by a limit. It says which limit, its
// value and the flag that raises it; the expression is named by the
// EvalError that wraps it.
type LimitError struct {
	// Limit is "cost", "time" or "size".
	Limit string
	// Value is the limit's value as the flag takes it.
	Value string
	// Flag raises the limit; "" for the size limit, which no flag raises.
	Flag string
}

func (e *LimitError) Error() string {
	if e.Limit == "size" {
		return fmt.Sprintf("stopped: the expression exceeded the CEL size limit: one evaluation may produce at most %s of strings, bytes, list and map entries (a fixed bound, whatever the other limits)", e.Value)
	}
	what := "the CEL cost limit of " + e.Value
	if e.Limit == "time" {
		what = "the CEL time limit of " + e.Value
	}
	return fmt.Sprintf("stopped: the expression exceeded %s (raise it with --%s)", what, e.Flag)
}

// limitError turns cel-go's cancellation, or the meter's, into a
// LimitError (true); other errors are not the limits' (false).
func (l Limits) limitError(ctx context.Context, m *meter, err error) (error, bool) {
	l = l.orDefault()
	var ce interpreter.EvalCancelledError
	switch {
	case m.tripped == "size":
		return sizeLimitError(), true
	case m.tripped == "time":
		return l.timeLimitError(), true
	case errors.As(err, &ce) && ce.Cause == interpreter.CostLimitExceeded:
		return &LimitError{Limit: "cost", Value: fmt.Sprint(l.Cost), Flag: CostLimitFlag}, true
	}
	if errors.Is(err, interpreter.InterruptError{}) || errors.As(err, &ce) {
		if errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
			return l.timeLimitError(), true
		}
		// The caller's context was cancelled (shutdown): not the graph's fault.
		return fmt.Errorf("evaluation interrupted: %w", context.Cause(ctx)), true
	}
	return nil, false
}

func (l Limits) timeLimitError() *LimitError {
	return &LimitError{Limit: "time", Value: l.Timeout.String(), Flag: TimeoutFlag}
}
