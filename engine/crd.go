package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/reconciler/client"
	"github.com/kroscope/kroscope/reconciler/desired"
	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/reconciler/graph/crd"
	"github.com/kroscope/kroscope/reconciler/graph/crd/compat"
	"github.com/kroscope/kroscope/reconciler/metadata"
)

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// crdWait bounds how long a just-applied CRD may take to be Established.
const crdWait = time.Minute

// breakingChangeError: the new schema would break instances stored under
// the existing CRD, and the graph does not allow that.
type breakingChangeError struct {
	name    string
	changes []compat.Change
}

func (e *breakingChangeError) Error() string {
	return fmt.Sprintf("CRD %s: breaking schema change refused (stored instances would no longer fit): %s; to apply it anyway, annotate the ResourceGraphDefinition %s: \"true\"",
		e.name, compat.Summary(e.changes), compat.AllowAnnotation)
}

// crdApplier decides whether a graph's instance CRD is there as the
// graph makes it: applied when this process writes (its compatibility with
// stored instances checked), awaited otherwise.
type crdApplier struct {
	set     *client.Set
	store   *state.Store // kro's view of the graph, while observing
	writing func() bool  // whether this process writes now
	force   bool         // --force-crd
}

// ensure applies the graph's instance CRD (server-side apply, field
// manager kroscope) when this process writes, and waits until it is
// Established. A change of an existing CRD's schema that would break stored
// instances is refused unless allowBreaking (kro's rules, see crdcompat)
// or --force-crd (the way to allow it for a graph read from a file).
// While observing it only waits for the CRD to exist. CRDs are never
// deleted.
//
// A user who may not read CRDs (a Role in a namespace: CRDs are cluster
// scoped) learns from discovery, which every authenticated user may read,
// whether the kind is served; what needs the CRD (applying it, the
// ownership and compatibility checks) is then skipped, and skipped says
// so.
func (c *crdApplier) ensure(ctx context.Context, g *graph.Graph, allowBreaking bool) (skipped string, err error) {
	want := g.Instance.CRD
	if want == nil {
		return "", fmt.Errorf("graph %s has no generated CRD", g.Name)
	}
	crds := c.set.Dynamic().Resource(crdGVR)
	cur, err := crds.Get(ctx, want.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		cur = nil
	case apierrors.IsForbidden(err):
		return c.byDiscovery(g)
	case err != nil:
		return "", fmt.Errorf("reading CRD %s: %w", want.Name, err)
	}
	return "", c.apply(ctx, g, cur, allowBreaking)
}

// byDiscovery stands in for reading the CRD when that is forbidden:
// the kind is there when discovery lists its resource.
func (c *crdApplier) byDiscovery(g *graph.Graph) (string, error) {
	want := g.Instance.CRD
	gvr := g.Instance.GVR
	skipped := fmt.Sprintf("cannot read CRD %s (forbidden): the kind is served (discovery); not applying it, not checking its owner or schema compatibility (they need cluster rights)", want.Name)
	if c.writing() {
		skipped = fmt.Sprintf("cannot read CRD %s (forbidden): the kind is served (discovery), but this user cannot apply the graph's schema to it; not checking its owner or schema compatibility", want.Name)
	}
	d := c.set.Discovery()
	if d == nil {
		return "", fmt.Errorf("cannot read CRD %s (forbidden) and there is no discovery client to ask whether the kind is served", want.Name)
	}
	list, err := d.ServerResourcesForGroupVersion(gvr.GroupVersion().String())
	if err != nil && !apierrors.IsNotFound(err) {
		return "", fmt.Errorf("cannot read CRD %s (forbidden), and discovery of %s failed: %w", want.Name, gvr.GroupVersion(), err)
	}
	if list != nil {
		for _, r := range list.APIResources {
			if r.Name == gvr.Resource {
				return skipped, nil
			}
		}
	}
	d.Invalidate() // the next try asks the API server again
	return "", fmt.Errorf("cannot read CRD %s (forbidden) and the API server does not serve %s yet (discovery); an admin (or kro) must install it", want.Name, resourceName(gvr))
}

