package cellib

import "testing"

// TestHash checks the digests kro returns, printed with base64.encode as
// kro's docs do.
func TestHash(t *testing.T) {
	runCases(t, testEnv(t), []evalCase{
		{expr: `base64.encode(hash.sha256('hello world'))`, want: "uU0nuZNNPgilLlLX2n2r+sSE7+N6U4DukIj3rOLvzek="},
		{expr: `base64.encode(hash.md5('hello world'))`, want: "XrY7u+Ae7tCTyyK7j1rNww=="},
		{expr: `base64.encode(hash.fnv64a('hello world'))`, want: "d5pl5wI80uc="},
		{expr: `base64.encode(hash.fnv64a(''))`, want: "y/Kc5IQiIyU="},
		{expr: `size(hash.sha256(''))`, want: int64(32)},
		{expr: `size(hash.md5(''))`, want: int64(16)},
		{expr: `size(hash.fnv64a(''))`, want: int64(8)},
		{expr: `hash.sha256(123)`, compileErr: true},
		{expr: `hash.md5(b'x')`, compileErr: true},
	})
}
