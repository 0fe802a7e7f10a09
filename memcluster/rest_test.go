package memcluster

import (
	"context"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

// The typed clientset is client-go's own over the cluster's store: reads,
// writes, a patch, a delete and the errors come back as the API server
// sends them, and the same objects are the dynamic client's.
func TestTypedClientsetIsTheClusters(t *testing.T) {
	ctx := context.Background()
	c := New(Options{})
	leases := c.ClientSet().Kubernetes().CoordinationV1().Leases("default")
	if _, err := leases.Get(ctx, "kroscope", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Fatalf("Get of a missing Lease: %v, want NotFound", err)
	}
	l := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "kroscope"}, Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To("a")}}
	got, err := leases.Create(ctx, l, metav1.CreateOptions{})
	if err != nil || got.UID == "" || got.Namespace != "default" {
		t.Fatalf("Create: %v %+v", err, got)
	}
	if _, err := leases.Create(ctx, l, metav1.CreateOptions{}); !apierrors.IsAlreadyExists(err) {
		t.Errorf("second Create: %v, want AlreadyExists", err)
	}
	got.Spec.HolderIdentity = ptr.To("b")
	if got, err = leases.Update(ctx, got, metav1.UpdateOptions{}); err != nil || *got.Spec.HolderIdentity != "b" {
		t.Fatalf("Update: %v %+v", err, got)
	}
	stale := got.DeepCopy()
	stale.ResourceVersion = "1"
	if _, err := leases.Update(ctx, stale, metav1.UpdateOptions{}); !apierrors.IsConflict(err) {
		t.Errorf("Update at a stale resourceVersion: %v, want Conflict", err)
	}
	if _, err := leases.Patch(ctx, "kroscope", types.MergePatchType, []byte(`{"spec":{"holderIdentity":"c"}}`), metav1.PatchOptions{}); err != nil {
		t.Fatalf("merge patch: %v", err)
	}
	u, err := c.Dynamic().Resource(leaseGVR).Namespace("default").Get(ctx, "kroscope", metav1.GetOptions{})
	if err != nil || u.Object["spec"].(map[string]any)["holderIdentity"] != "c" {
		t.Fatalf("the dynamic client reads %v %v", err, u)
	}
	list, err := leases.List(ctx, metav1.ListOptions{})
	if err != nil || len(list.Items) != 1 {
		t.Fatalf("List: %v %+v", err, list)
	}
	if err := leases.Delete(ctx, "kroscope", metav1.DeleteOptions{}); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if err := leases.Delete(ctx, "kroscope", metav1.DeleteOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("second Delete: %v, want NotFound", err)
	}
}

var leaseGVR = coordinationv1.SchemeGroupVersion.WithResource("leases")

// An informer over the typed clientset (as kro detection's on Deployments)
// lists and then watches: a Deployment created later reaches it.
func TestTypedInformerWatches(t *testing.T) {
	c := New(Options{Namespaces: []string{"team"}})
	kube := c.ClientSet().Kubernetes()
	f := informers.NewSharedInformerFactory(kube, 0)
	inf := f.Apps().V1().Deployments().Informer()
	added := make(chan string, 4)
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(o any) {
		added <- o.(*appsv1.Deployment).Name
	}}); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	defer close(stop)
	f.Start(stop)
	if !cache.WaitForCacheSync(stop, inf.HasSynced) {
		t.Fatal("the informer never synced")
	}
	d := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: "kro", Namespace: "team"},
		Spec: appsv1.DeploymentSpec{
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "kro"}},
		},
	}
	d.Spec.Template.Labels = map[string]string{"app": "kro"}
	d.Spec.Template.Spec.Containers = []corev1.Container{{Name: "kro", Image: "kro"}}
	if _, err := kube.AppsV1().Deployments("team").Create(context.Background(), d, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	select {
	case name := <-added:
		if name != "kro" {
			t.Errorf("informer saw %q", name)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the informer never saw the Deployment created after it synced")
	}
}
