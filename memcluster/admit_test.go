package memcluster

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"

	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/test/envtest"
	"github.com/kroscope/kroscope/test/prereq"
)

func TestMain(m *testing.M) { os.Exit(envtest.Run(m)) }

var (
	webappGVR = schema.GroupVersionResource{Group: "kro.run", Version: "v1alpha1", Resource: "webapps"}
	secretGVR = schema.GroupVersionResource{Version: "v1", Resource: "secrets"}
)

// webappCRD is the CRD kroscope generates for examples/webapp, whose
// schema says `replicas: integer | default=2 minimum=0 maximum=20`.
func webappCRD(t *testing.T) *unstructured.Unstructured {
	t.Helper()
	rgds, err := graph.LoadFiles(filepath.Join(prereq.RepoRoot(), "examples", "webapp", "rgd.yaml"))
	if err != nil || len(rgds) != 1 {
		t.Fatalf("loading the webapp example: %v", err)
	}
	g, err := graph.NewBuilder().Build(rgds[0])
	if err != nil {
		t.Fatal(err)
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(g.Instance.CRD)
	if err != nil {
		t.Fatal(err)
	}
	u := &unstructured.Unstructured{Object: obj}
	u.SetGroupVersionKind(apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition"))
	return u
}

// admitCase is one write and what the API server answers: the error's
// message ("" when accepted) and, when accepted, a field of the stored
// object.
type admitCase struct {
	name    string
	gvr     schema.GroupVersionResource
	obj     string // created in namespace default
	update  string // when set, the spec the created object is then updated to
	path    []string
	wantErr string
	// serverErr is the API server's error where it differs from the
	// demo's: for a built-in kind it decodes the object into its Go type
	// first, the demo checks it against the kind's OpenAPI schema.
	serverErr string
	want      any
}

var admitCases = []admitCase{
	{name: "a string where the schema says integer", gvr: webappGVR, obj: `{apiVersion: kro.run/v1alpha1, kind: WebApp, metadata: {name: many}, spec: {replicas: many}}`,
		wantErr: `WebApp.kro.run "many" is invalid: spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"`},
	{name: "over the schema's maximum", gvr: webappGVR, obj: `{apiVersion: kro.run/v1alpha1, kind: WebApp, metadata: {name: lots}, spec: {replicas: 25}}`,
		wantErr: `WebApp.kro.run "lots" is invalid: spec.replicas: Invalid value: 25: spec.replicas in body should be less than or equal to 20`},
	{name: "an edit to a string", gvr: webappGVR, obj: `{apiVersion: kro.run/v1alpha1, kind: WebApp, metadata: {name: edited}, spec: {replicas: 3}}`,
		update:  `{replicas: many}`,
		wantErr: `WebApp.kro.run "edited" is invalid: spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"`},
	{name: "defaults filled in", gvr: webappGVR, obj: `{apiVersion: kro.run/v1alpha1, kind: WebApp, metadata: {name: defaults}, spec: {}}`,
		path: []string{"spec", "replicas"}, want: int64(2)},
	{name: "an unknown field pruned", gvr: webappGVR, obj: `{apiVersion: kro.run/v1alpha1, kind: WebApp, metadata: {name: pruned}, spec: {bogus: 1, replicas: 1}}`,
		path: []string{"spec"}, want: map[string]any{"replicas": int64(1), "image": "nginx:1.27", "port": int64(8080),
			"greeting": "hello from kroscope", "ingress": map[string]any{"enabled": false, "host": ""}}},
	{name: "a bad name", gvr: webappGVR, obj: `{apiVersion: kro.run/v1alpha1, kind: WebApp, metadata: {name: Bad_Name}, spec: {}}`,
		wantErr: `WebApp.kro.run "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`},
	{name: "a built-in kind's field of the wrong type", gvr: deployGVR, obj: `{apiVersion: apps/v1, kind: Deployment, metadata: {name: many},
  spec: {replicas: many, selector: {matchLabels: {app: web}}, template: {metadata: {labels: {app: web}}, spec: {containers: [{name: web, image: nginx}]}}}}`,
		wantErr:   `Deployment.apps "many" is invalid: spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"`,
		serverErr: `Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32`},
	{name: "a built-in kind's required field missing", gvr: deployGVR, obj: `{apiVersion: apps/v1, kind: Deployment, metadata: {name: noselector},
  spec: {template: {metadata: {labels: {app: web}}, spec: {containers: [{name: web, image: nginx}]}}}}`,
		wantErr:   `Deployment.apps "noselector" is invalid: spec.selector: Required value`,
		serverErr: "Deployment.apps \"noselector\" is invalid: [spec.selector: Required value, spec.template.metadata.labels: Invalid value: {\"app\":\"web\"}: `selector` does not match template `labels`]"},
	{name: "a Secret's stringData folded into data", gvr: secretGVR, obj: `{apiVersion: v1, kind: Secret, metadata: {name: creds}, data: {a: YQ==, b: YQ==}, stringData: {b: bee, c: see}}`,
		path: []string{}, want: map[string]any{"a": "YQ==", "b": base64.StdEncoding.EncodeToString([]byte("bee")), "c": base64.StdEncoding.EncodeToString([]byte("see"))}},
}

// write makes the case's writes with d and returns the error and the
// stored object.
func (tc admitCase) write(t *testing.T, d dynamic.Interface) (*unstructured.Unstructured, error) {
	t.Helper()
	ctx := context.Background()
	r := d.Resource(tc.gvr).Namespace("default")
	got, err := r.Create(ctx, mustYAML(t, tc.obj), metav1.CreateOptions{})
	if err != nil || tc.update == "" {
		return got, err
	}
	got.Object["spec"] = mustYAML(t, tc.update).Object
	return r.Update(ctx, got, metav1.UpdateOptions{})
}

// check compares what d answered with the case.
func (tc admitCase) check(t *testing.T, who string, got *unstructured.Unstructured, err error) {
	t.Helper()
	if who != "demo" && tc.serverErr != "" {
		tc.wantErr = tc.serverErr
	}
	if tc.wantErr != "" {
		if err == nil || err.Error() != tc.wantErr {
			t.Errorf("%s: %s: got error %v\nwant %s", who, tc.name, err, tc.wantErr)
		}
		return
	}
	if err != nil {
		t.Errorf("%s: %s: %v", who, tc.name, err)
		return
	}
	var v any
	if len(tc.path) == 0 {
		v = got.Object["data"]
		if _, kept := got.Object["stringData"]; kept {
			t.Errorf("%s: %s: stringData kept: %v", who, tc.name, got.Object)
		}
	} else {
		v, _, _ = unstructured.NestedFieldNoCopy(got.Object, tc.path...)
	}
	if !reflect.DeepEqual(v, tc.want) {
		t.Errorf("%s: %s: %v = %#v, want %#v", who, tc.name, tc.path, v, tc.want)
	}
}

// webappAPIServer is a dynamic client of the test kube-apiserver, which
// serves the webapp example's CRD until the test ends.
func webappAPIServer(t *testing.T) dynamic.Interface {
	t.Helper()
	env := envtest.Start(t)
	d, err := dynamic.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	crds := d.Resource(crdGVR)
	crd := webappCRD(t)
	// Another test's CRD of the same name may still be on its way out:
	// created only once it is gone.
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := crds.Create(ctx, crd, metav1.CreateOptions{})
		if apierrors.IsAlreadyExists(err) || apierrors.IsConflict(err) {
			return false, nil // "object is being deleted"
		}
		return true, err
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = crds.Delete(context.Background(), crd.GetName(), metav1.DeleteOptions{}) })
	// Established is not enough: the handler serves the kind a moment later.
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := d.Resource(webappGVR).Namespace("default").List(ctx, metav1.ListOptions{})
		return err == nil, nil
	}); err != nil {
		t.Fatalf("the WebApp kind is not served: %v", err)
	}
	return d
}

