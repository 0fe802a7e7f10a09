package reconciler

import (
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kroscope/kroscope/reconciler/metadata"
)

// DefaultMaxNestingDepth bounds how many instances may stand above an
// instance (graph A creating an instance of graph B creating one of A...).
// Build time rejects a graph that creates its own kind, but not two graphs
// that create each other: without this they recurse until the cluster is
// full.
const DefaultMaxNestingDepth = 8

// MaxNestingDepthFlag is the flag that sets ReconcileConfig.MaxNestingDepth.
const MaxNestingDepthFlag = "max-nesting-depth"

// nestingTooDeep follows the parent chain kroscope stamps on every child
// (the kro.run/instance-* labels, checked against the parent's UID) and
// returns a message when the instance stands deeper than the limit, or
// when the chain loops back on itself; "" otherwise. A parent that no
// longer exists ends the chain.
func nestingTooDeep(io reach, k kinds, limit int, inst *unstructured.Unstructured) (string, error) {
	if limit <= 0 {
		limit = DefaultMaxNestingDepth
	}
	chain := []string{describeInstance(inst)}
	seen := map[types.UID]bool{inst.GetUID(): true}
	obj := inst
	for depth := 1; ; depth++ {
		parent, err := parentInstance(io, k, obj)
		if err != nil || parent == nil {
			return "", err
		}
		chain = append(chain, describeInstance(parent))
		if seen[parent.GetUID()] {
			return fmt.Sprintf("instance's parent chain loops: %s", strings.Join(chain, " <- ")), nil
		}
		if depth > limit {
			return fmt.Sprintf("instance is nested more than %d instances deep (graphs that create each other?); raise --%s to allow it: %s",
				limit, MaxNestingDepthFlag, strings.Join(chain, " <- ")), nil
		}
		seen[parent.GetUID()] = true
		obj = parent
	}
}

// parentInstance reads the instance whose child obj is, by the labels
// kroscope stamped on obj; nil when obj is nobody's child (or its parent
// is gone or was replaced).
func parentInstance(io reach, k kinds, obj *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	l := obj.GetLabels()
	kind, uid, name := l[metadata.InstanceKindLabel], l[metadata.InstanceIDLabel], l[metadata.InstanceNameLabel]
	if kind == "" || uid == "" || name == "" || l[metadata.OwnedLabel] != "true" {
		return nil, nil
	}
	gvk := schema.GroupVersionKind{Group: l[metadata.InstanceGroupLabel], Version: l[metadata.InstanceVersionLabel], Kind: kind}
	gvr, ok := k.instanceKind(gvk)
	if !ok {
		return nil, nil // no mapper, or its kind is no longer served: the chain ends
	}
	p, err := io.objs.Get(io.ctx, gvr, l[metadata.InstanceNamespaceLabel], name)
	switch {
	case apierrors.IsNotFound(err):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("reading the parent instance %s %s: %w", gvk.Kind, name, err)
	case string(p.GetUID()) != uid:
		return nil, nil
	}
	return p, nil
}

// describeInstance names an instance as "Kind namespace/name".
func describeInstance(u *unstructured.Unstructured) string {
	if u.GetNamespace() == "" {
		return u.GetKind() + " " + u.GetName()
	}
	return u.GetKind() + " " + u.GetNamespace() + "/" + u.GetName()
}
