package termtext

import (
	"bytes"
	"errors"
	"io/fs"
	"strings"
	"testing"
	"unicode/utf8"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/kroscope/kroscope/termtext/termtexttest"
)

func TestEscape(t *testing.T) {
	cases := map[string]string{
		"plain name":             "plain name",
		"two\nlines\tand tab":    "two\nlines\tand tab",
		"red \x1b[31mX\x1b[0m":   `red \x1b[31mX\x1b[0m`,
		"title \x1b]0;pwned\x07": `title \x1b]0;pwned\x07`,
		"back\rover":             `back\rover`,
		"c1 \u009b2J":            `c1 \u009b2J`,
		"rtl \u202eevil":         `rtl \u202eevil`,
		"del \x7f":               `del \x7f`,
		"ünïcödé ✓ box ─":        "ünïcödé ✓ box ─",
		"lone \x9b byte":         `lone \x9b byte`,
		"cut \xe2\x80 rune":      `cut \xe2\x80 rune`,
	}
	for in, want := range cases {
		if got := Escape(in); got != want {
			t.Errorf("Escape(%q) = %q, want %q", in, got, want)
		}
	}
	if got := EscapeLine("a\nb\tc\x1b"); got != `a\nb\tc\x1b` {
		t.Errorf("EscapeLine = %q", got)
	}
	if got := Inert("a\nb\tc\x1b"); got != "a\nb\\tc\\x1b" {
		t.Errorf("Inert = %q", got)
	}
}

