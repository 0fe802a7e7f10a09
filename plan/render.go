package plan

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/yaml"

	"github.com/kroscope/kroscope/memcluster"
	"github.com/kroscope/kroscope/reconciler"
	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/reconciler/metadata"
	"github.com/kroscope/kroscope/reconciler/redact"
)

// renderPasses bounds the reconciles of an offline render: each pass
// renders the resources whose dependencies the one before created.
const renderPasses = 8

// Rendered is an offline render: the children the reconciler made in an
// empty in-memory cluster, and the resources it could not render there.
type Rendered struct {
	Objects []*unstructured.Unstructured
	// Notes are the resources waiting (for a status only a real
	// controller writes, OpPending), failing (OpFail) or skipped (no Op).
	Notes []Object
}

// Render runs the reconciler for inst over an empty in-memory cluster
// (the demo's, no network) until it stops making progress, and returns
// the children it created: exactly what it would apply, with no cluster.
func Render(ctx context.Context, g *graph.Graph, inst *unstructured.Unstructured) (*Rendered, error) {
	if inst.GroupVersionKind().GroupKind() != g.Instance.GVK.GroupKind() {
		return nil, fmt.Errorf("instance %s is a %s, graph %s serves %s", inst.GetName(), inst.GroupVersionKind().Kind, g.Name, g.Instance.GVK.Kind)
	}
	if inst.GetNamespace() == "" && g.Instance.CRD.Spec.Scope != "Cluster" {
		inst.SetNamespace(metav1.NamespaceDefault)
	}
	c := memcluster.New(memcluster.Options{Namespaces: []string{inst.GetNamespace()}, Seed: 1, StableUIDs: true})
	set := c.ClientSet()
	if err := serveKinds(ctx, c, g); err != nil {
		return nil, err
	}
	created, err := set.Dynamic().Resource(g.Instance.GVR).Namespace(inst.GetNamespace()).Create(ctx, inst, metav1.CreateOptions{FieldManager: "kubectl"})
	if err != nil {
		return nil, fmt.Errorf("instance %s: %w", inst.GetName(), err)
	}
	ctl := reconciler.NewController(logr.Discard(), reconciler.ReconcileConfig{}, g.Instance.GVR, g, set, nil, metadata.NewGraphLabeler(g.Name, g.UID))
	defer ctl.Close()
	var obs reconciler.Observation
	ctl.SetObserver(func(o reconciler.Observation) { obs = o })
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: created.GetNamespace(), Name: created.GetName()}}
	for range renderPasses {
		before := c.ResourceVersion()
		_ = ctl.Reconcile(ctx, req)
		if c.ResourceVersion() == before {
			break // nothing new: another pass would render the same
		}
	}
	return collectRendered(ctx, c, g, created.GetUID(), obs)
}

// serveKinds makes the in-memory cluster serve the instance kind and
// every child kind it does not know (as an untyped CRD: the templates
// were type-checked when the graph was built).
func serveKinds(ctx context.Context, c *memcluster.Cluster, g *graph.Graph) error {
	crds := c.Dynamic().Resource(crdGVR)
	obj, err := toUnstructured(g.Instance.CRD)
	if err != nil {
		return err
	}
	if _, err := crds.Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("serving %s in memory: %w", g.Instance.GVK.Kind, err)
	}
	for _, id := range g.TopologicalOrder {
		res := g.Resources[id]
		if _, err := c.RESTMapper().RESTMapping(res.GVK.GroupKind(), res.GVK.Version); err == nil {
			continue
		}
		if _, err := crds.Create(ctx, untypedCRD(res), metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("resource %s: serving %s in memory: %w", id, res.GVK, err)
		}
	}
	return nil
}

// untypedCRD serves res's kind with no schema beyond "an object".
func untypedCRD(res *graph.Resource) *unstructured.Unstructured {
	scope := "Cluster"
	if res.Namespaced {
		scope = "Namespaced"
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": res.GVR.Resource + "." + res.GVK.Group},
		"spec": map[string]any{
			"group": res.GVK.Group, "scope": scope,
			"names": map[string]any{"kind": res.GVK.Kind, "plural": res.GVR.Resource, "listKind": res.GVK.Kind + "List", "singular": strings.ToLower(res.GVK.Kind)},
			"versions": []any{map[string]any{"name": res.GVK.Version, "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}},
		},
	}}
}

func toUnstructured(v any) (*unstructured.Unstructured, error) {
	b, err := yaml.Marshal(v)
	if err != nil {
		return nil, err
	}
	u := &unstructured.Unstructured{}
	return u, yaml.Unmarshal(b, &u.Object)
}

// collectRendered lists the instance's children in graph order (by their
// node-id label) and notes what did not render.
func collectRendered(ctx context.Context, c *memcluster.Cluster, g *graph.Graph, uid types.UID, obs reconciler.Observation) (*Rendered, error) {
	out := &Rendered{}
	seen := map[string]bool{}
	for _, id := range g.TopologicalOrder {
		res := g.Resources[id]
		if res.External || seen[res.GVR.String()] {
			continue
		}
		seen[res.GVR.String()] = true
		list, err := c.Dynamic().Resource(res.GVR).List(ctx, metav1.ListOptions{LabelSelector: metadata.InstanceIDLabel + "=" + string(uid)})
		if err != nil {
			return nil, fmt.Errorf("resource %s: %w", id, err)
		}
		for i := range list.Items {
			u := &unstructured.Unstructured{Object: Normalize(list.Items[i].Object)}
			out.Objects = append(out.Objects, u)
		}
	}
	order := map[string]int{}
	for i, id := range g.TopologicalOrder {
		order[id] = i
	}
	slices.SortStableFunc(out.Objects, func(a, b *unstructured.Unstructured) int {
		return order[a.GetLabels()[metadata.NodeIDLabel]] - order[b.GetLabels()[metadata.NodeIDLabel]]
	})
	for _, o := range fromObservation(g, obs, nil) {
		if o.Op != OpFail && o.Op != OpPending {
			continue
		}
		out.Notes = append(out.Notes, o)
	}
	for _, id := range g.TopologicalOrder {
		if d := obs.Resources[id]; d != nil && d.State == reconciler.ResourceStateSkipped {
			out.Notes = append(out.Notes, Object{Resource: id, Kind: d.GVK.Kind, Message: d.WaitingFor})
		}
	}
	return out, nil
}

// WriteYAML writes the rendered children as a YAML stream, each Secret's
// values masked, and the notes as comments after them.
func (r *Rendered) WriteYAML(b *strings.Builder) error {
	for _, u := range r.Objects {
		obj := u.Object
		if redact.IsSecret(obj) {
			obj = maskSecret(obj)
		}
		y, err := yaml.Marshal(obj)
		if err != nil {
			return err
		}
		b.WriteString("---\n")
		b.Write(y)
	}
	for _, n := range r.Notes {
		mark := Sign(n.Op)
		if n.Op == "" {
			mark = "skipped"
		}
		line := "# " + mark + " resource " + n.Resource + " (" + n.Kind + ")"
		if n.Message != "" {
			line += ": " + strconv.Quote(n.Message)
		}
		b.WriteString(line + "\n")
	}
	return nil
}

// maskSecret is a copy of a Secret with its values replaced.
func maskSecret(obj map[string]any) map[string]any {
	out := make(map[string]any, len(obj))
	for k, v := range obj {
		if data, ok := v.(map[string]any); ok && (k == "data" || k == "stringData") {
			masked := make(map[string]any, len(data))
			for dk := range data {
				masked[dk] = Sensitive
			}
			v = masked
		}
		out[k] = v
	}
	return out
}
