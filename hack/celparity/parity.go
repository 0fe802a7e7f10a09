// Package celparity compares kro's CEL library with kroscope's by
// behaviour: the same expression, evaluated by each on the same inputs,
// must give the same value or the same error. It is its own module so kro
// never becomes a dependency of kroscope's.
package celparity

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/reconciler/graph/cellib"
	krocel "github.com/kubernetes-sigs/kro/pkg/cel"
	"github.com/kubernetes-sigs/kro/pkg/cel/library"
	"github.com/kubernetes-sigs/kro/pkg/cel/sentinels"
)

// omitted stands for omit()'s result, which each side writes as its own
// Go type.
const omitted = "<omit>"

// KroEnv is the environment kro evaluates a template field in: its base
// declarations (every library, the runtime variable included) with each
// name in vars declared as a resource id.
func KroEnv(vars map[string]any) (*cel.Env, error) {
	names := make([]string, 0, len(vars))
	for name := range vars {
		names = append(names, name)
	}
	sort.Strings(names)
	return krocel.DefaultEnvironment(krocel.WithResourceIDs(names))
}

// Kro evaluates src as kro does: compile, plan without options, then
// krocel.Expression.Eval (GoNativeType and EnsureJSONSafe). Errors are
// written in kroscope's form: "compile: column N: msg; ..." or the bare
// CEL or conversion message.
func Kro(src string, vars map[string]any) (any, error) {
	env, err := KroEnv(vars)
	if err != nil {
		return nil, err
	}
	a, iss := env.Compile(src)
	if iss != nil && iss.Err() != nil {
		var msgs []string
		for _, e := range iss.Errors() {
			msgs = append(msgs, fmt.Sprintf("column %d: %s", e.Location.Column()+1, e.Message))
		}
		return nil, fmt.Errorf("compile: %s", strings.Join(msgs, "; "))
	}
	// kro plans when it builds the graph: a planning error is a build error.
	prg, err := env.Program(a)
	if err != nil {
		return nil, fmt.Errorf("compile: %w", err)
	}
	act := map[string]any{library.RuntimeVarName: library.RuntimeSingleton}
	for k, v := range vars {
		act[k] = v
	}
	out, err := (&krocel.Expression{Original: src, Program: prg}).Eval(act)
	if err != nil {
		msg := err.Error()
		for _, prefix := range []string{fmt.Sprintf("eval %q: ", src), fmt.Sprintf("convert %q: ", src)} {
			msg = strings.TrimPrefix(msg, prefix)
		}
		return nil, fmt.Errorf("%s", msg)
	}
	return normalize(out), nil
}

// Kroscope evaluates src with graph.EvalCEL, kroscope's path for a
// template field. A pending error ("no such key") loses its prefix: kro
// sees the same CEL error and decides the same way later.
func Kroscope(src string, vars map[string]any) (any, error) {
	out, err := graph.EvalCEL(src, vars)
	if err != nil {
		return nil, fmt.Errorf("%s", strings.TrimPrefix(err.Error(), "data pending: "))
	}
	return normalize(out), nil
}

// normalize replaces each side's omit marker with one value.
func normalize(v any) any {
	switch val := v.(type) {
	case sentinels.Omit, cellib.Omitted:
		return omitted
	case map[string]any:
		out := make(map[string]any, len(val))
		for k, e := range val {
			out[k] = normalize(e)
		}
		return out
	case []any:
		out := make([]any, len(val))
		for i, e := range val {
			out[i] = normalize(e)
		}
		return out
	}
	return v
}

// Overload is one overload kro declares.
type Overload struct {
	ID string
	// Signature is name<TAB>member<TAB>args<TAB>result, the format of
	// reconciler/graph/testdata/kro-cel-functions.txt.
	Signature string
}

// KroOverloads lists every overload of kro's base environment
// (krocel.BaseDeclarations), sorted by signature.
func KroOverloads() ([]Overload, error) {
	env, err := cel.NewEnv(krocel.BaseDeclarations()...)
	if err != nil {
		return nil, err
	}
	var out []Overload
	for name, fn := range env.Functions() {
		for _, o := range fn.OverloadDecls() {
			var args []string
			for _, a := range o.ArgTypes() {
				args = append(args, a.String())
			}
			member := fmt.Sprint(o.IsMemberFunction())
			sig := strings.Join([]string{name, member, strings.Join(args, ","), o.ResultType().String()}, "\t")
			out = append(out, Overload{ID: o.ID(), Signature: sig})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Signature < out[j].Signature })
	return out, nil
}

// Covered returns the overload ids the checker chose in src, in kro's
// environment: a call counts only when exactly one overload matched, so
// a dyn argument does not claim every candidate.
func Covered(src string, vars map[string]any) ([]string, error) {
	env, err := KroEnv(vars)
	if err != nil {
		return nil, err
	}
	a, iss := env.Compile(src)
	if iss != nil && iss.Err() != nil {
		return nil, iss.Err()
	}
	var ids []string
	for _, ref := range a.NativeRep().ReferenceMap() {
		if len(ref.OverloadIDs) == 1 {
			ids = append(ids, ref.OverloadIDs[0])
		}
	}
	return ids, nil
}

// WriteOverloads writes KroOverloads in the format of
// reconciler/graph/testdata/kro-cel-functions.txt, header included.
func WriteOverloads(w io.Writer) error {
	list, err := KroOverloads()
	if err != nil {
		return fmt.Errorf("kro's CEL environment: %w", err)
	}
	var b strings.Builder
	b.WriteString("# kro pkg/cel.BaseDeclarations(): every function overload as name<TAB>member<TAB>args<TAB>result.\n")
	b.WriteString("# Generated by `make kro-overloads` (hack/celparity/cmd/overloads) from the kro version in\n")
	b.WriteString("# hack/celparity/go.mod; kroscope's env must declare each one (TestKroFunctionsDeclared).\n")
	for _, o := range list {
		b.WriteString(o.Signature + "\n")
	}
	_, err = io.WriteString(w, b.String())
	return err
}
