package cellib

import (
	"crypto/md5"
	"crypto/sha256"
	"hash/fnv"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
)

// Hash declares hash.fnv64a, hash.sha256 and hash.md5: each takes a string
// and returns the raw digest as bytes (encode it, e.g. with base64.encode,
// to write it into an object).
func Hash() cel.EnvOption {
	return library("kroscope.hash",
		digest("hash.fnv64a", func(b []byte) []byte { h := fnv.New64a(); h.Write(b); return h.Sum(nil) }),
		digest("hash.sha256", func(b []byte) []byte { s := sha256.Sum256(b); return s[:] }),
		digest("hash.md5", func(b []byte) []byte { s := md5.Sum(b); return s[:] }),
	)
}

func digest(name string, sum func([]byte) []byte) cel.EnvOption {
	return cel.Function(name,
		cel.Overload(name+"_string", []*cel.Type{cel.StringType}, cel.BytesType,
			cel.UnaryBinding(func(v ref.Val) ref.Val {
				s, ok := v.(types.String)
				if !ok {
					return types.MaybeNoSuchOverloadErr(v)
				}
				return types.Bytes(sum([]byte(s)))
			})))
}
