package reconciler

import (
	"math"
	"math/rand"
	"testing"
)

// randomJSON builds a random JSON value (maps and lists down to depth).
func randomJSON(r *rand.Rand, depth int) any {
	strs := []string{"a", "name", "kro.run/owned", "<", "x&y", "é", "\n", "${schema.spec}", "0"}
	switch k := r.Intn(8); {
	case depth == 0 || k == 0:
		return strs[r.Intn(len(strs))]
	case k == 1:
		return int64(r.Intn(2000) - 1000)
	case k == 2:
		return r.NormFloat64() * math.Pow(10, float64(r.Intn(40)-20))
	case k == 3:
		return r.Intn(2) == 0
	case k == 4:
		return nil
	case k == 5:
		l := make([]any, r.Intn(4))
		for i := range l {
			l[i] = randomJSON(r, depth-1)
		}
		return l
	default:
		m := map[string]any{}
		for range r.Intn(5) {
			m[strs[r.Intn(len(strs))]+strs[r.Intn(len(strs))]] = randomJSON(r, depth-1)
		}
		return m
	}
}

// sameJSON answers as comparing the two encodings would.
func TestSameJSONIsComparingEncodings(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	type pair struct{ a, b any }
	pairs := []pair{
		{int64(1), 1.0}, {int64(1), 1.5}, {map[string]any{"n": int64(2)}, map[string]any{"n": 2.0}},
		{map[string]any(nil), map[string]any{}}, {[]any(nil), []any{}}, {nil, map[string]any(nil)},
		{[]any{"a"}, []any{"a", "b"}}, {map[string]any{"a": nil}, map[string]any{}}, {"x", "x"}, {"\xff", "\xfe"},
		{true, "true"}, {map[string]any{"c": []any{map[string]any{"t": "Ready"}}}, map[string]any{"c": []map[string]any{{"t": "Ready"}}}},
		{map[string]string{"a": "b"}, map[string]any{"a": "b"}},
	}
	for range 300 {
		a := randomJSON(r, 3)
		b := a
		if r.Intn(2) == 0 {
			b = randomJSON(r, 3)
		}
		pairs = append(pairs, pair{a, b})
	}
	for _, p := range pairs {
		if got, want := sameJSON(p.a, p.b), encodedSame(p.a, p.b); got != want {
			t.Errorf("sameJSON(%#v, %#v) = %v, the encodings say %v", p.a, p.b, got, want)
		}
	}
}
