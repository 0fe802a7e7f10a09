package onewriter

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/yaml"

	"github.com/kroscope/kroscope/engine"
	"github.com/kroscope/kroscope/engine/krodetect"
	"github.com/kroscope/kroscope/test/engrun"
	"github.com/kroscope/kroscope/test/envtest"
	"github.com/kroscope/kroscope/test/graphs"
	"github.com/kroscope/kroscope/test/krocontroller"
	"github.com/kroscope/kroscope/test/krocrds"
)

var rgdGVR = schema.GroupVersionResource{Group: "kro.run", Version: "v1alpha1", Resource: "resourcegraphdefinitions"}

// cfgAs is the admin's config acting as user (seen so in the audit log).
func (r *rig) cfgAs(user string) *rest.Config {
	cfg := rest.CopyConfig(r.env.Config)
	cfg.Impersonate = rest.ImpersonationConfig{UserName: user, Groups: []string{"system:masters"}}
	return cfg
}

// kroscope reconciles 50 instances of a cluster graph and is in the
// middle of a change to every one of them when kro's real controller
// starts (with its Lease, as a plain process; then also with its
// Deployment present, as the Helm chart's Deployment would be). From kro's
// first write on a graph, an instance or a child, kroscope sends no write
// at all (counted by the API server), and the children end as kro makes
// them alone (the same instances, in a namespace kroscope does not serve).
func TestKroStartingWhileKroscopeReconciles(t *testing.T) {
	envtest.Start(t)
	for _, asDeployment := range []bool{false, true} {
		name := "plain process"
		if asDeployment {
			name = "with its Deployment"
		}
		t.Run(name, func(t *testing.T) { kroStartsWhileKroscopeWrites(t, asDeployment) })
	}
}

func kroStartsWhileKroscopeWrites(t *testing.T, asDeployment bool) {
	const n = 50
	r := newRig(t)
	krocontroller.Require(t)
	r.env.InstallCRDs(t, krocrds.All(t)...)
	kind := "KroStart"
	if asDeployment {
		kind = "KroStartDep"
	}
	graphName := strings.ToLower(kind)
	gvr := schema.GroupVersionResource{Group: "kro.run", Version: "v1alpha1", Resource: graphName + "s"}
	rgd := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(graphs.Chain(graphName, kind)), &rgd.Object); err != nil {
		t.Fatal(err)
	}
	if _, err := r.dyn.Resource(rgdGVR).Create(context.Background(), rgd, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.dyn.Resource(rgdGVR).Delete(context.Background(), graphName, metav1.DeleteOptions{}) })

	// kroscope serves the cluster's graph in the rig's namespace.
	kroscopeUser, kroUser := "kroscope-"+graphName, "kro-"+graphName
	run := engrun.Start(t, engrun.Config{Rest: r.cfgAs(kroscopeUser), Namespace: r.ns, RequeueInterval: 5 * time.Second, LogLines: 40, LogPrefix: "kroscope: "}, func(o *engine.Options) {
		o.WatchClusterRGDs = true
		o.DisableLease = false
		o.LeaseNamespace, o.LeaseName, o.Identity = r.ns, "kroscope", "kroscope-a"
	})
	eventually(t, 2*time.Minute, "the instance CRD served", func() bool {
		_, err := r.dyn.Resource(gvr).Namespace(r.ns).List(context.Background(), metav1.ListOptions{})
		return err == nil
	})
	r.createInstances(gvr, kind, "k", n)
	eventually(t, 3*time.Minute, "kroscope converging the instances", func() bool { return r.converged(gvr, n, "one") })

	// The same instances where only kro will reconcile them.
	alone := r.env.Namespace(t)
	ra := &rig{t: t, env: r.env, ns: alone, dir: r.dir, dyn: r.dyn}
	ra.createInstances(gvr, kind, "k", n)

	// Every instance changes, and kro starts while kroscope reconciles it.
	kroNs := r.ns + "-kro"
	if _, err := r.env.Kubernetes().CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: kroNs}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	r.setValue(gvr, "two")
	ra.setValue(gvr, "two")
	if asDeployment {
		r.kroDeployment(kroNs)
	}
	kro := krocontroller.New(t, r.cfgAs(kroUser), krocontroller.Options{LeaderElectionNamespace: kroNs})
	started := time.Now()
	kro.Start()
	eventually(t, 3*time.Minute, "kroscope observing kro", func() bool { return run.E.Snapshot().Mode.Kro != "" })
	t.Logf("kroscope observes kro %v after kro started: %s", time.Since(started).Round(time.Millisecond), run.E.Snapshot().Mode.Kro)
	eventually(t, 3*time.Minute, "kro converging both namespaces", func() bool {
		return r.convergedByKro(gvr, n, "two") && ra.convergedByKro(gvr, n, "two")
	})
	time.Sleep(3 * time.Second) // what kroscope had in flight has landed by now

	first := r.firstWrite(kroUser, started)
	after := r.writesBy(kroscopeUser, first.Received)
	for i, ev := range after {
		if i < 10 {
			t.Errorf("kroscope wrote after kro's first write: %s %s %s/%s (%d)", ev.Verb, ev.Resource, ev.Namespace, ev.Name, ev.Code)
		}
	}
	if len(after) > 0 {
		t.Fatalf("kroscope sent %d writes after kro's first write (%s %s/%s at %s)", len(after), first.Resource, first.Namespace, first.Name, first.Received.Format(time.RFC3339Nano))
	}
	t.Logf("kro's first write: %s %s %s/%s, %v after it started; kroscope's writes from then on: 0",
		first.Verb, first.Resource, first.Namespace, first.Name, first.Received.Sub(started).Round(time.Millisecond))
	got, want := r.childrenByInstance(false), ra.childrenByInstance(false)
	if d := lineDiff(got, want); d != "" {
		t.Errorf("the children kro left after kroscope differ from kro's alone (- after kroscope, + kro alone):\n%s", d)
	}
	// Known, and left to the reconciler's owner: kroscope puts an owner
	// reference to the instance on each child, kro v0.9.4 none, and kro's
	// applies leave kroscope's reference in place.
	if d := lineDiff(r.childrenByInstance(true), ra.childrenByInstance(true)); d != "" {
		t.Logf("owner references differ (kroscope's stays after kro takes over):\n%s", d)
	}
}