// Each sequence kind the issue names, as a cluster string could carry
// it, with the visible form it must take.
var sequences = map[string]struct{ raw, shown string }{
	"CSI":         {"\x1b[38;5;201mPINK\x1b[0m", `\x1b[38;5;201mPINK\x1b[0m`},
	"OSC 8":       {"\x1b]8;;http://evil.example/\x1b\\click\x1b]8;;\x1b\\", `\x1b]8;;http://evil.example/\x1b\click\x1b]8;;\x1b\`},
	"OSC title":   {"\x1b]0;owned\x07", `\x1b]0;owned\x07`},
	"APC kitty":   {"\x1b_Gf=100,a=T;AAAA\x1b\\", `\x1b_Gf=100,a=T;AAAA\x1b\`},
	"DCS DECRQSS": {"\x1bP$qm\x1b\\", `\x1bP$qm\x1b\`},
	"PM":          {"\x1b^private\x1b\\", `\x1b^private\x1b\`},
	"SOS":         {"\x1bXstart\x1b\\", `\x1bXstart\x1b\`},
	"C1 CSI":      {"\u009b2J", `\u009b2J`},
	"C1 OSC":      {"\u009d0;t\u009c", `\u009d0;t\u009c`},
	"bare CR":     {"ERROR-HIDDEN\rSYNCED-LOOKS-FINE", `ERROR-HIDDEN\rSYNCED-LOOKS-FINE`},
	"BEL BS":      {"ring\x07back\x08", `ring\x07back\x08`},
	"RLO":         {"txt.\u202eexe", `txt.\u202eexe`},
	"LRE PDF":     {"\u202aa\u202c", `\u202aa\u202c`},
	"isolates":    {"\u2066\u2067\u2068x\u2069", `\u2066\u2067\u2068x\u2069`},
	"marks":       {"\u200e\u200f\u061c", `\u200e\u200f\u061c`},
	"separators":  {"a\u2028b\u2029", `a\u2028b\u2029`},
}

func TestEverySequenceShownEscaped(t *testing.T) {
	for name, c := range sequences {
		if got := Inert(c.raw); got != c.shown {
			t.Errorf("%s: Inert(%q) = %q, want %q", name, c.raw, got, c.shown)
		}
	}
}

func TestWriterJoinsSplitRunes(t *testing.T) {
	var buf bytes.Buffer
	w := Writer(&buf)
	if n, err := w.Write([]byte("x\x1b[2Jy\n")); err != nil || n != 7 {
		t.Fatalf("Write = %d, %v", n, err)
	}
	// A C1 CSI (C2 9B) and a plain é cut in two by the writes.
	for _, p := range []string{"a\xc2", "\x9b2J é\xc3", "\xa9\n"} {
		if _, err := w.Write([]byte(p)); err != nil {
			t.Fatal(err)
		}
	}
	if want := "x\\x1b[2Jy\na\\u009b2J é\xc3\xa9\n"; buf.String() != want {
		t.Errorf("written %q, want %q", buf.String(), want)
	}
	if Writer(w) != w {
		t.Error("Writer wraps an escaping writer again")
	}
}

func TestDeep(t *testing.T) {
	type inner struct {
		Msg  string
		List []string
		Any  map[string]any
		Err  error
		n    string // unexported: copied as is
	}
	type outer struct {
		Name  string
		In    *inner
		Ins   []inner
		Plain []int
		Kind  fs.FileMode
	}
	base := fs.ErrNotExist
	v := &outer{Name: "ok", In: &inner{Msg: "a\x1b[2J", List: []string{"fine", "\u202e"},
		Any: map[string]any{"k\r": []any{"\x1b]8;;x\x1b\\"}, "n": 1}, Err: errors.Join(base, errors.New("\x1bP$q")), n: "\x1b"},
		Ins: []inner{{Msg: "clean"}}, Plain: []int{1}}
	got := Deep(v)
	if got == v || got.In == v.In {
		t.Fatal("Deep changed nothing")
	}
	if got.In.Msg != `a\x1b[2J` || got.In.List[1] != `\u202e` || got.In.List[0] != "fine" {
		t.Errorf("strings: %+v", got.In)
	}
	if l := got.In.Any[`k\r`].([]any); l[0] != `\x1b]8;;x\x1b\` {
		t.Errorf("map: %#v", got.In.Any)
	}
	if got.In.Err.Error() != "file does not exist\n\\x1bP$q" || !errors.Is(got.In.Err, base) {
		t.Errorf("error: %q, unwraps to the original: %v", got.In.Err, errors.Is(got.In.Err, base))
	}
	if got.In.n != "\x1b" || got.Name != "ok" || &got.Ins[0] != &v.Ins[0] {
		t.Error("Deep copied or changed what needed no escaping")
	}
	if v.In.Msg != "a\x1b[2J" || v.In.List[1] != "\u202e" || v.In.Any["k\r"] == nil {
		t.Error("Deep changed its argument in place")
	}
	clean := &outer{Name: "x", In: &inner{Msg: "y", Any: map[string]any{"a": "b"}}}
	if Deep(clean) != clean {
		t.Error("Deep copied a clean value")
	}
	type cyc struct {
		Next *cyc
		S    string
	}
	c := &cyc{S: "\x1b"}
	c.Next = c
	if got := Deep(c); got.S != `\x1b` {
		t.Errorf("cycle: %q", got.S)
	}
}

// FuzzEscape: whatever the input, the output holds no escape sequence
// and no rune a terminal acts on, escaping twice changes nothing more,
// text with nothing to escape is left as it is, and the width lipgloss
// counts is the width the text takes.
func FuzzEscape(f *testing.F) {
	for _, c := range sequences {
		f.Add(c.raw)
	}
	for _, s := range []string{"", "plain", "tab\tnew\nline", "ünï ✓ 世界 👩‍💻", "\xff\xfe", "\xe2\x80", "\\x1b literal"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for name, fn := range map[string]func(string) string{"Escape": Escape, "Inert": Inert, "EscapeLine": EscapeLine} {
			out := fn(s)
			checkInert(t, name, s, out)
			if again := fn(out); again != out {
				t.Errorf("%s is not idempotent: %q -> %q -> %q", name, s, out, again)
			}
		}
		if utf8.ValidString(s) && !strings.ContainsFunc(s, Unsafe) && Escape(s) != s {
			t.Errorf("Escape changed clean text %q to %q", s, Escape(s))
		}
		line := EscapeLine(s)
		if strings.ContainsAny(line, "\n\t") {
			t.Errorf("EscapeLine(%q) = %q is not one line", s, line)
		}
		if ascii(s) {
			// Escaped ASCII is printable ASCII, one cell a byte: an escaped
			// control takes the cells of its escape, not the zero lipgloss
			// counts for a raw one.
			if w := lipgloss.Width(line); w != len(line) {
				t.Errorf("lipgloss.Width(%q) = %d, want %d", line, w, len(line))
			}
		}
	})
}

func checkInert(t *testing.T, name, in, out string) {
	t.Helper()
	if !utf8.ValidString(out) {
		t.Errorf("%s(%q) = %q is not valid UTF-8", name, in, out)
	}
	for _, r := range out {
		if Unsafe(r) || (r != '\n' && r != '\t' && r < 0x20) {
			t.Errorf("%s(%q) = %q keeps %U", name, in, out, r)
		}
	}
	// The ANSI parser lipgloss measures with finds no sequence in it: every
	// character is counted, none hidden.
	if stripped := ansi.Strip(out); stripped != out {
		t.Errorf("%s(%q) = %q holds a sequence (stripped: %q)", name, in, out, stripped)
	}
}

func ascii(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// The sequences the boundary's tests plant are shown as they say.
func TestPlantedSequencesShownEscaped(t *testing.T) {
	for _, s := range termtexttest.Sequences {
		got := Inert(s.Raw)
		if !strings.Contains(got, s.Shown) || strings.Contains(got, s.Mark) || !strings.Contains(s.Raw, s.Mark) {
			t.Errorf("%s: Inert(%q) = %q, want it to show %q and not %q", s.Name, s.Raw, got, s.Shown, s.Mark)
		}
	}
}
