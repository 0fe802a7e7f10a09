package plan

import (
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/kroscope/kroscope/reconciler/metadata"
	"github.com/kroscope/kroscope/reconciler/redact"
)

// noiseMetadata are the fields the API server (or kroscope's bookkeeping)
// sets on every write: a change in them is not a change the user made.
var noiseMetadata = []string{"managedFields", "resourceVersion", "generation", "creationTimestamp", "uid", "selfLink"}

// noiseAnnotations change whenever anything else does (the desired-object
// hash) or are another tool's memory of an apply.
var noiseAnnotations = []string{metadata.DesiredHashAnnotation, "kubectl.kubernetes.io/last-applied-configuration"}

// Normalize returns a copy of obj without what a plan never shows: the
// status (controllers write it, not applies) and the metadata noise.
func Normalize(obj map[string]any) map[string]any {
	if obj == nil {
		return nil
	}
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		if k != "status" {
			out[k] = v
		}
	}
	md, ok := obj["metadata"].(map[string]any)
	if !ok {
		return out
	}
	cp := make(map[string]any, len(md))
	for k, v := range md {
		if !slices.Contains(noiseMetadata, k) {
			cp[k] = v
		}
	}
	if ann, ok := md["annotations"].(map[string]any); ok {
		keep := map[string]any{}
		for k, v := range ann {
			if !slices.Contains(noiseAnnotations, k) {
				keep[k] = v
			}
		}
		cp["annotations"] = keep
		if len(keep) == 0 {
			delete(cp, "annotations")
		}
	}
	out["metadata"] = cp
	return out
}

// Diff lists the fields that differ between before and after (nil before:
// every field of after is added), both normalized, by path, leaves only:
// a map is walked into, a list of the same length element by element, a
// list whose length changed is one changed field.
func Diff(before, after map[string]any) []Field {
	var out []Field
	walk("", asValue(Normalize(before)), asValue(Normalize(after)), &out)
	return out
}

// asValue keeps a nil map nil (absent), not an empty map.
func asValue(m map[string]any) any {
	if m == nil {
		return nil
	}
	return m
}

func walk(path string, old, new any, out *[]Field) {
	om, oIsMap := old.(map[string]any)
	nm, nIsMap := new.(map[string]any)
	if oIsMap && nIsMap || (old == nil && nIsMap) || (oIsMap && new == nil) {
		for _, k := range unionKeys(om, nm) {
			walk(join(path, k), om[k], nm[k], out)
		}
		return
	}
	ol, oIsList := old.([]any)
	nl, nIsList := new.([]any)
	if oIsList && nIsList && len(ol) == len(nl) {
		for i := range ol {
			walk(path+"["+strconv.Itoa(i)+"]", ol[i], nl[i], out)
		}
		return
	}
	switch {
	case old == nil && new == nil:
	case old == nil:
		*out = append(*out, Field{Path: path, Op: "+", New: new})
	case new == nil:
		*out = append(*out, Field{Path: path, Op: "-", Old: old})
	case !reflect.DeepEqual(old, new):
		*out = append(*out, Field{Path: path, Op: "~", Old: old, New: new})
	}
}

func unionKeys(a, b map[string]any) []string {
	keys := make([]string, 0, len(a)+len(b))
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	return keys
}

var plainKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// join appends a map key to a path: a dotted name when it is a plain
// identifier, else a quoted index (labels and annotations).
func join(path, key string) string {
	if !plainKey.MatchString(key) {
		return path + "[" + strconv.Quote(key) + "]"
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

// Sensitive replaces a Secret's value in a plan.
const Sensitive = "(sensitive value)"

// Mask hides Secret values in fields of an object of kind (apiVersion v1
// when secret is true): every value under data and stringData of a Secret,
// and in any object every string holding a value red knows (one read from
// a Secret). A value that changed stays a "~" line, its values hidden.
func Mask(fields []Field, secret bool, red *redact.Set) []Field {
	out := make([]Field, len(fields))
	for i, f := range fields {
		if secret && (hasPrefix(f.Path, "data") || hasPrefix(f.Path, "stringData")) {
			f.Old, f.New = maskAll(f.Old), maskAll(f.New)
		} else if red != nil && !red.Empty() {
			f.Old, f.New = red.Value(f.Old), red.Value(f.New)
		}
		out[i] = f
	}
	return out
}

func hasPrefix(path, field string) bool {
	return path == field || len(path) > len(field) && path[:len(field)] == field && (path[len(field)] == '.' || path[len(field)] == '[')
}

func maskAll(v any) any {
	if v == nil {
		return nil
	}
	return Sensitive
}

// bookkeepingPrefixes are the fields the reconciler puts on every child
// it makes, whatever the template says.
var bookkeepingPrefixes = []string{
	"apiVersion", "kind", "metadata.ownerReferences",
	`metadata.labels["kro.run/`, `metadata.labels["applyset.kubernetes.io/`,
	`metadata.labels["` + metadata.ManagedByLabel + `"]`, `metadata.annotations["internal.kro.run/`,
}

// Bookkeeping reports whether a created object's field is one the
// reconciler adds to every child (kro's labels, the ApplySet label, the
// apply order, the owner reference; apiVersion and kind, which the
// object's line names): the text plan of a create leaves them out, the
// JSON keeps them. A change of one is always shown.
func Bookkeeping(path string) bool {
	for _, p := range bookkeepingPrefixes {
		if strings.HasPrefix(path, p) && (len(path) == len(p) || !isIdentByte(p[len(p)-1]) || !isIdentByte(path[len(p)])) {
			return true
		}
	}
	return false
}

func isIdentByte(b byte) bool {
	return b == '_' || b == '-' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}
