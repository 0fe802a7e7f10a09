package cellib

import (
	"fmt"
	"reflect"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common"
	"github.com/google/cel-go/common/ast"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
	"github.com/google/cel-go/parser"
)

// RuntimeVariable is the variable status.conditions entries build their
// conditions with: runtime.newCondition({type, status, reason, message})
// and runtime.condition(obj, type).
const RuntimeVariable = "runtime"

// Type names, as kro's, so messages about them read the same.
const (
	ConditionTypeName = "kro.run.Condition"
	runtimeTypeName   = "kro.run.Runtime"
)

var (
	conditionType = cel.ObjectType(ConditionTypeName, traits.IndexerType)
	runtimeType   = cel.ObjectType(runtimeTypeName)
	// conditionKeys are the fields of a condition, in the order written.
	conditionKeys = []string{"type", "status", "reason", "message"}
)

// Runtime declares the runtime variable and its two methods. It is meant
// only for the environment of status.conditions; RuntimeValue is the
// value to bind to it.
//
//	runtime.newCondition({type: "Ready", status: "True", reason: "R", message: "m"})
//	runtime.condition(schema, "Ready")   // a condition of obj.status.conditions, or an empty one
//
// newCondition takes a map literal with bare keys: type and status are
// required, reason and message optional, all string-valued.
func Runtime() cel.EnvOption {
	return library("kroscope.runtime",
		cel.Variable(RuntimeVariable, runtimeType),
		cel.Function("newCondition",
			cel.MemberOverload("runtime_newCondition_map", []*cel.Type{runtimeType, cel.MapType(cel.StringType, cel.StringType)}, conditionType,
				cel.BinaryBinding(func(_, m ref.Val) ref.Val { return newCondition(m) }))),
		cel.Function("condition",
			cel.MemberOverload("runtime_condition_dyn_string", []*cel.Type{runtimeType, cel.DynType, cel.StringType}, conditionType,
				cel.FunctionBinding(func(args ...ref.Val) ref.Val { return findCondition(args[1], args[2]) }))),
		cel.Macros(parser.NewReceiverMacro("newCondition", 1, newConditionMacro)),
	)
}

// ConditionTypes lets the checker select fields of a Condition
// (runtime.condition(schema, "Ready").status). Install it last: a custom
// type provider replaces the previous one, which this one wraps.
func ConditionTypes(env *cel.Env) cel.EnvOption {
	return cel.CustomTypeProvider(conditionProvider{env.CELTypeProvider()})
}

type conditionProvider struct{ types.Provider }

func (p conditionProvider) FindStructType(name string) (*types.Type, bool) {
	if name == ConditionTypeName {
		return types.NewTypeTypeWithParam(conditionType), true
	}
	return p.Provider.FindStructType(name)
}

func (p conditionProvider) FindStructFieldNames(name string) ([]string, bool) {
	if name == ConditionTypeName {
		return conditionKeys, true
	}
	return p.Provider.FindStructFieldNames(name)
}

func (p conditionProvider) FindStructFieldType(name, field string) (*types.FieldType, bool) {
	if name == ConditionTypeName {
		for _, k := range conditionKeys {
			if k == field {
				return &types.FieldType{Type: types.StringType}, true
			}
		}
		return nil, false
	}
	return p.Provider.FindStructFieldType(name, field)
}

