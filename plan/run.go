package plan

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/go-logr/logr"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/kroscope/kroscope/reconciler"
	"github.com/kroscope/kroscope/reconciler/client"
	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/reconciler/metadata"
)

// Options say what to plan against.
type Options struct {
	// Set is the user's connection: reads go through it, and dry runs as
	// this user (a user who may not write a kind gets a client-side diff).
	Set *client.Set
	// Namespace limits the instances ("" every namespace).
	Namespace string
	// Selector is a label selector over the instances.
	Selector string
	// Instances, when set, are the only instances planned, as edited
	// (from -i files): the graph's kind only.
	Instances []*unstructured.Unstructured
	// FileNamespace is where an instance of Instances that names no
	// namespace is (kubectl's rule: -n, else the context's namespace).
	FileNamespace string
	// Workers plan this many instances at once (default 32).
	Workers int
}

// Graph plans g over its instances: what applying g (and then letting the
// reconciler run) would do to each.
func Graph(ctx context.Context, g *graph.Graph, o Options) (*Plan, error) {
	if g.Instance.CRD == nil {
		return nil, fmt.Errorf("graph %s has no instance CRD", g.Name)
	}
	p := &Plan{Graph: g.Name, Kind: g.Instance.GVK.Kind}
	sch, served, err := compareCRD(ctx, o.Set.Dynamic(), g.Instance.CRD)
	if err != nil {
		return nil, err
	}
	p.Schema = sch
	newSchema, err := newInstanceSchema(g.Instance.CRD)
	if err != nil {
		return nil, err
	}
	insts, err := instances(ctx, g, o, served)
	if err != nil {
		return nil, err
	}
	p.Instances = make([]Instance, len(insts))
	pre := prefetchChildren(ctx, g, o.Set, o.Namespace)
	workers := o.Workers
	if workers <= 0 {
		workers = 32
	}
	sem := make(chan struct{}, workers)
	var wg sync.WaitGroup
	for i, in := range insts {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			p.Instances[i] = safePlanInstance(ctx, g, o.Set, newSchema, pre, in)
		})
	}
	wg.Wait()
	return p, ctx.Err()
}

// target is one instance to plan: as stored, or as a file edits it.
type target struct {
	obj *unstructured.Unstructured
	// fromFile: the instance comes from -i; the served CRD validates it.
	fromFile bool
}

// instances are the graph's instances to plan: the ones named by files,
// or every stored one the namespace and selector select.
func instances(ctx context.Context, g *graph.Graph, o Options, served bool) ([]target, error) {
	var out []target
	if o.Instances != nil {
		for _, u := range o.Instances {
			if u.GroupVersionKind().GroupKind() != g.Instance.GVK.GroupKind() {
				continue
			}
			if u.GetNamespace() == "" && g.Instance.CRD.Spec.Scope != apiextensionsv1.ClusterScoped {
				u = u.DeepCopy()
				u.SetNamespace(o.FileNamespace)
			}
			out = append(out, target{obj: u, fromFile: true})
		}
		return out, nil
	}
	if !served {
		return nil, nil
	}
	list, err := o.Set.Dynamic().Resource(g.Instance.GVR).Namespace(o.Namespace).List(ctx, metav1.ListOptions{LabelSelector: o.Selector})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("listing %s: %w", g.Instance.GVR.Resource, err)
	}
	for i := range list.Items {
		if list.Items[i].GetDeletionTimestamp() == nil {
			out = append(out, target{obj: &list.Items[i]})
		}
	}
	return out, nil
}

// safePlanInstance is planInstance that turns a panic (an instance is
// untrusted input) into that instance's failure: one bad instance never
// stops the plan of the others.
func safePlanInstance(ctx context.Context, g *graph.Graph, set *client.Set, sch *instanceSchema, pre prefetch, t target) (in Instance) {
	defer func() {
		if v := recover(); v != nil {
			in = Instance{Namespace: t.obj.GetNamespace(), Name: t.obj.GetName(), Objects: []Object{{
				Kind: g.Instance.GVK.Kind, Namespace: t.obj.GetNamespace(), Name: t.obj.GetName(), Op: OpFail,
				Message: fmt.Sprintf("internal error while planning: %v", v)}}}
		}
	}()
	return planInstance(ctx, g, set, sch, pre, t)
}

