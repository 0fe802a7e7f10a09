package graph

import (
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/cel-go/common/functions"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"github.com/google/cel-go/interpreter"
)

// MaxEvalBytes bounds what one evaluation may produce: the bytes of the
// strings and byte strings its function calls return plus entryBytes per
// list element or map entry. It is fixed, whatever --cel-cost-limit and
// --cel-timeout say: the cost limit can be raised to any number, and a
// string that doubles reaches gigabytes (a Go out-of-memory kills the
// process, no recover catches it) in fewer steps than a deadline check.
// No Kubernetes object is larger than a few MiB, so no useful expression
// comes near it.
const MaxEvalBytes = 32 << 20

// entryBytes is what one list element or map entry counts for: an
// interface value's size.
const entryBytes = 16

// meterVar holds the evaluation's meter in its activation; "#" cannot
// start a CEL identifier, so no expression can read or shadow it.
const meterVar = "#kroscope.meter"

// meter is one evaluation's budget of produced bytes and its deadline.
// cel-go checks its context only between comprehension steps; the meter
// is checked at every function call, so string work is interrupted too.
type meter struct {
	deadline time.Time
	left     int64
	tripped  string // "size" or "time" once a limit stopped the evaluation
}

func newMeter(timeout time.Duration) *meter {
	return &meter{deadline: clock().Add(timeout), left: MaxEvalBytes}
}

// clock is the meter's time (a test's, to starve an evaluation).
var clock = time.Now

// stop aborts the evaluation; cel-go recovers this panic into the error
// Eval returns, and run turns it into a LimitError.
func (m *meter) stop(limit string) {
	m.tripped = limit
	panic(interpreter.EvalCancelledError{Message: "operation cancelled: " + limit + " limit exceeded", Cause: interpreter.ContextCancelled})
}

// beforeCall stops the evaluation past its deadline, or when a call is
// about to produce (predicted, -1 when unknown) more than is left.
func (m *meter) beforeCall(predicted int64) {
	if clock().After(m.deadline) {
		m.stop("time")
	}
	if predicted > m.left {
		m.stop("size")
	}
}

// afterCall charges what a call returned. Appending to a comprehension's
// accumulator charges one entry: the list or map grows in place, and
// charging its whole size each step would count it quadratically. Any
// value larger than the whole budget stops the evaluation all the same.
func (m *meter) afterCall(overload string, v ref.Val) {
	size := valueBytes(v)
	if size > MaxEvalBytes {
		m.stop("size")
	}
	if n, ok := growsInPlace[overload]; ok {
		size = n
	}
	m.left -= size
	if m.left < 0 {
		m.stop("size")
	}
}

// growsInPlace are the accumulator steps of comprehensions, with what
// one step adds.
var growsInPlace = map[string]int64{
	"add_list":                 entryBytes,
	"@mapInsert_map_key_value": 2 * entryBytes,
	"@mapInsert_map_map":       2 * entryBytes,
}

// valueBytes is a value's own size: bytes of text, entries of a
// collection (not what the entries hold: they were charged when made).
func valueBytes(v ref.Val) int64 {
	switch t := v.(type) {
	case types.String:
		return int64(len(t))
	case types.Bytes:
		return int64(len(t))
	case traits.Mapper:
		return 2 * entryBytes * sizeOf(t)
	case traits.Lister:
		return entryBytes * sizeOf(t)
	}
	return 0
}

func sizeOf(s traits.Sizer) int64 {
	n, _ := s.Size().(types.Int)
	return int64(n)
}

// guardCalls is the decorator that meters every function call of a
// program. Calls whose result can be far larger than their arguments
// (replace, join, format, quote, JSON, flatten, deepMerge, split) have
// their result size predicted from the arguments before they run:
// checking afterwards would be too late.
func guardCalls(i interpreter.InterpretableV2) (interpreter.InterpretableV2, error) {
	call, ok := i.(interpreter.InterpretableCall)
	if !ok {
		return i, nil
	}
	g := &guardedCall{InterpretableCall: call}
	if p, ok := predictors[call.OverloadID()]; ok {
		if impl := amplifierImpls()[call.OverloadID()]; impl != nil {
			g.predict, g.impl = p, impl
		}
	}
	return g, nil
}

// guardedCall is a call that checks the meter around its execution. It
// keeps the InterpretableCall methods, which cel-go's cost tracking reads.
type guardedCall struct {
	interpreter.InterpretableCall
	predict func(args []ref.Val) int64
	impl    *functions.Overload
}

func (g *guardedCall) Eval(a interpreter.Activation) ref.Val {
	return g.Exec(interpreter.AsFrame(a))
}

func (g *guardedCall) Exec(f *interpreter.ExecutionFrame) ref.Val {
	m := frameMeter(f)
	if m == nil {
		return g.InterpretableCall.Exec(f)
	}
	var out ref.Val
	if g.predict == nil {
		m.beforeCall(-1)
		out = g.InterpretableCall.Exec(f)
	} else {
		out = g.execPredicted(f, m)
	}
	m.afterCall(g.OverloadID(), out)
	return out
}

// execPredicted evaluates the arguments, checks the predicted result size
// and only then calls the function (strictly: an error or unknown argument
// is the result, as cel-go does for these functions).
func (g *guardedCall) execPredicted(f *interpreter.ExecutionFrame, m *meter) ref.Val {
	args := make([]ref.Val, len(g.Args()))
	for i, a := range g.Args() {
		args[i] = a.Exec(f)
		if types.IsUnknownOrError(args[i]) {
			return args[i]
		}
	}
	m.beforeCall(g.predict(args))
	switch {
	case len(args) == 1 && g.impl.Unary != nil:
		return types.LabelErrNode(g.ID(), g.impl.Unary(args[0]))
	case len(args) == 2 && g.impl.Binary != nil:
		return types.LabelErrNode(g.ID(), g.impl.Binary(args[0], args[1]))
	case g.impl.Function != nil:
		return types.LabelErrNode(g.ID(), g.impl.Function(args...))
	}
	return types.NewErrWithNodeID(g.ID(), "no such overload: %s", g.Function())
}

