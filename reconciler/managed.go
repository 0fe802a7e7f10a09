package reconciler

import (
	"fmt"
	"maps"
	"slices"

	"github.com/kroscope/kroscope/reconciler/client"
	"github.com/kroscope/kroscope/reconciler/metadata"
)

// ensureManaged puts the finalizer, the instance labels and the ApplySet
// inventory (the graph's kinds) on the instance in one write, and only when
// something is missing: as kro does, an instance never carries the
// finalizer without an inventory deletion can read.
func (r *run) ensureManaged() error {
	want := r.c.labeler.Labels()
	have := r.inst.GetLabels()
	missing := map[string]any{}
	for k, v := range want {
		if have[k] != v {
			missing[k] = v
		}
	}
	fins := r.inst.GetFinalizers()
	hasFin := slices.Contains(fins, metadata.Finalizer)
	inv, err := r.graphInventory()
	if err != nil {
		return err
	}
	needInv := !r.inventoryWritten(inv)
	if hasFin && len(missing) == 0 && !needInv {
		return nil
	}
	md := map[string]any{"resourceVersion": r.inst.GetResourceVersion()}
	if needInv {
		ip := r.inventoryPatch(inv)
		maps.Copy(missing, ip["labels"].(map[string]any))
		ann := ip["annotations"].(map[string]any)
		if !metadata.HasInventory(r.inst.GetLabels(), r.inst.GetAnnotations()) && !r.reconciledBefore() {
			// A new instance has no children yet, so nothing to prune.
			ann[metadata.PrunedGraphAnnotation] = r.c.graphHash
		}
		md["annotations"] = ann
	}
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
	body, err := client.EncodeJSON(map[string]any{"metadata": md})
	if err != nil {
		return err
	}
	out, err := r.objs.Patch(r.ctx, r.c.gvr, r.inst.GetNamespace(), r.inst.GetName(), body, r.inst.GetResourceVersion())
	if err != nil {
		return fmt.Errorf("patching instance %s: %w", objectName(r.inst), err)
	}
	r.inst = out
	return nil
}
