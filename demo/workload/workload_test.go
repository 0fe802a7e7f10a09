package workload

import (
	"context"
	"reflect"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/kroscope/kroscope/memcluster"
)

func obj(t *testing.T, s string) *unstructured.Unstructured {
	t.Helper()
	m := map[string]any{}
	if err := yaml.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return &unstructured.Unstructured{Object: m}
}

func start(t *testing.T) (*memcluster.Cluster, context.Context) {
	t.Helper()
	c := memcluster.New(memcluster.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	sim := New(c.Dynamic(), Options{Step: 30 * time.Millisecond, JobDuration: 100 * time.Millisecond})
	done := make(chan error, 1)
	go func() { done <- sim.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("Run did not stop after cancel")
		}
	})
	return c, ctx
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

var (
	deployGVR = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	jobGVR    = schema.GroupVersionResource{Group: "batch", Version: "v1", Resource: "jobs"}
	svcGVR    = schema.GroupVersionResource{Version: "v1", Resource: "services"}
	ingGVR    = schema.GroupVersionResource{Group: "networking.k8s.io", Version: "v1", Resource: "ingresses"}
	pvcGVR    = schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}
)

func TestDeploymentRollsOutStepByStep(t *testing.T) {
	c, ctx := start(t)
	d := c.Dynamic().Resource(deployGVR).Namespace("default")
	w, err := d.Watch(ctx, metav1.ListOptions{ResourceVersion: "0"})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	if _, err := d.Create(ctx, obj(t, `{apiVersion: apps/v1, kind: Deployment, metadata: {name: web, namespace: default},
  spec: {replicas: 3, selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: web, image: nginx}]}}}}`), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	seen := map[int64]bool{}
	deadline := time.After(30 * time.Second)
	for !seen[3] {
		select {
		case e := <-w.ResultChan():
			u := e.Object.(*unstructured.Unstructured)
			r, _, _ := unstructured.NestedInt64(u.Object, "status", "readyReplicas")
			seen[r] = true
		case <-deadline:
			t.Fatalf("never reached 3 ready replicas; saw %v", seen)
		}
	}
	if !seen[1] || !seen[2] {
		t.Fatalf("ready replicas did not climb one at a time: saw %v", seen)
	}
	got, _ := d.Get(ctx, "web", metav1.GetOptions{})
	if !hasCondition(got, "Available", "True") {
		t.Fatalf("not Available: %v", got.Object["status"])
	}
	// A spec change starts a new rollout, observed through observedGeneration.
	if _, err := d.Patch(ctx, "web", types.MergePatchType, []byte(`{"spec":{"replicas":4}}`), metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "rollout of generation 2", func() bool {
		u, err := d.Get(ctx, "web", metav1.GetOptions{})
		if err != nil {
			return false
		}
		og, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
		a, _, _ := unstructured.NestedInt64(u.Object, "status", "availableReplicas")
		return og == 2 && a == 4
	})
}

func hasCondition(u *unstructured.Unstructured, typ, status string) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m := c.(map[string]any)
		if m["type"] == typ && m["status"] == status {
			return true
		}
	}
	return false
}