// newConditionMacro checks the literal at parse time (bare, known, unique
// keys; type and status present) and turns its keys into strings, so
// {type: ...} does not read a variable named type.
func newConditionMacro(eh parser.ExprHelper, target ast.Expr, args []ast.Expr) (ast.Expr, *common.Error) {
	if target == nil || target.Kind() != ast.IdentKind || target.AsIdent() != RuntimeVariable {
		return nil, nil
	}
	m := args[0]
	if m.Kind() != ast.MapKind {
		return nil, eh.NewError(m.ID(), "runtime.newCondition: argument must be a map literal")
	}
	seen := map[string]bool{}
	var entries []ast.EntryExpr
	for _, en := range m.AsMap().Entries() {
		me := en.AsMapEntry()
		if me.Key().Kind() != ast.IdentKind {
			return nil, eh.NewError(me.Key().ID(), "runtime.newCondition: keys must be bare identifiers (type, status, reason, message)")
		}
		k := me.Key().AsIdent()
		if !isConditionKey(k) {
			return nil, eh.NewError(me.Key().ID(), fmt.Sprintf("runtime.newCondition: unknown key %q (allowed: type, status, reason, message)", k))
		}
		if seen[k] {
			return nil, eh.NewError(me.Key().ID(), fmt.Sprintf("runtime.newCondition: duplicate key %q", k))
		}
		seen[k] = true
		entries = append(entries, eh.NewMapEntry(eh.NewLiteral(types.String(k)), me.Value(), false))
	}
	for _, k := range []string{"type", "status"} {
		if !seen[k] {
			return nil, eh.NewError(m.ID(), fmt.Sprintf("runtime.newCondition: '%s' is required", k))
		}
	}
	return eh.NewMemberCall("newCondition", target, eh.NewMap(entries...)), nil
}

func isConditionKey(k string) bool {
	for _, c := range conditionKeys {
		if c == k {
			return true
		}
	}
	return false
}

// IsConditionStatus reports whether s is a condition status.
func IsConditionStatus(s string) bool { return s == "True" || s == "False" || s == "Unknown" }

func newCondition(arg ref.Val) ref.Val {
	m, ok := arg.(traits.Mapper)
	if !ok {
		return types.NewErr("runtime.newCondition: argument must be a map, got %s", arg.Type().TypeName())
	}
	c := &Condition{}
	for it := m.Iterator(); it.HasNext() == types.True; {
		k := it.Next()
		v := m.Get(k)
		if types.IsError(v) {
			return v
		}
		s, ok := v.(types.String)
		if !ok {
			return types.NewErr("runtime.newCondition: %v must be a string, got %s", k, v.Type().TypeName())
		}
		switch k {
		case types.String("type"):
			if s == "" {
				return types.NewErr("runtime.newCondition: type must not be empty")
			}
			c.ConditionType = string(s)
		case types.String("status"):
			if !IsConditionStatus(string(s)) {
				return types.NewErr("runtime.newCondition: status must be one of True, False, Unknown (got %q)", string(s))
			}
			c.Status = string(s)
		case types.String("reason"):
			c.Reason = string(s)
		case types.String("message"):
			c.Message = string(s)
		}
	}
	return c
}

// findCondition returns obj.status.conditions' entry of the given type, or
// an empty condition when there is none.
func findCondition(obj, typ ref.Val) ref.Val {
	want, ok := typ.(types.String)
	if !ok {
		return types.NewErr("runtime.condition: type must be a string, got %s", typ.Type().TypeName())
	}
	m, ok := obj.(traits.Mapper)
	if !ok {
		return types.NewErr("runtime.condition: obj must be an object, got %s", obj.Type().TypeName())
	}
	sm, res := conditionsStep[traits.Mapper](m, "status", "obj.status", "an object")
	if res != nil {
		return res
	}
	list, res := conditionsStep[traits.Lister](sm, "conditions", "obj.status.conditions", "a list")
	if res != nil {
		return res
	}
	for it := list.Iterator(); it.HasNext() == types.True; {
		var c *Condition
		switch el := it.Next().(type) {
		case *Condition:
			c = el
		case traits.Mapper:
			c = conditionFromMap(el)
		default:
			return types.NewErr("runtime.condition: a condition is %s, not an object", el.Type().TypeName())
		}
		if c.ConditionType == string(want) {
			return c
		}
	}
	return &Condition{}
}

// conditionsStep returns m[key] as a T on the way to obj.status.conditions;
// when key is absent or holds something else it returns instead what
// runtime.condition answers: an empty condition, or an error.
func conditionsStep[T any](m traits.Mapper, key, path, want string) (T, ref.Val) {
	var zero T
	v, found := m.Find(types.String(key))
	if !found {
		return zero, &Condition{}
	}
	t, ok := v.(T)
	if !ok {
		return zero, types.NewErr("runtime.condition: %s must be %s", path, want)
	}
	return t, nil
}