// apply is ensure once the CRD (cur, nil when absent) could be read.
func (c *crdApplier) apply(ctx context.Context, g *graph.Graph, cur *unstructured.Unstructured, allowBreaking bool) error {
	want := g.Instance.CRD
	crds := c.set.Dynamic().Resource(crdGVR)
	if !c.writing() {
		if cur == nil {
			return fmt.Errorf("CRD %s does not exist yet (observing: the lease holder or kro creates it)", want.Name)
		}
		if !established(cur) {
			return fmt.Errorf("CRD %s is not Established yet", want.Name)
		}
		return nil
	}
	if cur != nil && !c.force {
		if err := crd.CheckOwnership(cur, g.Name); err != nil {
			return err
		}
	}
	if cur != nil && !allowBreaking && !c.force {
		var old apiextensionsv1.CustomResourceDefinition
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(cur.Object, &old); err != nil {
			return fmt.Errorf("reading CRD %s: %w", want.Name, err)
		}
		if changes := compat.Breaking(&old, want); len(changes) > 0 {
			return &breakingChangeError{name: want.Name, changes: changes}
		}
	}
	obj, err := crdApplyObject(want)
	if err != nil {
		return err
	}
	if cur != nil && established(cur) && desired.Current(&unstructured.Unstructured{Object: obj}, cur) {
		return nil // already what this graph makes: a restart writes nothing
	}
	data, err := json.Marshal(obj)
	if err != nil {
		return fmt.Errorf("encoding CRD %s: %w", want.Name, err)
	}
	force := true // the CRD is ours (checked above): take over fields kro's manager holds
	if _, err := crds.Patch(ctx, want.Name, types.ApplyPatchType, data, metav1.PatchOptions{FieldManager: metadata.FieldManager, Force: &force}); err != nil {
		return fmt.Errorf("applying CRD %s: %w", want.Name, err)
	}
	deadline := time.Now().Add(crdWait)
	for {
		cur, err := crds.Get(ctx, want.Name, metav1.GetOptions{})
		if err == nil && established(cur) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("CRD %s not Established after %s", want.Name, crdWait)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(150 * time.Millisecond):
		}
	}
}

// waitReason says why a graph's CRD is not there yet. While observing,
// the CRD comes from kro (or the lease holder): when kro reports the graph
// blocked (it rejected it, say), kro's own reason is the one that counts,
// not the CRD's absence.
func (c *crdApplier) waitReason(graph string, err error) string {
	if c.writing() {
		return err.Error()
	}
	if k := c.store.KroOf(graph); k != nil && k.Blocked != "" {
		return "kro does not serve this graph: " + k.Blocked
	}
	return err.Error()
}

// crdApplyObject is the apply configuration: the generated CRD with
// kroscope's ownership labels, without status.
func crdApplyObject(want *apiextensionsv1.CustomResourceDefinition) (map[string]any, error) {
	c := want.DeepCopy()
	c.APIVersion = "apiextensions.k8s.io/v1"
	c.Kind = "CustomResourceDefinition"
	if c.Labels == nil {
		c.Labels = map[string]string{}
	}
	c.Labels[metadata.OwnedLabel] = "true"
	c.Labels[metadata.ManagedByLabel] = metadata.ManagedByValue
	c.Status = apiextensionsv1.CustomResourceDefinitionStatus{}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(c)
	if err != nil {
		return nil, fmt.Errorf("converting CRD %s: %w", want.Name, err)
	}
	delete(obj, "status")
	if md, ok := obj["metadata"].(map[string]any); ok {
		delete(md, "creationTimestamp")
	}
	// The hash, as on every child, tells a later start whether the CRD
	// still holds what this graph makes (desired.Current).
	u := &unstructured.Unstructured{Object: obj}
	h, err := desired.Hash(u)
	if err != nil {
		return nil, fmt.Errorf("hashing CRD %s: %w", want.Name, err)
	}
	ann := u.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[metadata.DesiredHashAnnotation] = h
	u.SetAnnotations(ann)
	return obj, nil
}

func established(u *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == string(apiextensionsv1.Established) && m["status"] == string(apiextensionsv1.ConditionTrue) {
			return true
		}
	}
	return false
}