func frameMeter(f *interpreter.ExecutionFrame) *meter {
	if f == nil {
		return nil
	}
	v, _ := f.ResolveName(meterVar)
	m, _ := v.(*meter)
	return m
}

// amplifierImpls are the implementations of the predicted overloads, from
// the base environment's bindings (type-guarded, as cel-go binds them).
var amplifierImpls = sync.OnceValue(func() map[string]*functions.Overload {
	out := map[string]*functions.Overload{}
	env, err := baseEnv()
	if err != nil {
		return out
	}
	for _, fn := range env.Functions() {
		bindings, err := fn.Bindings()
		if err != nil {
			continue
		}
		for _, b := range bindings {
			if _, ok := predictors[b.Operator]; ok {
				out[b.Operator] = b
			}
		}
	}
	return out
})

// predictors give an upper bound of a call's result size, in the meter's
// bytes, from its arguments; -1 when the arguments are not the expected
// types (the call then fails on its own).
var predictors = map[string]func(args []ref.Val) int64{
	"string_replace_string_string":     predictReplace,
	"string_replace_string_string_int": predictReplace,
	"list_join":                        predictJoin,
	"list_join_string":                 predictJoin,
	"string_format":                    func(a []ref.Val) int64 { return strBytes(a[0]) + deepBytes(a[1], 4) },
	"strings_quote":                    func(a []ref.Val) int64 { return 10 * strBytes(a[0]) },
	"json_marshal_dyn":                 func(a []ref.Val) int64 { return deepBytes(a[0], 6) },
	"json_encode_dyn":                  func(a []ref.Val) int64 { return deepBytes(a[0], 6) },
	"dyn_deepMerge_dyn":                func(a []ref.Val) int64 { return deepBytes(a[0], 1) + deepBytes(a[1], 1) },
	"list_flatten":                     func(a []ref.Val) int64 { return deepBytes(a[0], 1) },
	"list_flatten_int":                 func(a []ref.Val) int64 { return deepBytes(a[0], 1) },
	"string_split_string":              predictSplit,
	"string_split_string_int":          predictSplit,
	// Not here: lists.range (cel-go refuses more than 1,000,000 elements,
	// 16 MB by this count, before it builds the list) and
	// random.seededString (cellib refuses more than 3 MiB).
}

func strBytes(v ref.Val) int64 {
	s, ok := v.(types.String)
	if !ok {
		return -1
	}
	return int64(len(s))
}

// predictReplace: each match of old (every rune boundary when old is
// empty) becomes new.
func predictReplace(a []ref.Val) int64 {
	s, ok1 := a[0].(types.String)
	old, ok2 := a[1].(types.String)
	repl, ok3 := a[2].(types.String)
	if !ok1 || !ok2 || !ok3 {
		return -1
	}
	n := int64(utf8.RuneCountInString(string(s)) + 1)
	if old != "" {
		n = int64(strings.Count(string(s), string(old)))
	}
	if len(a) == 4 {
		if limit, ok := a[3].(types.Int); ok && limit >= 0 && int64(limit) < n {
			n = int64(limit)
		}
	}
	return int64(len(s)) + n*int64(len(repl))
}

// predictJoin: every element plus a separator between them.
func predictJoin(a []ref.Val) int64 {
	sep := int64(0)
	if len(a) == 2 {
		sep = strBytes(a[1])
	}
	l, ok := a[0].(traits.Lister)
	if !ok || sep < 0 {
		return -1
	}
	return deepBytes(l, 1) + sep*sizeOf(l)
}

// predictSplit: one entry per separator found (per rune when it is empty).
func predictSplit(a []ref.Val) int64 {
	s, ok1 := a[0].(types.String)
	sep, ok2 := a[1].(types.String)
	if !ok1 || !ok2 {
		return -1
	}
	n := int64(utf8.RuneCountInString(string(s)))
	if sep != "" {
		n = int64(strings.Count(string(s), string(sep))) + 1
	}
	return entryBytes * n
}

// deepBytes is the size of v with everything it holds, text counted
// factor times (what escaping or formatting can make of one byte); a
// scalar counts for 32 bytes of text. It stops counting past MaxEvalBytes:
// values share parts, so a small value can hold an astronomical tree.
func deepBytes(v ref.Val, factor int64) int64 {
	var total int64
	var walk func(v ref.Val)
	walk = func(v ref.Val) {
		if total > MaxEvalBytes {
			return
		}
		switch t := v.(type) {
		case types.String:
			total += factor * int64(len(t))
		case types.Bytes:
			total += factor * int64(len(t))
		case traits.Mapper:
			for it := t.Iterator(); it.HasNext() == types.True && total <= MaxEvalBytes; {
				k := it.Next()
				total += 2 * entryBytes
				walk(k)
				if val, found := t.Find(k); found {
					walk(val)
				}
			}
		case traits.Lister:
			for it := t.Iterator(); it.HasNext() == types.True && total <= MaxEvalBytes; {
				total += entryBytes
				walk(it.Next())
			}
		default:
			total += 32
		}
	}
	walk(v)
	return total
}

// sizeLimitError is the LimitError of MaxEvalBytes.
func sizeLimitError() *LimitError {
	return &LimitError{Limit: "size", Value: fmt.Sprintf("%d MiB", MaxEvalBytes>>20)}
}