func TestJobServiceIngressPVC(t *testing.T) {
	c, ctx := start(t)
	create := func(gvr schema.GroupVersionResource, s string) {
		t.Helper()
		if _, err := c.Dynamic().Resource(gvr).Namespace("default").Create(ctx, obj(t, s), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	get := func(gvr schema.GroupVersionResource, name string) *unstructured.Unstructured {
		u, err := c.Dynamic().Resource(gvr).Namespace("default").Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	create(jobGVR, `{apiVersion: batch/v1, kind: Job, metadata: {name: migrate}, spec: {completions: 2, template: {spec: {containers: [{name: m, image: busybox}], restartPolicy: Never}}}}`)
	create(svcGVR, `{apiVersion: v1, kind: Service, metadata: {name: web}, spec: {ports: [{port: 80}]}}`)
	create(svcGVR, `{apiVersion: v1, kind: Service, metadata: {name: lb}, spec: {type: LoadBalancer}}`)
	create(ingGVR, `{apiVersion: networking.k8s.io/v1, kind: Ingress, metadata: {name: web}}`)
	create(pvcGVR, `{apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: data}, spec: {resources: {requests: {storage: 1Gi}}}}`)

	eventually(t, "job to complete", func() bool {
		u := get(jobGVR, "migrate")
		n, _, _ := unstructured.NestedInt64(u.Object, "status", "succeeded")
		_, done, _ := unstructured.NestedString(u.Object, "status", "completionTime")
		return n == 2 && done && hasCondition(u, "Complete", "True")
	})
	eventually(t, "cluster IP", func() bool {
		ip, _, _ := unstructured.NestedString(get(svcGVR, "web").Object, "spec", "clusterIP")
		return ip != ""
	})
	eventually(t, "load balancer hostname", func() bool {
		ing, _, _ := unstructured.NestedSlice(get(svcGVR, "lb").Object, "status", "loadBalancer", "ingress")
		return len(ing) == 1
	})
	eventually(t, "ingress address", func() bool {
		ing, _, _ := unstructured.NestedSlice(get(ingGVR, "web").Object, "status", "loadBalancer", "ingress")
		return len(ing) == 1
	})
	eventually(t, "PVC bound", func() bool {
		p, _, _ := unstructured.NestedString(get(pvcGVR, "data").Object, "status", "phase")
		return p == "Bound"
	})
	// Once everything has settled the simulator stops writing.
	settled := c.Writes()[FieldManager]
	time.Sleep(300 * time.Millisecond) // ten steps: enough for a looping simulator to show itself
	if now := c.Writes()[FieldManager]; now != settled {
		t.Fatalf("simulator kept writing after everything settled: %d -> %d writes", settled, now)
	}
}

// The cache keeps slim objects: every step computes from one what it
// computes from the full object, and the pod template is gone.
func TestSlimKeepsWhatStepsRead(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := New(nil, Options{Now: func() time.Time { return now }})
	for gvr, full := range map[schema.GroupVersionResource]string{
		deployGVR: `{apiVersion: apps/v1, kind: Deployment, metadata: {name: web, namespace: demo, generation: 2, managedFields: [{manager: x}]},
  spec: {replicas: 3, template: {spec: {containers: [{name: web, image: nginx}]}}},
  status: {observedGeneration: 2, updatedReplicas: 1, readyReplicas: 1, availableReplicas: 1, conditions: [{type: Available, status: "False", lastTransitionTime: "2026-01-01T00:00:00Z"}]}}`,
		{Group: "apps", Version: "v1", Resource: "statefulsets"}: `{apiVersion: apps/v1, kind: StatefulSet, metadata: {name: db, namespace: demo, generation: 1},
  spec: {replicas: 2, serviceName: db, template: {spec: {containers: [{name: db, image: pg}]}}}, status: {observedGeneration: 1, updatedReplicas: 1}}`,
		jobGVR: `{apiVersion: batch/v1, kind: Job, metadata: {name: report, namespace: demo}, spec: {completions: 2, template: {spec: {containers: [{name: r}]}}},
  status: {startTime: "2026-01-02T03:00:00Z"}}`,
		{Version: "v1", Resource: "services"}: `{apiVersion: v1, kind: Service, metadata: {name: api, namespace: demo}, spec: {type: LoadBalancer, ports: [{port: 80}]}}`,
		{Version: "v1", Resource: "persistentvolumeclaims"}: `{apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: data, namespace: demo},
  spec: {accessModes: [ReadWriteMany], resources: {requests: {storage: 5Gi}}}}`,
	} {
		u := obj(t, full)
		wantCh, wantMore, wantAfter := simulated[gvr](s, u.DeepCopy())
		slimmed, err := slim(u.DeepCopy())
		if err != nil {
			t.Fatal(err)
		}
		su := slimmed.(*unstructured.Unstructured)
		gotCh, gotMore, gotAfter := simulated[gvr](s, su)
		if !reflect.DeepEqual(gotCh, wantCh) || gotMore != wantMore || gotAfter != wantAfter {
			t.Errorf("%s: on the slim object the step gives %+v %v %v, on the full one %+v %v %v", gvr.Resource, gotCh, gotMore, gotAfter, wantCh, wantMore, wantAfter)
		}
		if _, found, _ := unstructured.NestedFieldNoCopy(su.Object, "spec", "template"); found {
			t.Errorf("%s: the slim object keeps the pod template", gvr.Resource)
		}
		if su.GetManagedFields() != nil {
			t.Errorf("%s: the slim object keeps managedFields", gvr.Resource)
		}
	}
}
