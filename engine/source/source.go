// Package source finds the ResourceGraphDefinitions kroscope serves: from
// files and folders (--rgd), and from the cluster, where kro.run/v1alpha1
// ResourceGraphDefinitions are watched so that added, changed and removed
// definitions start, restart and stop their controllers.
package source

import (
	"context"
	"errors"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"

	"github.com/kroscope/kroscope/engine/watch"
	"github.com/kroscope/kroscope/reconciler/confine"
	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/reconciler/graph/crd/compat"
)

// ClusterSource is the Source of definitions read from the cluster.
const ClusterSource = "cluster"

// Update is a definition that appeared or changed (RGD set), could not be
// read (Err set), or was removed.
type Update struct {
	// Name of the definition; for a file that could not be read, the file.
	Name   string
	Source string
	RGD    *graph.ResourceGraphDefinition
	Err    error
	// Removed is true when a cluster definition was deleted.
	Removed bool
	// Object is the cluster object as read (nil for files): its metadata
	// (annotations, generation, UID) and status.
	Object *unstructured.Unstructured
}

// AllowBreakingChanges reports whether the definition lets its instance
// CRD change in ways that break stored instances (kro's annotation).
func (u Update) AllowBreakingChanges() bool {
	return u.Object != nil && u.Object.GetAnnotations()[compat.AllowAnnotation] == "true"
}

// AnyNamespace reports whether the definition lets its namespaced
// instances' children land outside the instance's namespace, or be
// cluster-scoped (confine.ScopeAnnotation: Cluster).
func (u Update) AnyNamespace() bool {
	switch {
	case u.Object != nil:
		return scopeOf(u.Object.GetAnnotations()) == confine.ScopeCluster
	case u.RGD != nil:
		ann, _, _ := unstructured.NestedStringMap(u.RGD.Object, "metadata", "annotations")
		return scopeOf(ann) == confine.ScopeCluster
	}
	return false
}

func scopeOf(ann map[string]string) string { return ann[confine.ScopeAnnotation] }

// Files reads every definition in paths with l. A file that cannot be
// read, or a definition that is malformed, becomes an Update with Err; the
// others are returned as usual.
func Files(l graph.Loader, paths []string) []Update {
	if len(paths) == 0 {
		return nil
	}
	rgds, err := l.Load(paths...)
	var out []Update
	for _, r := range rgds {
		out = append(out, Update{Name: r.Name, Source: r.Source, RGD: r})
	}
	for _, e := range split(err) {
		name := "--rgd"
		var ge *graph.Error
		if errors.As(e, &ge) && ge.RGD != "" {
			name = ge.RGD
		}
		out = append(out, Update{Name: name, Source: "file", Err: e})
	}
	return out
}

// split flattens joined errors (errors.Join, graph.Errors keeps per-definition
// problems together, so it is not split further).
func split(err error) []error {
	if err == nil {
		return nil
	}
	if _, ok := err.(graph.Errors); ok {
		return []error{err}
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, split(e)...)
		}
		return out
	}
	return []error{err}
}

// ClusterHasRGDs reports whether the cluster serves kro.run/v1alpha1
// ResourceGraphDefinitions (kro's CRD is installed).
func ClusterHasRGDs(d discovery.DiscoveryInterface) (bool, error) {
	if d == nil {
		return false, nil
	}
	list, err := d.ServerResourcesForGroupVersion(graph.Group + "/" + graph.Version)
	if apierrors.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("discovering %s/%s: %w", graph.Group, graph.Version, err)
	}
	for _, r := range list.APIResources {
		if r.Name == graph.ResourcePlural {
			return true, nil
		}
	}
	return false, nil
}

// Cluster watches the cluster's definitions until ctx is done and passes
// each change to fn (from one goroutine, in order). Only changes of the
// generation (the spec), or of the allow-breaking-changes or the children
// scope annotation, count as changes; every other update (status, metadata) goes to onStatus when
// it is set. It returns once the first list was delivered, or with ctx's
// error.
func Cluster(ctx context.Context, dyn dynamic.Interface, group *watch.Group, fn func(Update), onStatus func(*unstructured.Unstructured)) error {
	inf := dynamicinformer.NewFilteredDynamicInformer(dyn, graph.GroupVersionResource, "", 0, cache.Indexers{}, nil).Informer()
	mon := group.Monitored(inf, graph.ResourcePlural+"."+graph.Group)
	read := func(obj any) Update {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return Update{Source: ClusterSource, Err: fmt.Errorf("unexpected object %T", obj)}
		}
		rgd, err := graph.FromUnstructured(u)
		if err != nil {
			return Update{Name: u.GetName(), Source: ClusterSource, Err: err, Object: u}
		}
		if rgd.Source == "" {
			rgd.Source = ClusterSource
		}
		return Update{Name: u.GetName(), Source: ClusterSource, RGD: rgd, Object: u}
	}
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) { mon.Event("add"); fn(read(obj)) },
		UpdateFunc: func(oldObj, obj any) {
			mon.Event("update")
			o, ok1 := oldObj.(*unstructured.Unstructured)
			n, ok2 := obj.(*unstructured.Unstructured)
			allow := func(u *unstructured.Unstructured) string {
				a := u.GetAnnotations()
				return a[compat.AllowAnnotation] + "/" + scopeOf(a)
			}
			if ok1 && ok2 && o.GetGeneration() == n.GetGeneration() && allow(o) == allow(n) {
				if onStatus != nil {
					onStatus(n)
				}
				return
			}
			fn(read(obj))
		},
		DeleteFunc: func(obj any) {
			mon.Event("delete")
			if m := watch.MetaOf(obj); m != nil {
				fn(Update{Name: m.GetName(), Source: ClusterSource, Removed: true})
			}
		},
	})
	if err != nil {
		return err
	}
	go mon.Run(ctx, time.Second)
	// Synced, not forbidden: a graph source that cannot list says so.
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) || !mon.WaitForSync(ctx) {
		return ctx.Err()
	}
	return nil
}