// The demo cluster refuses, prunes, defaults and folds as the API server
// does (issue 27 item 7: it took `replicas: "many"` and kept stringData).
func TestDemoAdmitsAsTheAPIServer(t *testing.T) {
	c := New(Options{})
	if _, err := c.Dynamic().Resource(crdGVR).Create(context.Background(), webappCRD(t), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range admitCases {
		got, err := tc.write(t, c.Dynamic())
		tc.check(t, "demo", got, err)
	}
}

// The same writes on the real kube-apiserver give the same answers, word
// for word: the cases above are the API server's, not the demo's idea of it.
func TestAdmitCasesOnTheAPIServer(t *testing.T) {
	d := webappAPIServer(t)
	for _, tc := range admitCases {
		got, err := tc.write(t, d)
		tc.check(t, "kube-apiserver", got, err)
	}
}

// A built-in kind's status write is checked against its status schema.
func TestDemoChecksBuiltinStatusWrites(t *testing.T) {
	ctx := context.Background()
	d := New(Options{}).Dynamic().Resource(deployGVR).Namespace("default")
	got, err := d.Create(ctx, mustYAML(t, deployYAML), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got.Object["status"] = map[string]any{"readyReplicas": "two"}
	_, err = d.UpdateStatus(ctx, got, metav1.UpdateOptions{})
	const want = `Deployment.apps "web" is invalid: status.readyReplicas: Invalid value: "string": readyReplicas in body must be of type integer: "string"`
	if err == nil || err.Error() != want {
		t.Fatalf("status write: %v, want %s", err, want)
	}
	got.Object["status"] = map[string]any{"readyReplicas": int64(2)}
	if _, err := d.UpdateStatus(ctx, got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// A Secret whose data is not base64 is not refused with its value quoted:
// no value read from a Secret reaches a message.
func TestDemoQuotesNoSecretValue(t *testing.T) {
	_, err := New(Options{}).Dynamic().Resource(secretGVR).Namespace("default").Create(context.Background(),
		mustYAML(t, `{apiVersion: v1, kind: Secret, metadata: {name: s}, data: {token: "planted-secret-value!"}}`), metav1.CreateOptions{})
	if err != nil && strings.Contains(err.Error(), "planted-secret-value") {
		t.Fatalf("the error quotes the Secret's value: %v", err)
	}
}