// kroDeployment creates the Deployment kro's Helm chart makes (no kubelet
// runs it: the process started beside it is kro).
func (r *rig) kroDeployment(ns string) {
	r.t.Helper()
	labels := map[string]string{"app.kubernetes.io/name": "kro", "app.kubernetes.io/part-of": "kro", "app.kubernetes.io/component": "controller"}
	sel := map[string]string{"app.kubernetes.io/name": "kro"}
	one := int32(1)
	_, err := r.env.Kubernetes().AppsV1().Deployments(ns).Create(context.Background(), &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "kro", Namespace: ns, Labels: labels},
		Spec: appsv1.DeploymentSpec{Replicas: &one, Selector: &metav1.LabelSelector{MatchLabels: sel},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{Containers: []corev1.Container{{Name: "kro", Image: "registry.k8s.io/kro/kro:" + krocontroller.BinaryVersion()}}}}},
	}, metav1.CreateOptions{})
	if err != nil {
		r.t.Fatal(err)
	}
	// Gone with the test: a kro Deployment that wants a replica is kro
	// running, to every kroscope the later tests start.
	r.t.Cleanup(func() {
		_ = r.env.Kubernetes().AppsV1().Deployments(ns).Delete(context.Background(), "kro", metav1.DeleteOptions{})
	})
}

// convergedByKro: every instance's status was last written by kro, says
// ACTIVE, and its first ConfigMap holds value.
func (r *rig) convergedByKro(gvr schema.GroupVersionResource, n int, value string) bool {
	if !r.converged(gvr, n, value) {
		return false
	}
	for _, in := range r.instances(gvr) {
		var kro, other time.Time
		for _, f := range in.GetManagedFields() {
			if f.Subresource != "status" || f.Time == nil {
				continue
			}
			if krodetect.KroManagers[f.Manager] {
				kro = maxT(kro, f.Time.Time)
			} else {
				other = maxT(other, f.Time.Time)
			}
		}
		if kro.IsZero() || kro.Before(other) {
			return false
		}
	}
	return true
}

func maxT(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// firstWrite is user's first write but its Lease and Events: kro's first
// write on what it reconciles.
func (r *rig) firstWrite(user string, since time.Time) envtest.AuditEvent {
	r.t.Helper()
	for _, ev := range r.env.AuditWrites(r.t) {
		if ev.User == user && !ev.Received.Before(since) && ev.Resource != "leases" && ev.Resource != "events" && !strings.HasSuffix(ev.Resource, "reviews") {
			return ev
		}
	}
	r.t.Fatalf("the audit log has no write by %s", user)
	return envtest.AuditEvent{}
}

// childrenByInstance describes the graph's ConfigMaps in the rig's
// namespace: name, data, labels and owners, the namespace, the UIDs and
// the applyset IDs (derived from the instance's UID) written out, so that
// two namespaces compare.
func (r *rig) childrenByInstance(withOwners bool) string {
	r.t.Helper()
	cms, err := r.env.Kubernetes().CoreV1().ConfigMaps(r.ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		r.t.Fatal(err)
	}
	var lines []string
	for _, cm := range cms.Items {
		if !strings.HasPrefix(cm.Name, "k-") {
			continue
		}
		labels := map[string]string{}
		for k, v := range cm.Labels {
			switch {
			case strings.HasSuffix(k, "-id"):
				v = "<uid>"
			case k == "applyset.kubernetes.io/part-of":
				v = "<the instance's applyset>" // a hash of the instance's identity
			}
			labels[k] = strings.ReplaceAll(v, r.ns, "<ns>")
		}
		var owners []string
		for _, o := range cm.OwnerReferences {
			if withOwners {
				owners = append(owners, o.Kind+"/"+o.Name)
			}
		}
		var ls []string
		for _, k := range slices.Sorted(maps.Keys(labels)) {
			ls = append(ls, k+"="+labels[k])
		}
		lines = append(lines, fmt.Sprintf("%s data=%v labels=%s owners=%v", cm.Name, cm.Data, strings.Join(ls, ","), owners))
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n")
}

// lineDiff lists the lines only in a (-) and only in b (+), ten at most.
func lineDiff(a, b string) string {
	in := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, l := range strings.Split(s, "\n") {
			m[l] = true
		}
		return m
	}
	ma, mb := in(a), in(b)
	var out []string
	for _, l := range strings.Split(a, "\n") {
		if !mb[l] {
			out = append(out, "- "+l)
		}
	}
	for _, l := range strings.Split(b, "\n") {
		if !ma[l] {
			out = append(out, "+ "+l)
		}
	}
	if len(out) > 6 {
		n := len(out)
		out = append(out[:3], out[n-3:]...)
		out = append(out, fmt.Sprintf("... %d lines in all", n))
	}
	return strings.Join(out, "\n")
}
