package reconciler

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// heldBy says what keeps a node's objects after they were deleted: the
// finalizers of the first one that still has some, named first (a narrow
// reason column keeps the start), so the operator knows
// which controller to look at. "" when none carries a finalizer (the
// object is only about to go).
func heldBy(objs []unstructured.Unstructured) string {
	for i := range objs {
		if fs := objs[i].GetFinalizers(); len(fs) > 0 && objs[i].GetDeletionTimestamp() != nil {
			word := "finalizer"
			if len(fs) > 1 {
				word = "finalizers"
			}
			return fmt.Sprintf("held by %s %s (%s)", word, strings.Join(fs, ", "), objectName(&objs[i]))
		}
	}
	return ""
}
