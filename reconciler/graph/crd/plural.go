package crd

import "strings"

// Plural returns the lower-case plural resource name of a kind.
//
// kro uses github.com/gobuffalo/flect, which is not in kroscope's module
// graph, and apimachinery's UnsafeGuessKindToResource turns "Gateway" into
// "gatewaies". This small rule set gives flect's answer for regular English
// nouns, which is what kinds are in practice:
//   - a consonant followed by "y" becomes "ies" (Policy → policies);
//   - "s", "x", "z", "ch" and "sh" take "es" (Status → statuses, Box → boxes);
//   - everything else takes "s" (WebApp → webapps, Gateway → gateways).
//
// Irregular nouns (Person, Index) are not special-cased; their plural can
// differ from kro's.
func Plural(kind string) string {
	s := strings.ToLower(kind)
	if s == "" {
		return ""
	}
	switch {
	case strings.HasSuffix(s, "y") && len(s) > 1 && !strings.ContainsRune("aeiou", rune(s[len(s)-2])):
		return s[:len(s)-1] + "ies"
	case strings.HasSuffix(s, "s"), strings.HasSuffix(s, "x"), strings.HasSuffix(s, "z"),
		strings.HasSuffix(s, "ch"), strings.HasSuffix(s, "sh"):
		return s + "es"
	}
	return s + "s"
}
