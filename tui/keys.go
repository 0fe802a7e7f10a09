package tui

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Key names are spelled as Bubble Tea's KeyPressMsg.String() spells them
// ("f5", "ctrl+x", "pgdown", "G"). The config file may write them as people
// do ("F5", "Ctrl+X", "PageDown", "Escape"): normaliseKey maps those to the
// one spelling, and refuses names no terminal key has.

// namedKeys are the multi-letter key names Bubble Tea reports.
var namedKeys = []string{"enter", "tab", "backspace", "esc", "space", "up", "down", "left", "right",
	"begin", "find", "insert", "delete", "select", "pgup", "pgdown", "home", "end"}

var keyAliases = map[string]string{
	"escape": "esc", "return": "enter", "pageup": "pgup", "pagedown": "pgdown", "pgdn": "pgdown",
	"del": "delete", "ins": "insert", "spacebar": "space",
}

// modOrder is the order Bubble Tea prints modifiers in.
var modOrder = []string{"ctrl", "alt", "shift", "meta", "hyper", "super"}

var modAliases = map[string]string{"control": "ctrl", "option": "alt", "opt": "alt", "cmd": "super", "win": "super"}

// normaliseKey returns a key name as Bubble Tea spells it, or an error that
// says what is wrong with it.
func normaliseKey(s string) (string, error) {
	if s == " " {
		return "space", nil
	}
	s = strings.TrimSpace(s)
	if s == "" {
		return "", fmt.Errorf("empty key")
	}
	if len([]rune(s)) == 1 {
		return s, nil // a printable key: case matters (g and G differ)
	}
	var parts []string
	if strings.HasSuffix(s, "++") { // ctrl++
		parts = append(strings.Split(strings.TrimSuffix(s, "++"), "+"), "+")
	} else {
		parts = strings.Split(s, "+")
	}
	base := parts[len(parts)-1]
	mods := map[string]bool{}
	for _, p := range parts[:len(parts)-1] {
		p = strings.ToLower(strings.TrimSpace(p))
		if a, ok := modAliases[p]; ok {
			p = a
		}
		if !slices.Contains(modOrder, p) {
			return "", fmt.Errorf("unknown modifier %q in %q (modifiers: %s)", p, s, strings.Join(modOrder, ", "))
		}
		mods[p] = true
	}
	if base == "" {
		return "", fmt.Errorf("key %q has no key after its modifiers", s)
	}
	if len([]rune(base)) == 1 {
		// Terminals report ctrl and alt combinations with the lower-case letter.
		if (mods["ctrl"] || mods["alt"]) && !mods["shift"] {
			base = strings.ToLower(base)
		}
	} else {
		base = strings.ToLower(base)
		if a, ok := keyAliases[base]; ok {
			base = a
		}
		if !slices.Contains(namedKeys, base) && !isFKey(base) {
			return "", fmt.Errorf("unknown key %q (keys are written like f5, ctrl+x, enter, esc, pgdown, space, or one character)", s)
		}
	}
	var b strings.Builder
	for _, m := range modOrder {
		if mods[m] {
			b.WriteString(m + "+")
		}
	}
	b.WriteString(base)
	return b.String(), nil
}

// isFKey reports f1…f63, the function keys Bubble Tea knows.
func isFKey(s string) bool {
	n, ok := strings.CutPrefix(s, "f")
	if !ok {
		return false
	}
	i, err := strconv.Atoi(n)
	return err == nil && i >= 1 && i <= 63 && strconv.Itoa(i) == n
}

// keyLabel is how the footer and help spell a key: arrows as arrows
// (unless --ascii), everything else as configured.
func keyLabel(k string, ascii bool) string {
	if ascii {
		return k
	}
	switch k {
	case "up":
		return "↑"
	case "down":
		return "↓"
	case "left":
		return "←"
	case "right":
		return "→"
	}
	return k
}
