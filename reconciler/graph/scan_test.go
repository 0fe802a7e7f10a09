package graph

import (
	"reflect"
	"strings"
	"testing"
)

func TestScan(t *testing.T) {
	tests := []struct {
		in      string
		want    []Segment
		wantErr string
	}{
		{in: "plain", want: []Segment{{Text: "plain"}}},
		{in: "${a.b}", want: []Segment{{Text: "a.b", Expr: true}}},
		{in: "x-${a}-y", want: []Segment{{Text: "x-"}, {Text: "a", Expr: true, Offset: 2}, {Text: "-y", Offset: 6}}},
		{in: "${a}${b}", want: []Segment{{Text: "a", Expr: true}, {Text: "b", Expr: true, Offset: 4}}},
		{in: `${{"k": "v"}}`, want: []Segment{{Text: `{"k": "v"}`, Expr: true}}},
		{in: `${"}"}`, want: []Segment{{Text: `"}"`, Expr: true}}},
		{in: `${'}' + "\"}"}`, want: []Segment{{Text: `'}' + "\"}"`, Expr: true}}},
		{in: `${"${VAR}"}`, want: []Segment{{Text: `"${VAR}"`, Expr: true}}},
		{in: `${r"\"}`, want: []Segment{{Text: `r"\"`, Expr: true}}},
		{in: `${'''a}'b'''}`, want: []Segment{{Text: `'''a}'b'''`, Expr: true}}},
		{in: "$ {a} and } and $", want: []Segment{{Text: "$ {a} and } and $"}}},
		{in: "${a", wantErr: "at position 0: unterminated expression"},
		{in: "x ${}", wantErr: "at position 2: empty expression"},
		{in: "${a.${b}}", wantErr: "at position 4: nested expressions"},
		{in: `${"abc}`, wantErr: "at position 2: unterminated string literal"},
	}
	for _, tt := range tests {
		got, err := Scan(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Scan(%q) error = %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("Scan(%q): %v", tt.in, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Scan(%q) = %+v, want %+v", tt.in, got, tt.want)
		}
	}
}

// FuzzScan checks that Scan never panics, and that what it accepts splits
// the input exactly: the segments put back together give the input.
func FuzzScan(f *testing.F) {
	for _, s := range []string{"", "plain", "${a}", "x${a}y${b}z", `${{"a": {"b": 1}}}`, `${"${x}"}`, `${'}'}`,
		`${r'\'}`, `${"""}"""}`, "${a", "${}", "${${a}}", `${"\`, "${a}}}", "$${a}"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		segs, err := Scan(s)
		if err != nil {
			var se *ScanError
			if !asScanError(err, &se) || se.Offset < 0 || se.Offset > len(s) {
				t.Fatalf("Scan(%q) error %v has no valid position", s, err)
			}
			return
		}
		var b strings.Builder
		for i, seg := range segs {
			if seg.Offset != b.Len() {
				t.Fatalf("Scan(%q): segment %d at offset %d, want %d", s, i, seg.Offset, b.Len())
			}
			if seg.Expr {
				if strings.TrimSpace(seg.Text) == "" {
					t.Fatalf("Scan(%q): empty expression accepted", s)
				}
				b.WriteString("${" + seg.Text + "}")
			} else {
				if seg.Text == "" || (i > 0 && !segs[i-1].Expr) {
					t.Fatalf("Scan(%q): empty or split text segment %d", s, i)
				}
				b.WriteString(seg.Text)
			}
		}
		if b.String() != s {
			t.Fatalf("Scan(%q) segments rebuild %q", s, b.String())
		}
	})
}

func asScanError(err error, target **ScanError) bool {
	se, ok := err.(*ScanError)
	if ok {
		*target = se
	}
	return ok
}
