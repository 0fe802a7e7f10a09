// Package desired owns one decision: whether an object the cluster holds
// is already what kroscope would write (Current), so that it is not
// written again. It is a pure function of the two objects: the rendered one
// and the live one with the hash annotation the last apply stored on it,
// so a process that just started decides as the one that wrote it did.
package desired

import (
	"crypto/sha256"
	"encoding/hex"
	"maps"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kroscope/kroscope/reconciler/client"
	"github.com/kroscope/kroscope/reconciler/metadata"
)

var jsonBufs = sync.Pool{New: func() any { b := make([]byte, 0, 2048); return &b }}

// Hash hashes the rendered object, without the hash annotation (the
// object sent carries it: a retry of the same object must hash what was
// rendered, not the annotation the first try set). It is the SHA-256 of
// the object's JSON as encoding/json writes it, so every kroscope that
// renders the same object stores the same hash.
func Hash(u *unstructured.Unstructured) (string, error) {
	u = withoutHashAnnotation(u)
	bp := jsonBufs.Get().(*[]byte)
	b, err := client.AppendJSON((*bp)[:0], u.Object)
	if cap(b) <= 64<<10 { // a rare huge object's buffer is not kept
		*bp = b
		defer jsonBufs.Put(bp)
	}
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8]), nil
}

// Current reports whether live already holds want, the object about to be
// applied (its hash annotation set, see Hash): the hash stored by the last
// apply is want's, so no field was since added to or dropped from the
// template (a dropped field still stands in live until an apply removes
// it), and every value want sets is in live (Subset), so nobody changed
// them since.
func Current(want, live *unstructured.Unstructured) bool {
	h := want.GetAnnotations()[metadata.DesiredHashAnnotation]
	if h == "" || live.GetAnnotations()[metadata.DesiredHashAnnotation] != h {
		return false
	}
	_, same := Subset(want.Object, live.Object, "")
	return same
}

// withoutHashAnnotation is u without the desired-hash annotation, sharing
// the rest with u; u itself when it has none (the common case: a freshly
// rendered object).
func withoutHashAnnotation(u *unstructured.Unstructured) *unstructured.Unstructured {
	md, _ := u.Object["metadata"].(map[string]any)
	ann, _ := md["annotations"].(map[string]any)
	if _, has := ann[metadata.DesiredHashAnnotation]; !has {
		return u
	}
	rest := maps.Clone(ann)
	delete(rest, metadata.DesiredHashAnnotation)
	md = maps.Clone(md)
	if len(rest) == 0 {
		delete(md, "annotations")
	} else {
		md["annotations"] = rest
	}
	obj := maps.Clone(u.Object)
	obj["metadata"] = md
	return &unstructured.Unstructured{Object: obj}
}
