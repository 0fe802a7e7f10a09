package crd

import (
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kroscope/kroscope/reconciler/metadata"
)

// ForeignError: the CRD exists and neither kroscope nor kro made it. It is
// final: waiting does not change who made a CRD.
type ForeignError struct{ Name, Owner string }

func (e *ForeignError) Error() string {
	return fmt.Sprintf("CRD %s exists and was not created by kroscope or kro (%s): not overwriting it; pass --force-crd to take it over", e.Name, e.Owner)
}

// CheckOwnership returns nil when the CRD already in the cluster (read
// typed or unstructured) may be overwritten with the one generated for
// graphName. It refuses, with a *ForeignError, a CRD neither kroscope nor kro
// made, and, with a plain error, one generated for another graph: two
// definitions serving one kind would overwrite each other's schema on every
// restart. That one may resolve itself (the other graph renamed or
// deleted), so callers retry it.
func CheckOwnership(existing metav1.Object, graphName string) error {
	if owner, ours := Owner(existing); !ours {
		return &ForeignError{Name: existing.GetName(), Owner: owner}
	}
	if owner := existing.GetLabels()[metadata.GraphNameLabel]; owner != "" && owner != graphName {
		return fmt.Errorf("CRD %s belongs to graph %q, not %q: not overwriting it; give one of the graphs another kind or group, or pass --force-crd",
			existing.GetName(), owner, graphName)
	}
	return nil
}

// Owner says who made an existing CRD; ours is true for kroscope and kro
// (their labels, or kroscope's field manager when the labels were removed).
func Owner(existing metav1.Object) (owner string, ours bool) {
	l := existing.GetLabels()
	switch {
	case l[metadata.OwnedLabel] == "true":
		return metadata.OwnedLabel, true
	case l[metadata.ManagedByLabel] == metadata.ManagedByValue, l[metadata.ManagedByLabel] == metadata.KroManagedByValue:
		return metadata.ManagedByLabel + "=" + l[metadata.ManagedByLabel], true
	}
	var managers []string
	for _, f := range existing.GetManagedFields() {
		if f.Manager == metadata.FieldManager {
			return "field manager " + metadata.FieldManager, true
		}
		managers = append(managers, f.Manager)
	}
	if len(managers) == 0 {
		return "no kro labels", false
	}
	return "managed by " + strings.Join(managers, ", "), false
}
