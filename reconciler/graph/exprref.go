package graph

import (
	"crypto/sha256"
	"encoding/hex"
	"unicode/utf8"
)

// exprRefMax is how much of an expression's source a run-time message
// quotes. Events are cut at about 1 KB, and a message that repeats a long
// expression before its cause loses the cause.
const exprRefMax = 80

// ExpressionRef is how run-time messages name an expression: ${source}
// when it is short; otherwise its start and a short hash of the whole
// source, which tells two expressions with the same start apart:
// "${cel.bind(s0, 'x', cel.bind(s1, s0 + s0, …} (sha256 1a2b3c4d)".
// Messages put it after their cause.
func ExpressionRef(src string) string {
	if len(src) <= exprRefMax {
		return "${" + src + "}"
	}
	cut := exprRefMax
	for cut > 0 && !utf8.RuneStart(src[cut]) {
		cut--
	}
	sum := sha256.Sum256([]byte(src))
	return "${" + src[:cut] + "…} (sha256 " + hex.EncodeToString(sum[:4]) + ")"
}
