package graph

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/kroscope/kroscope/test/graphs"
)

var evalRGD = graphs.RGD("evaltest", "EvalTest", `spec:
  name: string
  replicas: integer | default=3
  tags: "[]string"
  labels: map[string]string
status:
  ready: ${deployment.status.availableReplicas}
  nested:
    url: http://${service.spec.clusterIP}:80
  name: ${schema.spec.name}`,
	graphs.Template("deployment", "apps/v1", "Deployment", "name: ${schema.spec.name}\nlabels: ${schema.spec.labels}", `spec:
  replicas: ${schema.spec.replicas}
  note: "tags: ${schema.spec.tags} replicas: ${schema.spec.replicas}"
  literal: ${"${NOT_CEL}"}`, "readyWhen:\n- ${deployment.spec.replicas == deployment.status.availableReplicas}"),
	graphs.Template("service", "v1", "Service", "name: ${deployment.metadata.name}-svc", "spec:\n  selector: ${deployment.spec.selector.matchLabels}",
		"includeWhen:\n- ${schema.spec.replicas > 1}"))

func instance() map[string]any {
	return map[string]any{
		"apiVersion": "kro.run/v1alpha1", "kind": "EvalTest",
		"metadata": map[string]any{"name": "demo", "namespace": "ns"},
		"spec": map[string]any{
			"name": "web", "replicas": int64(3),
			"tags":   []any{"production", "frontend"},
			"labels": map[string]any{"a": "b"},
		},
	}
}

func TestRenderStandaloneAndTemplates(t *testing.T) {
	g := buildOne(t, evalRGD)
	u, err := g.Resources["deployment"].Render(Vars{"schema": instance()})
	if err != nil {
		t.Fatal(err)
	}
	spec := u.Object["spec"].(map[string]any)
	if spec["replicas"] != int64(3) {
		t.Errorf("replicas = %#v, want int64 3", spec["replicas"])
	}
	if got, want := spec["note"], "tags: [production frontend] replicas: 3"; got != want {
		t.Errorf("note = %q, want %q", got, want)
	}
	if got := spec["literal"]; got != "${NOT_CEL}" {
		t.Errorf("literal = %q", got)
	}
	if !reflect.DeepEqual(u.GetLabels(), map[string]string{"a": "b"}) {
		t.Errorf("labels = %v", u.GetLabels())
	}
	if u.GetNamespace() != "" {
		t.Errorf("Render defaulted the namespace to %q", u.GetNamespace())
	}
	// The template itself is untouched.
	if g.Resources["deployment"].Template["spec"].(map[string]any)["replicas"] != "${schema.spec.replicas}" {
		t.Error("Render modified the template")
	}
}

func TestRenderPending(t *testing.T) {
	g := buildOne(t, evalRGD)
	svc := g.Resources["service"]
	_, err := svc.Render(Vars{"schema": instance()})
	if !IsDataPending(err) {
		t.Fatalf("missing deployment: err = %v, want data pending", err)
	}
	dep := map[string]any{"metadata": map[string]any{"name": "web"}, "spec": map[string]any{}}
	_, err = svc.Render(Vars{"schema": instance(), "deployment": dep})
	if !IsDataPending(err) {
		t.Fatalf("missing selector: err = %v, want data pending", err)
	}
	var ee *EvalError
	if !errors.As(err, &ee) || ee.Resource != "service" || ee.Path != "spec.selector" {
		t.Fatalf("err = %#v, want *EvalError for service spec.selector", err)
	}
	dep["spec"] = map[string]any{"selector": map[string]any{"matchLabels": map[string]any{"app": "web"}}}
	u, err := svc.Render(Vars{"schema": instance(), "deployment": dep})
	if err != nil {
		t.Fatal(err)
	}
	if u.GetName() != "web-svc" {
		t.Errorf("name = %q", u.GetName())
	}
}

func TestEvalErrorIsNotPending(t *testing.T) {
	g := buildOne(t, strings.Replace(evalRGD, "${schema.spec.replicas > 1}", "${int(schema.spec.name) > 1}", 1))
	_, err := g.Resources["service"].IsIncluded(Vars{"schema": instance()})
	if err == nil || IsDataPending(err) {
		t.Fatalf("err = %v, want a hard evaluation error", err)
	}
}

func TestIncludedAndReady(t *testing.T) {
	g := buildOne(t, evalRGD)
	ok, err := g.Resources["service"].IsIncluded(Vars{"schema": instance()})
	if err != nil || !ok {
		t.Fatalf("IsIncluded = %v, %v", ok, err)
	}
	inst := instance()
	inst["spec"].(map[string]any)["replicas"] = int64(1)
	ok, err = g.Resources["service"].IsIncluded(Vars{"schema": inst})
	if err != nil || ok {
		t.Fatalf("IsIncluded(replicas=1) = %v, %v", ok, err)
	}
	dep := g.Resources["deployment"]
	ready, reason, err := dep.IsReady(map[string]any{"spec": map[string]any{"replicas": int64(2)}})
	if err != nil || ready || !strings.Contains(reason, "pending") {
		t.Fatalf("no status: ready=%v reason=%q err=%v", ready, reason, err)
	}
	ready, reason, err = dep.IsReady(map[string]any{"spec": map[string]any{"replicas": int64(2)}, "status": map[string]any{"availableReplicas": int64(1)}})
	want := "readyWhen ${deployment.spec.replicas == deployment.status.availableReplicas} is false"
	if err != nil || ready || reason != want {
		t.Fatalf("ready=%v reason=%q err=%v, want reason %q", ready, reason, err, want)
	}
	ready, _, err = dep.IsReady(map[string]any{"spec": map[string]any{"replicas": int64(2)}, "status": map[string]any{"availableReplicas": int64(2)}})
	if err != nil || !ready {
		t.Fatalf("ready=%v err=%v", ready, err)
	}
	ready, _, err = g.Resources["service"].IsReady(map[string]any{})
	if err != nil || !ready {
		t.Fatalf("no readyWhen: ready=%v err=%v", ready, err)
	}
}

func TestRenderStatus(t *testing.T) {
	g := buildOne(t, evalRGD)
	st, err := g.RenderStatus(Vars{"schema": instance()})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(st, map[string]any{"name": "web"}) {
		t.Errorf("status = %v, want only name (others pending)", st)
	}
	st, err = g.RenderStatus(Vars{
		"schema":     instance(),
		"deployment": map[string]any{"status": map[string]any{"availableReplicas": int64(2)}},
		"service":    map[string]any{"spec": map[string]any{"clusterIP": "10.0.0.1"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"name": "web", "ready": int64(2), "nested": map[string]any{"url": "http://10.0.0.1:80"}}
	if !reflect.DeepEqual(st, want) {
		t.Errorf("status = %v, want %v", st, want)
	}
}
