package kro

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/yaml"

	"github.com/kroscope/kroscope/engine"
	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/test/engrun"
	"github.com/kroscope/kroscope/test/envtest"
	"github.com/kroscope/kroscope/test/krocontroller"
)

var (
	gvrDeployment = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	gvrJob        = schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}
	gvrGraphRev   = schema.GroupVersionResource{Group: "internal.kro.run", Version: "v1alpha1", Resource: "graphrevisions"}
	gvrLease      = schema.GroupVersionResource{Group: "coordination.k8s.io", Version: "v1", Resource: "leases"}
)

// kroRig is the test API server with kro's CRDs, kro's controller running
// on it, and a namespace for the test's instances.
type kroRig struct {
	t   *testing.T
	env *envtest.Env
	dyn dynamic.Interface
	ext apiextensionsclient.Interface
	kro *krocontroller.Controller
	ns  string
}

// newKroRig skips when kro's binary or CRDs are missing, then installs
// kro's CRDs and starts kro's controller with leader election in the test
// namespace (so its Lease is visible); kroArgs are added to kro's flags.
// Cleanups registered after this run while kro is still up, so kro can
// remove its finalizers.
func newKroRig(t *testing.T, kroArgs ...string) *kroRig {
	t.Helper()
	r := newKroRigWithout(t)
	r.kro = krocontroller.New(t, r.env.Config, krocontroller.Options{LeaderElectionNamespace: r.ns, Args: kroArgs})
	r.kro.Start()
	return r
}

// newKroRigWithout is the test API server with kro's CRDs and a namespace,
// kro's controller not made yet (r.kro is nil).
func newKroRigWithout(t *testing.T) *kroRig {
	t.Helper()
	krocontroller.Require(t)
	crds := krocontroller.CRDs(t)
	env := envtest.Start(t)
	env.InstallCRDs(t, crds...)
	r := &kroRig{t: t, env: env, dyn: dynamic.NewForConfigOrDie(env.Config), ns: env.Namespace(t)}
	r.ext = apiextensionsclient.NewForConfigOrDie(env.Config)
	return r
}

// with returns the rig for a subtest: its helpers then fail t, not the
// parent test.
func (r *kroRig) with(t *testing.T) *kroRig {
	c := *r
	c.t = t
	return &c
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func readYAML(t testing.TB, path string) *unstructured.Unstructured {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]any{}
	if err := yaml.Unmarshal(data, &m); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return &unstructured.Unstructured{Object: m}
}

// storeGraph creates the ResourceGraphDefinition in path through kro's CRD;
// it is deleted (and waited for: kro removes its finalizer) at cleanup.
func (r *kroRig) storeGraph(path string) *unstructured.Unstructured {
	r.t.Helper()
	return r.storeGraphObject(path, readYAML(r.t, path))
}

// storeGraphObject stores u, read from path, through kro's CRD.
func (r *kroRig) storeGraphObject(path string, u *unstructured.Unstructured) *unstructured.Unstructured {
	r.t.Helper()
	out, err := r.dyn.Resource(graph.GroupVersionResource).Create(ctxT(r.t), u, metav1.CreateOptions{})
	if err != nil {
		r.t.Fatalf("storing %s through kro's CRD: %v", path, err)
	}
	name := out.GetName()
	r.t.Cleanup(func() { r.deleteAndWait(graph.GroupVersionResource, "", name, "") })
	return out
}

