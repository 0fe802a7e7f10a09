package graph

import (
	"fmt"
	"maps"
	"sort"

	"github.com/google/cel-go/cel"
	"github.com/kroscope/kroscope/reconciler/graph/cellib"
)

// EvalCEL compiles src as one standalone expression, with every name in
// vars declared dyn and the runtime variable of status.conditions, and
// evaluates it as a template field is evaluated: kroscope's functions,
// DefaultLimits, and the same conversion into Go values. A compile error
// starts with "compile: ". hack/celparity compares it with kro's CEL.
func EvalCEL(src string, vars Vars) (any, error) {
	base, err := baseEnv()
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(vars))
	for name := range vars {
		names = append(names, name)
	}
	sort.Strings(names)
	decls := make([]cel.EnvOption, 0, len(names))
	for _, name := range names {
		decls = append(decls, cel.Variable(name, cel.DynType))
	}
	env, err := base.Extend(decls...)
	if err == nil {
		env, err = conditionEnv(env)
	}
	if err != nil {
		return nil, fmt.Errorf("CEL environment: %w", err)
	}
	c, err := compile(env, src)
	if err != nil {
		return nil, fmt.Errorf("compile: %w", err)
	}
	act := maps.Clone(vars)
	if act == nil {
		act = Vars{}
	}
	act[cellib.RuntimeVariable] = cellib.RuntimeValue
	return c.expr.Eval(act)
}
