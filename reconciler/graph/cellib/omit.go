package cellib

import (
	"fmt"
	"reflect"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
)

// OmitFunction is the name of omit().
const OmitFunction = "omit"

// Omit declares omit(): a value that, written into a resource template,
// removes the field (or list element) that holds it. The graph builder
// allows it only in templates and only behind kro's CELOmitFunction gate.
func Omit() cel.EnvOption {
	return library("kroscope.omit",
		cel.Function(OmitFunction,
			cel.Overload("omit_void", []*cel.Type{}, cel.DynType,
				cel.FunctionBinding(func(...ref.Val) ref.Val { return omitVal{} }))))
}

// Omitted is what an omit() result becomes as a Go value: the renderer
// deletes every map entry and list element holding it.
type Omitted struct{}

// IsOmit reports whether v is omit()'s result, as a CEL or Go value.
func IsOmit(v any) bool {
	switch v.(type) {
	case omitVal, Omitted:
		return true
	}
	return false
}

var omitType = types.NewOpaqueType("kro.omit")

// omitVal is omit() as a CEL value. It supports no operation: any use
// other than being the value of a field is an error.
type omitVal struct{}

func (omitVal) ConvertToNative(t reflect.Type) (any, error) {
	if t == reflect.TypeOf(Omitted{}) || t.Kind() == reflect.Interface {
		return Omitted{}, nil
	}
	return nil, fmt.Errorf("omit() cannot be converted to %v", t)
}

func (omitVal) ConvertToType(t ref.Type) ref.Val {
	if t == types.TypeType {
		return omitType
	}
	return types.NewErr("omit() cannot be converted to %s", t.TypeName())
}

func (omitVal) Equal(ref.Val) ref.Val {
	return types.NewErr("omit() is a field-removal sentinel and cannot be compared")
}

func (omitVal) Type() ref.Type { return omitType }
func (omitVal) Value() any     { return Omitted{} }
