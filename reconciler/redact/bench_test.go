package redact

import (
	"fmt"
	"strings"
	"testing"
)

// benchMessage is a 1 KB message, about as long as an Event may be.
var benchMessage = strings.Repeat("resource cm: the API server rejected ConfigMap ns/x: metadata.labels: ", 15)[:1000]

func benchSet(n int) *Set {
	s := &Set{}
	data := map[string]string{}
	for i := range n {
		data[fmt.Sprintf("k%d", i)] = fmt.Sprintf("value-%d-%s", i, strings.Repeat("x", 24))
	}
	s.AddSecret(secret(data, nil))
	return s
}

// BenchmarkString is the cost per message: with no Secret read (most
// reconciles), with 10 Secret values (30 forms) and none in the message,
// and with one of them in it.
func BenchmarkString(b *testing.B) {
	for _, c := range []struct {
		name string
		set  *Set
		msg  string
	}{
		{"no-values", &Set{}, benchMessage},
		{"10-values-no-match", benchSet(10), benchMessage},
		{"10-values-one-match", benchSet(10), benchMessage[:500] + "value-3-" + strings.Repeat("x", 24) + benchMessage[500:]},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				_ = c.set.String(c.msg)
			}
		})
	}
}