func conditionFromMap(m traits.Mapper) *Condition {
	get := func(k string) string {
		v, _ := m.Find(types.String(k))
		s, _ := v.(types.String)
		return string(s)
	}
	return &Condition{ConditionType: get("type"), Status: get("status"), Reason: get("reason"), Message: get("message")}
}

// RuntimeValue is the value of the runtime variable.
var RuntimeValue ref.Val = runtimeVal{}

type runtimeVal struct{}

func (runtimeVal) ConvertToNative(t reflect.Type) (any, error) {
	return nil, fmt.Errorf("runtime cannot be converted to %v", t)
}
func (v runtimeVal) ConvertToType(t ref.Type) ref.Val {
	return convertToType(v, runtimeType, t, "runtime")
}
func (runtimeVal) Equal(o ref.Val) ref.Val { _, ok := o.(runtimeVal); return types.Bool(ok) }
func (runtimeVal) Type() ref.Type          { return runtimeType }
func (v runtimeVal) Value() any            { return v }

// Condition is what runtime.newCondition and runtime.condition return: an
// instance condition as the author wrote it (the controller adds the
// times and generation).
type Condition struct {
	// ConditionType is the condition's type ("Type" is ref.Val's method).
	ConditionType, Status, Reason, Message string
}

func (c *Condition) ConvertToNative(t reflect.Type) (any, error) {
	switch {
	case t == reflect.TypeOf(c):
		return c, nil
	case t.Kind() == reflect.Map || t.Kind() == reflect.Interface:
		return map[string]any{"type": c.ConditionType, "status": c.Status, "reason": c.Reason, "message": c.Message}, nil
	}
	return nil, fmt.Errorf("a condition cannot be converted to %v", t)
}

func (c *Condition) ConvertToType(t ref.Type) ref.Val {
	return convertToType(c, conditionType, t, "a condition")
}

// convertToType is ConvertToType for v, whose type is own: v itself, or
// own as a type value.
func convertToType(v ref.Val, own *types.Type, t ref.Type, what string) ref.Val {
	switch t {
	case own:
		return v
	case types.TypeType:
		return own
	}
	return types.NewErr("%s cannot be converted to %s", what, t.TypeName())
}

func (c *Condition) Equal(o ref.Val) ref.Val {
	oc, ok := o.(*Condition)
	if !ok {
		return types.MaybeNoSuchOverloadErr(o)
	}
	return types.Bool(*c == *oc)
}

func (c *Condition) Type() ref.Type { return conditionType }
func (c *Condition) Value() any     { return c }

// Get reads a field: cond.status, cond["reason"].
func (c *Condition) Get(key ref.Val) ref.Val {
	switch key {
	case types.String("type"):
		return types.String(c.ConditionType)
	case types.String("status"):
		return types.String(c.Status)
	case types.String("reason"):
		return types.String(c.Reason)
	case types.String("message"):
		return types.String(c.Message)
	}
	return types.NewErr("no such field %v in a condition", key)
}

// Conditions flattens what a status.conditions entry returned: one
// Condition or a list of them.
func Conditions(v ref.Val) ([]Condition, error) {
	if c, ok := v.(*Condition); ok {
		return []Condition{*c}, nil
	}
	l, ok := v.(traits.Lister)
	if !ok {
		return nil, fmt.Errorf("returned %s, not runtime.newCondition(...) or a list of them", v.Type().TypeName())
	}
	var out []Condition
	for it := l.Iterator(); it.HasNext() == types.True; {
		el := it.Next()
		c, ok := el.(*Condition)
		if !ok {
			return nil, fmt.Errorf("a list element is %s, not a condition", el.Type().TypeName())
		}
		out = append(out, *c)
	}
	return out, nil
}
