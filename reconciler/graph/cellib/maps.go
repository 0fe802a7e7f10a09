package cellib

import (
	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
	"github.com/google/cel-go/common/types/traits"
)

// Maps declares a.merge(b) (the keys of both maps, b's value winning; one
// level only) and a.deepMerge(b) (the same, but where both values are maps
// they are merged in turn; lists and scalars are replaced, never joined).
func Maps() cel.EnvOption {
	m := cel.MapType(cel.TypeParamType("K"), cel.TypeParamType("V"))
	return library("kroscope.maps",
		cel.Function("merge",
			cel.MemberOverload("map_merge_map", []*cel.Type{m, m}, m,
				cel.BinaryBinding(func(a, b ref.Val) ref.Val {
					am, ok1 := a.(traits.Mapper)
					bm, ok2 := b.(traits.Mapper)
					if !ok1 || !ok2 {
						return types.ValOrErr(a, "no such overload: %v.merge(%v)", a.Type(), b.Type())
					}
					return mergeMaps(am, bm, false)
				}))),
		cel.Function("deepMerge",
			cel.MemberOverload("dyn_deepMerge_dyn", []*cel.Type{cel.DynType, cel.DynType}, cel.DynType,
				cel.BinaryBinding(func(a, b ref.Val) ref.Val {
					am, ok := a.(traits.Mapper)
					if !ok {
						return types.MaybeNoSuchOverloadErr(a)
					}
					bm, ok := b.(traits.Mapper)
					if !ok {
						return types.MaybeNoSuchOverloadErr(b)
					}
					return mergeMaps(am, bm, true)
				}))),
	)
}

func mergeMaps(a, b traits.Mapper, deep bool) ref.Val {
	if b.Size() == types.IntZero {
		return a
	}
	if a.Size() == types.IntZero {
		return b
	}
	out := map[ref.Val]ref.Val{}
	for it := a.Iterator(); it.HasNext() == types.True; {
		k := it.Next()
		out[k] = a.Get(k)
	}
	for it := b.Iterator(); it.HasNext() == types.True; {
		k := it.Next()
		bv := b.Get(k)
		if deep {
			if av, ok := a.Find(k); ok {
				am, ok1 := av.(traits.Mapper)
				bm, ok2 := bv.(traits.Mapper)
				if ok1 && ok2 {
					out[k] = mergeMaps(am, bm, true)
					continue
				}
			}
		}
		out[k] = bv
	}
	return types.NewRefValMap(types.DefaultTypeAdapter, out)
}
