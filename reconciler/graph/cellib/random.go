package cellib

import (
	"crypto/sha256"
	"encoding/binary"

	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
	"github.com/google/cel-go/common/types/ref"
)

// Random declares random.seededString(length, seed) and
// random.seededInt(min, max, seed): values that look random but depend only
// on the seed, so a generated name or password is stable across reconciles
// and across kro and kroscope.
func Random() cel.EnvOption {
	return library("kroscope.random",
		cel.Function("random.seededString",
			cel.Overload("random_seededString_int_string", []*cel.Type{cel.IntType, cel.StringType}, cel.StringType,
				cel.BinaryBinding(func(l, s ref.Val) ref.Val {
					n, ok1 := l.(types.Int)
					seed, ok2 := s.(types.String)
					if !ok1 || !ok2 {
						return types.MaybeNoSuchOverloadErr(l)
					}
					if n <= 0 {
						return types.NewErr("random.seededString length must be positive")
					}
					if n > maxSeededLength {
						return types.NewErr("random.seededString length %d is above %d", int64(n), maxSeededLength)
					}
					return types.String(SeededString(int(n), string(seed)))
				}))),
		cel.Function("random.seededInt",
			cel.Overload("random_seededInt_int_int_string", []*cel.Type{cel.IntType, cel.IntType, cel.StringType}, cel.IntType,
				cel.FunctionBinding(func(args ...ref.Val) ref.Val {
					lo, ok1 := args[0].(types.Int)
					hi, ok2 := args[1].(types.Int)
					seed, ok3 := args[2].(types.String)
					if !ok1 || !ok2 || !ok3 {
						return types.NoSuchOverloadErr()
					}
					if lo >= hi {
						return types.NewErr("random.seededInt min must be less than max")
					}
					return types.Int(SeededInt(int64(lo), int64(hi), string(seed)))
				}))),
	)
}

// maxSeededLength bounds one string. kro sets no limit; this one is twice
// the API server's largest request, so every string kro could write still
// works and a typo asking for gigabytes is an error, not an out-of-memory.
const maxSeededLength = 3 << 20

const seededAlphabet = "0123456789abcdefghijklmnopqrstuvwxyz"

// SeededString is kro's random.seededString: character i is the big-endian
// uint32 at byte 4*(i mod 8) of SHA-256(seed), modulo 36. The digest holds
// eight such words and kro never rehashes, so the string repeats every 8
// characters ("test-seed", 10 → "5czheg3o5c").
func SeededString(n int, seed string) string {
	sum := sha256.Sum256([]byte(seed))
	out := make([]byte, n)
	for i := range out {
		off := (i * 4) % len(sum)
		out[i] = seededAlphabet[binary.BigEndian.Uint32(sum[off:off+4])%uint32(len(seededAlphabet))]
	}
	return string(out)
}

// SeededInt is kro's random.seededInt: min plus the first 8 bytes of
// SHA-256(seed), big-endian, modulo max-min. lo < hi.
func SeededInt(lo, hi int64, seed string) int64 {
	sum := sha256.Sum256([]byte(seed))
	span := uint64(hi - lo)
	return lo + int64(binary.BigEndian.Uint64(sum[:8])%span)
}
