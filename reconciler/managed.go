package reconciler

import (
	"maps"
	"slices"

	"github.com/kroscope/kroscope/reconciler/metadata"
)

// marks are kroscope's marks on the instance: its finalizer, the labels
// the controller's labeler wants, and the ApplySet inventory (the graph's
// kinds). As kro does, an instance never carries the finalizer without an
// inventory deletion can read.
type marks struct {
	inst      *instance
	aset      *applySet
	labeler   metadata.Labeler
	graphHash string
}

// ensure puts the finalizer, the labels and the inventory on the instance
// in one write, and only when something is missing.
func (m *marks) ensure() error {
	u := m.inst.get()
	want := m.labeler.Labels()
	have := u.GetLabels()
	missing := map[string]any{}
	for k, v := range want {
		if have[k] != v {
			missing[k] = v
		}
	}
	fins := u.GetFinalizers()
	hasFin := slices.Contains(fins, metadata.Finalizer)
	inv, err := m.aset.graphInventory()
	if err != nil {
		return err
	}
	needInv := !m.aset.recorded(inv)
	if hasFin && len(missing) == 0 && !needInv {
		return nil
	}
	md := map[string]any{"resourceVersion": u.GetResourceVersion()}
	if needInv {
		ip := m.aset.patch(inv)
		maps.Copy(missing, ip["labels"].(map[string]any))
		ann := ip["annotations"].(map[string]any)
		if !metadata.HasInventory(u.GetLabels(), u.GetAnnotations()) && !m.inst.reconciledBefore() {
			// A new instance has no children yet, so nothing to prune.
			ann[metadata.PrunedGraphAnnotation] = m.graphHash
		}
		md["annotations"] = ann
	}
	if len(missing) > 0 {
		md["labels"] = missing
	}
	if !hasFin {
		md["finalizers"] = append(slices.Clone(fins), metadata.Finalizer)
	}
	return m.inst.patch(md)
}

// removeFinalizer takes kroscope's finalizer off, leaving every other one.
func (m *marks) removeFinalizer() error {
	u := m.inst.get()
	fins := u.GetFinalizers()
	if !slices.Contains(fins, metadata.Finalizer) {
		return nil
	}
	rest := slices.DeleteFunc(slices.Clone(fins), func(f string) bool { return f == metadata.Finalizer })
	var finsVal any = rest
	if len(rest) == 0 {
		finsVal = nil
	}
	return m.inst.patch(map[string]any{
		"resourceVersion": u.GetResourceVersion(),
		"finalizers":      finsVal,
	})
}