// planInstance runs the reconciler once for the instance over a recorder,
// and turns what it would have written into the instance's plan.
func planInstance(ctx context.Context, g *graph.Graph, set *client.Set, sch *instanceSchema, pre prefetch, t target) Instance {
	in := Instance{Namespace: t.obj.GetNamespace(), Name: t.obj.GetName()}
	rec := newRecorder(set.Dynamic())
	inst, fail := prepare(ctx, g, set, sch, t)
	if fail != nil {
		in.Objects = append(in.Objects, *fail)
		if inst == nil {
			return in
		}
	}
	rec.overrides[objKey{g.Instance.GVR, inst.GetNamespace(), inst.GetName()}] = inst
	ctl := reconciler.NewController(logr.Discard(), reconciler.ReconcileConfig{}, g.Instance.GVR, g, recordingSet(set, rec),
		g.DefaultServiceAccounts, metadata.NewGraphLabeler(g.Name, g.UID))
	ctl.SetOptions(reconciler.Options{Reader: recCache{r: rec, pre: pre}})
	var obs reconciler.Observation
	ctl.SetObserver(func(o reconciler.Observation) { obs = o })
	req := ctrl.Request{NamespacedName: types.NamespacedName{Namespace: inst.GetNamespace(), Name: inst.GetName()}}
	// Its error only says when to requeue; the observation holds what
	// the reconcile concluded.
	_ = ctl.Reconcile(ctx, req)
	ctl.Close()
	in.Objects = append(in.Objects, objects(g, rec, obs)...)
	return in
}

// prepare is the instance the reconciler will read: a stored one with the
// new schema's defaults (and a failure when the new schema refuses it);
// one from a file as the API server's dry run of the edit returns it.
func prepare(ctx context.Context, g *graph.Graph, set *client.Set, sch *instanceSchema, t target) (*unstructured.Unstructured, *Object) {
	kind := g.Instance.GVK.Kind
	if t.fromFile {
		u, err := dryRunInstance(ctx, g, set, sch, t.obj)
		if err != nil {
			return nil, &Object{Kind: kind, Namespace: t.obj.GetNamespace(), Name: t.obj.GetName(), Op: OpFail, Message: err.Error()}
		}
		return u, nil
	}
	obj, why := sch.apply(t.obj.Object)
	u := &unstructured.Unstructured{Object: obj}
	if why == "" {
		return u, nil
	}
	return u, &Object{Kind: kind, Namespace: u.GetNamespace(), Name: u.GetName(), Op: OpFail,
		Message: "the new schema refuses the stored instance: " + why}
}

// dryRunInstance sends the edited instance as a dry run (an update of the
// stored one, or a create), so the served CRD defaults and validates it;
// when the kind is not served yet the new schema does, here.
func dryRunInstance(ctx context.Context, g *graph.Graph, set *client.Set, sch *instanceSchema, edit *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	ns := edit.GetNamespace()
	ri := set.Dynamic().Resource(g.Instance.GVR).Namespace(ns)
	cur, err := ri.Get(ctx, edit.GetName(), metav1.GetOptions{})
	switch {
	case err == nil:
		next := cur.DeepCopy()
		next.Object["spec"] = edit.Object["spec"]
		next.SetLabels(mergeStrings(cur.GetLabels(), edit.GetLabels()))
		next.SetAnnotations(mergeStrings(cur.GetAnnotations(), edit.GetAnnotations()))
		return ri.Update(ctx, next, metav1.UpdateOptions{DryRun: dryRun, FieldManager: "kubectl-edit"})
	case apierrors.IsNotFound(err) && ns == "":
		return nil, errors.New("a new namespaced instance needs metadata.namespace in its file (or -n)")
	case apierrors.IsNotFound(err):
		u, err := ri.Create(ctx, edit, metav1.CreateOptions{DryRun: dryRun, FieldManager: "kubectl-client-side-apply"})
		if err != nil && isNotServed(err) {
			return newKindInstance(sch, edit)
		}
		return u, err
	}
	if isNotServed(err) {
		return newKindInstance(sch, edit)
	}
	return nil, err
}

// isNotServed reports whether err says the instance kind does not exist
// in the cluster yet (the graph is new).
func isNotServed(err error) bool {
	var se apierrors.APIStatus
	return errors.As(err, &se) && apierrors.IsNotFound(err) && se.Status().Details != nil && se.Status().Details.Name == ""
}

// newKindInstance is an instance of a kind the cluster does not serve
// yet, defaulted and validated by the new schema, with a stand-in UID.
func newKindInstance(sch *instanceSchema, edit *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	obj, why := sch.apply(edit.Object)
	if why != "" {
		return nil, errors.New("the schema refuses the instance: " + why)
	}
	u := &unstructured.Unstructured{Object: obj}
	u.SetUID(types.UID("plan-" + u.GetName()))
	return u, nil
}

func mergeStrings(a, b map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		out[k] = v
	}
	return out
}

// recordingSet is set with its dynamic client replaced by rec, for the
// reconciler: no Events (they are writes), impersonation through rec too.
func recordingSet(set *client.Set, rec *recorder) *client.Set {
	return client.NewSetFromClients(client.Clients{
		Dynamic:   rec,
		Discovery: set.Discovery(),
		Mapper:    set.RESTMapper(),
		Impersonate: func(user string) (*client.Set, error) {
			as, err := set.WithImpersonation(user)
			if err != nil {
				return nil, err
			}
			return recordingSet(as, &recorder{inner: as.Dynamic(), recState: rec.recState}), nil
		},
	})
}
