package reconciler

import (
	"encoding/json"
	"fmt"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kroscope/kroscope/reconciler/metadata"
)

// ensureManaged puts the finalizer and the instance labels on the instance
// in one write, and only when something is missing.
func (r *run) ensureManaged() error {
	want := r.c.labeler.Labels()
	have := r.inst.GetLabels()
	missing := map[string]string{}
	for k, v := range want {
		if have[k] != v {
			missing[k] = v
		}
	}
	fins := r.inst.GetFinalizers()
	hasFin := slices.Contains(fins, metadata.Finalizer)
	if hasFin && len(missing) == 0 {
		return nil
	}
	md := map[string]any{"resourceVersion": r.inst.GetResourceVersion()}
	if len(missing) > 0 {
		md["labels"] = missing
	}
	if !hasFin {
		md["finalizers"] = append(slices.Clone(fins), metadata.Finalizer)
	}
	return r.patchInstance(md)
}

// removeFinalizer takes kroscope's finalizer off, leaving every other one.
func (r *run) removeFinalizer() error {
	fins := r.inst.GetFinalizers()
	if !slices.Contains(fins, metadata.Finalizer) {
		return nil
	}
	rest := slices.DeleteFunc(slices.Clone(fins), func(f string) bool { return f == metadata.Finalizer })
	var finsVal any = rest
	if len(rest) == 0 {
		finsVal = nil
	}
	return r.patchInstance(map[string]any{
		"resourceVersion": r.inst.GetResourceVersion(),
		"finalizers":      finsVal,
	})
}

// patchInstance sends a JSON merge patch of metadata guarded by the
// instance's resourceVersion (a concurrent change is a conflict, retried).
func (r *run) patchInstance(md map[string]any) error {
	body, err := json.Marshal(map[string]any{"metadata": md})
	if err != nil {
		return err
	}
	out, err := r.cs.Dynamic().Resource(r.c.gvr).Namespace(r.inst.GetNamespace()).
		Patch(r.ctx, r.inst.GetName(), types.MergePatchType, body, metav1.PatchOptions{FieldManager: metadata.FieldManager})
	if err != nil {
		return fmt.Errorf("patching instance %s: %w", objectName(r.inst), err)
	}
	r.wrote(r.c.gvr, out, r.inst.GetResourceVersion())
	r.inst = out
	return nil
}

// withStatus returns a copy of the instance carrying status, without
// managedFields: an update that leaves them out keeps the server's, and
// sending them back costs both sides for nothing.
func withStatus(inst *unstructured.Unstructured, status map[string]any) *unstructured.Unstructured {
	out := inst.DeepCopy()
	out.Object["status"] = status
	out.SetManagedFields(nil)
	return out
}
