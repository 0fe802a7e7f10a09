// Package termtexttest plants terminal sequences in test data and finds
// them in what a program shows or writes: the tests of the text boundary
// (docs/text-boundary.md) share one list of what a cluster string may
// carry.
package termtexttest

import (
	"reflect"
	"sort"
	"strings"
)

// Sequence is one kind of text a terminal acts on, as a cluster string
// would carry it: Raw is planted; Shown is what a view shows of it once
// escaped; Mark is a fragment of Raw no program writes of its own (so
// finding it in the bytes written means Raw got through).
type Sequence struct {
	Name, Raw, Shown, Mark string
}

// Sequences are the kinds the issue names: escape sequences (CSI, OSC 8
// hyperlinks, OSC titles, APC kitty graphics, DCS requests, PM, SOS),
// C1 controls, a bare CR, other C0 controls, the bidirectional
// overrides, isolates and marks.
var Sequences = []Sequence{
	{"CSI", "\x1b[38;5;201mPINK", `\x1b[38;5;201mPINK`, "\x1b[38;5;201m"},
	{"OSC 8", "\x1b]8;;http://evil.example/\x1b\\LINK\x1b]8;;\x1b\\", `\x1b]8;;http://evil.example/\x1b\LINK`, "\x1b]8;;http://evil"},
	{"OSC title", "\x1b]0;OWNED\x07", `\x1b]0;OWNED\x07`, "\x1b]0;OWNED"},
	{"APC", "\x1b_Gf=100;QUJD\x1b\\", `\x1b_Gf=100;QUJD\x1b\`, "\x1b_Gf=100"},
	{"DCS", "\x1bP$qm\x1b\\", `\x1bP$qm\x1b\`, "\x1bP$q"},
	{"PM", "\x1b^PRIV\x1b\\", `\x1b^PRIV\x1b\`, "\x1b^PRIV"},
	{"SOS", "\x1bXSTR\x1b\\", `\x1bXSTR\x1b\`, "\x1bXSTR"},
	{"C1 CSI", "\u009b2J", `\u009b2J`, "\u009b"},
	{"C1 OSC", "\u009d0;T\u009c", `\u009d0;T\u009c`, "\u009d"},
	{"bare CR", "ERROR-HIDDEN\rSYNCED-LOOKS-FINE", `ERROR-HIDDEN\rSYNCED-LOOKS-FINE`, "HIDDEN\rSYNCED"},
	{"BEL", "RING\x07", `RING\x07`, "RING\x07"},
	{"BS", "BACK\x08", `BACK\x08`, "BACK\x08"},
	{"RLO", "TXT\u202eEXE", `TXT\u202eEXE`, "\u202e"},
	{"LRE", "\u202aL\u202c", `\u202aL\u202c`, "\u202a"},
	{"RLE", "\u202bR", `\u202bR`, "\u202b"},
	{"LRO", "\u202dO", `\u202dO`, "\u202d"},
	{"isolates", "\u2066I\u2067J\u2068K\u2069", `\u2066I\u2067J\u2068K\u2069`, "\u2066"},
	{"marks", "M\u200eN\u200fA\u061c", `M\u200eN\u200fA\u061c`, "\u200f"},
}

// Payload is every sequence in one string, each after a space.
func Payload() string {
	var b strings.Builder
	for _, s := range Sequences {
		b.WriteString(" " + s.Raw)
	}
	return b.String()
}

// Unsafe lists the sequences whose mark is in text (sorted names).
func Unsafe(text string) []string {
	var out []string
	for _, s := range Sequences {
		if strings.Contains(text, s.Mark) {
			out = append(out, s.Name)
		}
	}
	sort.Strings(out)
	return out
}

// Escaped lists the sequences whose escaped form is not in text.
func Escaped(text string) (missing []string) {
	for _, s := range Sequences {
		if !strings.Contains(text, s.Shown) {
			missing = append(missing, s.Name)
		}
	}
	return missing
}

// Plant appends payload to every settable string reachable from v (a
// pointer): struct fields, slice and array elements, map values,
// pointers and interfaces holding strings. Map keys are left alone.
// fixed names fields to leave as they are (keys of lookups, say).
func Plant(v any, payload string, fixed ...string) {
	plant(reflect.ValueOf(v), payload, fixed, map[uintptr]bool{})
}

func plant(v reflect.Value, payload string, fixed []string, seen map[uintptr]bool) {
	switch v.Kind() {
	case reflect.String:
		if v.CanSet() {
			v.SetString(v.String() + payload)
		}
	case reflect.Pointer:
		if v.IsNil() || seen[v.Pointer()] {
			return
		}
		seen[v.Pointer()] = true
		plant(v.Elem(), payload, fixed, seen)
	case reflect.Struct:
		for i := range v.NumField() {
			f := v.Type().Field(i)
			if f.IsExported() && !contains(fixed, f.Name) {
				plant(v.Field(i), payload, fixed, seen)
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			plant(v.Index(i), payload, fixed, seen)
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			e := v.MapIndex(k)
			c := reflect.New(e.Type()).Elem()
			c.Set(e)
			if e.Kind() == reflect.Interface && !e.IsNil() {
				inner := reflect.New(e.Elem().Type()).Elem()
				inner.Set(e.Elem())
				plant(inner, payload, fixed, seen)
				c.Set(inner)
			} else {
				plant(c, payload, fixed, seen)
			}
			v.SetMapIndex(k, c)
		}
	case reflect.Interface:
		// An interface field holding a string (rare in view data) is
		// replaced; one holding a pointer is followed.
		if v.IsNil() {
			return
		}
		if e := v.Elem(); e.Kind() == reflect.Pointer {
			plant(e, payload, fixed, seen)
		} else if e.Kind() == reflect.String && v.CanSet() {
			v.Set(reflect.ValueOf(e.String() + payload))
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Strings lists every string reachable from v through exported fields,
// elements, map keys and values, pointers and interfaces.
func Strings(v any) []string {
	var out []string
	collect(reflect.ValueOf(v), &out, map[uintptr]bool{})
	return out
}

func collect(v reflect.Value, out *[]string, seen map[uintptr]bool) {
	switch v.Kind() {
	case reflect.String:
		*out = append(*out, v.String())
	case reflect.Pointer:
		if v.IsNil() || seen[v.Pointer()] {
			return
		}
		seen[v.Pointer()] = true
		collect(v.Elem(), out, seen)
	case reflect.Interface:
		if !v.IsNil() {
			collect(v.Elem(), out, seen)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				collect(v.Field(i), out, seen)
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			collect(v.Index(i), out, seen)
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			collect(it.Key(), out, seen)
			collect(it.Value(), out, seen)
		}
	}
}