// deleteAndWait deletes an object and waits up to two minutes until it is
// gone (its finalizers removed by whoever set them). While it waits it
// stands in for the garbage collector in gcNamespace, if set.
func (r *kroRig) deleteAndWait(gvr schema.GroupVersionResource, ns, name, gcNamespace string) {
	r.t.Helper()
	ri := r.res(gvr, ns)
	ctx := context.Background()
	if err := ri.Delete(ctx, name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		r.t.Errorf("deleting %s %s: %v", gvr.Resource, name, err)
		return
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		u, err := ri.Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return
		}
		if gcNamespace != "" {
			r.fakeGC(gcNamespace)
		}
		if time.Now().After(deadline) {
			var fin []string
			if u != nil {
				fin = u.GetFinalizers()
			}
			r.t.Errorf("%s %s still there two minutes after deletion (finalizers %v, err %v)", gvr.Resource, name, fin, err)
			return
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func (r *kroRig) res(gvr schema.GroupVersionResource, ns string) dynamic.ResourceInterface {
	if ns == "" {
		return r.dyn.Resource(gvr)
	}
	return r.dyn.Resource(gvr).Namespace(ns)
}

func (r *kroRig) get(gvr schema.GroupVersionResource, ns, name string) *unstructured.Unstructured {
	r.t.Helper()
	u, err := r.res(gvr, ns).Get(ctxT(r.t), name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		r.t.Fatalf("get %s %s/%s: %v", gvr.Resource, ns, name, err)
	}
	return u
}

// poll calls cond every 200ms until it returns true, failing with the
// last description it returned after timeout.
func (r *kroRig) poll(timeout time.Duration, what string, cond func() (bool, string)) {
	r.t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		ok, desc := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			r.t.Fatalf("timed out after %s waiting for %s:\n%s", timeout, what, desc)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// waitGraphs waits until kro reports every graph Active, except those in
// rejects, which must instead have GraphAccepted=False with a message
// containing the given text. It returns the graphs as kro last wrote them.
func (r *kroRig) waitGraphs(names []string, rejects map[string]string) map[string]*unstructured.Unstructured {
	r.t.Helper()
	live, _ := r.waitGraphsOrRejected(names, rejects, false)
	return live
}

// waitGraphsOrRejected is waitGraphs that, with anyMayBeRejected, also
// accepts kro rejecting a graph not in rejects (GraphAccepted=False,
// InvalidResourceGraph): graphs read from a folder of someone else's
// examples may include ones kro itself refuses. Those are returned with
// kro's message.
func (r *kroRig) waitGraphsOrRejected(names []string, rejects map[string]string, anyMayBeRejected bool) (map[string]*unstructured.Unstructured, map[string]string) {
	r.t.Helper()
	out := map[string]*unstructured.Unstructured{}
	unpinned := map[string]string{}
	r.poll(3*time.Minute, "kro to accept (or reject) every graph", func() (bool, string) {
		var b strings.Builder
		ok := true
		for _, n := range names {
			u := r.get(graph.GroupVersionResource, "", n)
			out[n] = u
			st, _, _ := unstructured.NestedString(u.Object, "status", "state")
			accepted := envtest.Condition(u, "GraphAccepted")
			if want, rejected := rejects[n]; rejected {
				if accepted["status"] == "False" {
					if msg, _ := accepted["message"].(string); !strings.Contains(msg, want) || accepted["reason"] != "InvalidResourceGraph" || st != "Inactive" {
						r.t.Errorf("kro rejected graph %s (state %q) with %v/%v, want InvalidResourceGraph and a message containing %q", n, st, accepted["reason"], msg, want)
					}
					continue
				}
				ok = false
				fmt.Fprintf(&b, "  %s: state %q GraphAccepted %v, want it rejected (%s)\n", n, st, accepted, want)
				continue
			}
			if anyMayBeRejected && accepted["status"] == "False" && accepted["reason"] == "InvalidResourceGraph" {
				unpinned[n], _ = accepted["message"].(string)
				continue
			}
			if st != "Active" {
				ok = false
				fmt.Fprintf(&b, "  %s: state %q GraphAccepted %v\n", n, st, accepted)
			}
		}
		return ok, b.String()
	})
	return out, unpinned
}

// instanceCRD finds the CRD kro generated for a stored graph.
func (r *kroRig) instanceCRD(rgd *unstructured.Unstructured) *apiextensionsv1.CustomResourceDefinition {
	r.t.Helper()
	group, _, _ := unstructured.NestedString(rgd.Object, "spec", "schema", "group")
	kind, _, _ := unstructured.NestedString(rgd.Object, "spec", "schema", "kind")
	if group == "" {
		group = graph.Group
	}
	list, err := r.ext.ApiextensionsV1().CustomResourceDefinitions().List(ctxT(r.t), metav1.ListOptions{})
	if err != nil {
		r.t.Fatal(err)
	}
	for i := range list.Items {
		c := &list.Items[i]
		if c.Spec.Group == group && c.Spec.Names.Kind == kind {
			return c
		}
	}
	r.t.Fatalf("kro generated no CRD for graph %s (kind %s, group %s)", rgd.GetName(), kind, group)
	return nil
}

// fakeControllers writes the status kube-controller-manager would write on
// the namespace's Deployments and Jobs (the test server runs no
// controllers), as kro's own integration tests do. Objects whose status is
// already complete are left alone.
func (r *kroRig) fakeControllers(ns string) {
	r.t.Helper()
	for _, gvr := range []schema.GroupVersionResource{gvrDeployment, gvrJob} {
		list, err := r.dyn.Resource(gvr).Namespace(ns).List(ctxT(r.t), metav1.ListOptions{})
		if err != nil {
			r.t.Fatal(err)
		}
		for _, u := range list.Items {
			if status, ok := envtest.ControllerStatus(&u); ok {
				u.Object["status"] = status
				r.writeStatus(gvr, &u)
			}
		}
	}
}

func (r *kroRig) writeStatus(gvr schema.GroupVersionResource, u *unstructured.Unstructured) {
	r.t.Helper()
	_, err := r.dyn.Resource(gvr).Namespace(u.GetNamespace()).UpdateStatus(ctxT(r.t), u, metav1.UpdateOptions{FieldManager: "kube-controller-manager"})
	if err != nil && !apierrors.IsConflict(err) { // a conflict is retried by the caller's next poll
		r.t.Fatalf("writing %s %s/%s status: %v", gvr.Resource, u.GetNamespace(), u.GetName(), err)
	}
}

// fakeGC removes the orphan finalizer the API server puts on a deleted Job
// (batch/v1's default propagation is Orphan): on a cluster the garbage
// collector removes it, and the test server runs none.
func (r *kroRig) fakeGC(ns string) {
	r.t.Helper()
	jobs, err := r.dyn.Resource(gvrJob).Namespace(ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		r.t.Errorf("listing jobs: %v", err)
		return
	}
	for _, j := range jobs.Items {
		if j.GetDeletionTimestamp() == nil || !slices.Contains(j.GetFinalizers(), metav1.FinalizerOrphanDependents) {
			continue
		}
		j.SetFinalizers(slices.DeleteFunc(j.GetFinalizers(), func(f string) bool { return f == metav1.FinalizerOrphanDependents }))
		if _, err := r.dyn.Resource(gvrJob).Namespace(ns).Update(context.Background(), &j, metav1.UpdateOptions{}); err != nil && !apierrors.IsConflict(err) && !apierrors.IsNotFound(err) {
			r.t.Errorf("removing the orphan finalizer of job %s: %v", j.GetName(), err)
		}
	}
}

// startEngine runs a kroscope engine with the rig's admin identity on
// the rig's namespace; mod adjusts the options. Every request it sends is
// counted (engrun.Counter: its Lease's writes are writes too, a kroscope
// that takes its Lease beside a running kro writes).
func (r *kroRig) startEngine(mod func(*engine.Options)) *engrun.Run {
	r.t.Helper()
	return engrun.Start(r.t, r.engineConfig(60), mod)
}

// engineConfig is how the rig's engines run: on its namespace, quick
// requeues, the last logLines of their log shown when the test fails.
func (r *kroRig) engineConfig(logLines int) engrun.Config {
	return engrun.Config{Rest: r.env.Config, Namespace: r.ns, RequeueInterval: 2 * time.Second, LogLines: logLines, LogPrefix: "kroscope log: "}
}
