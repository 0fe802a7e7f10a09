package engine

import (
	"context"
	"errors"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kroscope/kroscope/engine/authority"
	"github.com/kroscope/kroscope/engine/readonly"
	"github.com/kroscope/kroscope/reconciler/client"
	"github.com/kroscope/kroscope/reconciler/graph"
)

// UserFieldManager is the field manager of the writes the user asks for
// (the plan view's apply of a graph, an instance's edit): not kroscope's
// own manager, so that kro detection never reads them as kroscope's
// reconciles (a write by kroscope's manager after kro's sets kro's write
// aside, engine/krodetect), and the managedFields say who changed what.
const UserFieldManager = "kroscope-user"

// ApplyGraphRefused says, without a call to the API server, why applying
// the graph files would be refused (nil: it may go ahead), so that the
// plan view can say so before it asks for confirmation. Applying writes
// the definitions to the cluster, which only changes what is served when
// the graph comes from the cluster: the --rgd files this kroscope serves
// are read from disk, so applying them is refused.
func (e *Engine) ApplyGraphRefused(paths ...string) error {
	if len(paths) == 0 {
		return errors.New("not applying: the --rgd files kroscope serves are read from disk, not from the cluster; restart kroscope with the edited files, or :plan FILE to apply a graph to the cluster")
	}
	if a := e.wr.decision().ApplyGraph; a.Route == authority.Refused {
		return fmt.Errorf("not applying the graph: %s", a.Why)
	}
	return nil
}

// ApplyGraphs writes the graph definitions of the files to the cluster,
// with a server-side apply as UserFieldManager, and returns their
// names. The cluster's watch then serves the new definition and every
// instance is reconciled with it: the rollout the instance list follows
// (state.Rolled). Forced: the user confirmed taking the fields the file
// sets, as `kubectl apply --server-side --force-conflicts` would.
func (e *Engine) ApplyGraphs(ctx context.Context, paths ...string) ([]string, error) {
	if err := e.ApplyGraphRefused(paths...); err != nil {
		return nil, err
	}
	rgds, err := graph.Loader{MaxFileSize: e.o.MaxFileSize}.Load(paths...)
	if err != nil {
		return nil, err
	}
	if len(rgds) == 0 {
		return nil, fmt.Errorf("no ResourceGraphDefinition in %v", paths)
	}
	fromFile := map[string]string{}
	for _, g := range e.store.Snapshot().Graphs {
		if g.Source != "" && g.Source != "cluster" {
			fromFile[g.Name] = g.Source
		}
	}
	for _, rgd := range rgds {
		if src, ok := fromFile[rgd.Name]; ok {
			return nil, fmt.Errorf("not applying %s: this kroscope serves graph %s from --rgd %s, not from the cluster; restart it with the edited file", rgd.Source, rgd.Name, src)
		}
	}
	if e.wr.decision().ApplyGraph.Route == authority.Cluster {
		ctx = readonly.UserWrite(ctx) // the user's own write passes the closed gate
	}
	var names []string
	for _, rgd := range rgds {
		if err := applyGraph(ctx, e.cl.gated(), rgd); err != nil {
			return names, err
		}
		e.log.Info("graph applied at the user's request", "graph", rgd.Name, "source", rgd.Source)
		names = append(names, rgd.Name)
	}
	return names, nil
}

// applyGraph writes one definition through set: its apiVersion, kind,
// name, labels, annotations and spec, as the file has them.
func applyGraph(ctx context.Context, set *client.Set, rgd *graph.ResourceGraphDefinition) error {
	if rgd.OldKind {
		return fmt.Errorf("%s: kind %s is kro's name before v0.2; write it as %s to apply it", rgd.Source, graph.LegacyKind, graph.Kind)
	}
	// The spec is shared with rgd, never changed: the client only encodes it.
	u := &unstructured.Unstructured{Object: map[string]any{"spec": rgd.Object["spec"]}}
	u.SetAPIVersion(graph.Group + "/" + graph.Version)
	u.SetKind(graph.Kind)
	u.SetName(rgd.Name)
	src := &unstructured.Unstructured{Object: rgd.Object}
	u.SetLabels(src.GetLabels())
	u.SetAnnotations(src.GetAnnotations())
	_, err := set.Dynamic().Resource(graph.GroupVersionResource).Apply(ctx, rgd.Name, u,
		metav1.ApplyOptions{FieldManager: UserFieldManager, Force: true})
	switch {
	case apierrors.IsNotFound(err):
		return fmt.Errorf("applying %s: the cluster serves no ResourceGraphDefinitions (kro's CRDs are not installed): %w", rgd.Source, err)
	case err != nil:
		return fmt.Errorf("applying graph %s from %s: %w", rgd.Name, rgd.Source, err)
	}
	return nil
}
