package simpleschema

import (
	"strings"
	"testing"
)

// FuzzParseField checks that any field definition either fails cleanly or
// parses into markers that survive being written back and parsed again,
// and that converting it never panics. Seeds are in testdata/fuzz.
func FuzzParseField(f *testing.F) {
	for _, s := range []string{
		`string`,
		`string | required=true default="a b" description="say \"hi\""`,
		`[]string | uniqueItems=true minItems=1 maxItems=3 description="1-3 unique tags"`,
		`map[string][]integer | default={"a": [1, 2]}`,
		`integer | enum="1,2,3" default=2 minimum=1 maximum=10`,
		`string | pattern="^[a-z]+\.[a-z]{2,}$"`,
		`object | default={"x": "}"}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		fs, err := ParseField(s)
		if err == nil {
			if fs.Type == "" || fs.Type != strings.TrimSpace(fs.Type) {
				t.Fatalf("ParseField(%q): type %q is empty or untrimmed", s, fs.Type)
			}
			again, err := ParseField(format(fs))
			if err != nil {
				t.Fatalf("ParseField(%q) = %+v, but its formatted form %q fails: %v", s, fs, format(fs), err)
			}
			if !sameField(fs, again) {
				t.Fatalf("round trip of %q: %+v != %+v (via %q)", s, fs, again, format(fs))
			}
		}
		schema, err := ToOpenAPI(map[string]any{"f": s}, nil)
		if (schema == nil) == (err == nil) {
			t.Fatalf("ToOpenAPI(%q) = %v, %v: want exactly one of schema and error", s, schema, err)
		}
	})
}

// format writes a FieldSpec back as a definition, quoting every value.
func format(fs FieldSpec) string {
	if len(fs.Markers) == 0 {
		return fs.Type
	}
	var b strings.Builder
	b.WriteString(fs.Type + " |")
	for _, m := range fs.Markers {
		v := strings.ReplaceAll(m.Value, `\`, `\\`)
		v = strings.ReplaceAll(v, `"`, `\"`)
		b.WriteString(" " + m.Key + `="` + v + `"`)
	}
	return b.String()
}

func sameField(a, b FieldSpec) bool {
	if a.Type != b.Type || len(a.Markers) != len(b.Markers) {
		return false
	}
	for i := range a.Markers {
		if a.Markers[i].Key != b.Markers[i].Key || a.Markers[i].Value != b.Markers[i].Value {
			return false
		}
	}
	return true
}
