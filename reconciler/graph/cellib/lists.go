package cellib

import (
	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
)

// Lists declares lists.setAtIndex(l, i, v), lists.insertAtIndex(l, i, v)
// and lists.removeAtIndex(l, i): each returns a new list; an index outside
// the list ([0, size) to set or remove, [0, size] to insert) is an error.
func Lists() cel.EnvOption {
	t := cel.TypeParamType("T")
	l := cel.ListType(t)
	return library("kroscope.lists",
		cel.Function("lists.setAtIndex",
			cel.Overload("lists_setAtIndex_list_int_T", []*cel.Type{l, cel.IntType, t}, l,
				cel.FunctionBinding(func(args ...ref.Val) ref.Val {
					return editList("lists.setAtIndex", args[0], args[1], 0, func(elems []ref.Val, i int) []ref.Val {
						elems[i] = args[2]
						return elems
					})
				}))),
		cel.Function("lists.insertAtIndex",
			cel.Overload("lists_insertAtIndex_list_int_T", []*cel.Type{l, cel.IntType, t}, l,
				cel.FunctionBinding(func(args ...ref.Val) ref.Val {
					return editList("lists.insertAtIndex", args[0], args[1], 1, func(elems []ref.Val, i int) []ref.Val {
						out := append(append(append([]ref.Val{}, elems[:i]...), args[2]), elems[i:]...)
						return out
					})
				}))),
		cel.Function("lists.removeAtIndex",
			cel.Overload("lists_removeAtIndex_list_int", []*cel.Type{l, cel.IntType}, l,
				cel.BinaryBinding(func(list, idx ref.Val) ref.Val {
					return editList("lists.removeAtIndex", list, idx, 0, func(elems []ref.Val, i int) []ref.Val {
						return append(elems[:i:i], elems[i+1:]...)
					})
				}))),
	)
}

// editList copies list and applies edit at index, which must lie in
// [0, size+slack).
func editList(fn string, list, index ref.Val, slack int64, edit func([]ref.Val, int) []ref.Val) ref.Val {
	l, ok := list.(traits.Lister)
	if !ok {
		return types.NewErr("%s: first argument must be a list", fn)
	}
	i, ok := index.(types.Int)
	if !ok {
		return types.NewErr("%s: index must be an integer", fn)
	}
	size := int64(l.Size().(types.Int))
	if int64(i) < 0 || int64(i) >= size+slack {
		closing := ")"
		if slack > 0 {
			closing = "]"
		}
		return types.NewErr("%s: index %d out of bounds [0, %d%s", fn, int64(i), size, closing)
	}
	elems := make([]ref.Val, 0, size+1)
	for it := l.Iterator(); it.HasNext() == types.True; {
		elems = append(elems, it.Next())
	}
	return types.NewRefValList(types.DefaultTypeAdapter, edit(elems, int(i)))
}
