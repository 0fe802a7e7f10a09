package client

import (
	"fmt"
	"reflect"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// jsonInfo is the JSON serializer of a negotiated serializer.
func jsonInfo(t testing.TB, n runtime.NegotiatedSerializer) runtime.SerializerInfo {
	for _, in := range n.SupportedMediaTypes() {
		if in.MediaType == runtime.ContentTypeJSON {
			return in
		}
	}
	t.Fatal("no JSON serializer")
	return runtime.SerializerInfo{}
}

// TestOnePassDecodesAsClientGo: for every kind of answer, the one-pass
// decoder returns what client-go's dynamic serializer returns, errors
// included.
func TestOnePassDecodesAsClientGo(t *testing.T) {
	theirs := jsonInfo(t, dynamic.ConfigFor(&rest.Config{}).NegotiatedSerializer)
	ours := jsonInfo(t, newOnePass(dynamic.ConfigFor(&rest.Config{}).NegotiatedSerializer))
	cm := `{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","resourceVersion":"12","generation":3,"managedFields":[{"manager":"kroscope","fieldsV1":{"f:data":{}}}]},"data":{"k":"v"}}`
	cr := `{"apiVersion":"kro.run/v1alpha1","kind":"WebApp","metadata":{"name":"x"},"spec":{"replicas":3,"ratio":0.5,"big":9007199254740993,"list":[1,"two",null,true,{"a":[]}],"empty":{}}}`
	cases := []struct {
		name  string
		data  string
		into  func() runtime.Object
		typed bool // client-go's answer is a typed object: ours must be too
	}{
		{"configmap", cm, nil, false},
		{"configmap into Unstructured", cm, func() runtime.Object { return &unstructured.Unstructured{} }, false},
		{"custom resource, numbers kept", cr, nil, false},
		{"custom resource into Unstructured", cr, func() runtime.Object { return &unstructured.Unstructured{} }, false},
		{"Status", `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"nope","reason":"Conflict","code":409}`, nil, true},
		{"Status into Unstructured", `{"kind":"Status","apiVersion":"v1","status":"Failure","code":409}`, func() runtime.Object { return &unstructured.Unstructured{} }, false},
		{"list", `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"5"},"items":[{"metadata":{"name":"a"}}]}`, nil, false},
		{"list into UnstructuredList", `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{},"items":[{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a"}}]}`, func() runtime.Object { return &unstructured.UnstructuredList{} }, false},
		{"no kind", `{"apiVersion":"v1","metadata":{"name":"a"}}`, nil, false},
		{"no kind into Unstructured", `{"apiVersion":"v1","metadata":{"name":"a"}}`, func() runtime.Object { return &unstructured.Unstructured{} }, false},
		{"no apiVersion", `{"kind":"ConfigMap","metadata":{"name":"a"}}`, nil, false},
		{"not JSON", `{"kind":`, nil, false},
		{"null", `null`, nil, false},
		{"an array", `[1,2]`, func() runtime.Object { return &unstructured.Unstructured{} }, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var i1, i2 runtime.Object
			if c.into != nil {
				i1, i2 = c.into(), c.into()
			}
			want, wantGVK, wantErr := theirs.Serializer.Decode([]byte(c.data), nil, i1)
			got, gotGVK, gotErr := ours.Serializer.Decode([]byte(c.data), nil, i2)
			if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
				t.Fatalf("error %v, client-go's %v", gotErr, wantErr)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("decoded %#v\nclient-go's %#v", got, want)
			}
			if wantErr == nil && !reflect.DeepEqual(gotGVK, wantGVK) {
				t.Errorf("kind %v, client-go's %v", gotGVK, wantGVK)
			}
			if _, isU := got.(*unstructured.Unstructured); c.typed && isU {
				t.Errorf("decoded a typed kind as Unstructured")
			}
		})
	}
}

// TestOnePassDecodesWatchEvents: a watch event's envelope and its object,
// as client-go's stream decoder and dynamic serializer decode them.
func TestOnePassDecodesWatchEvents(t *testing.T) {
	theirs := jsonInfo(t, dynamic.ConfigFor(&rest.Config{}).NegotiatedSerializer)
	ours := jsonInfo(t, newOnePass(dynamic.ConfigFor(&rest.Config{}).NegotiatedSerializer))
	for _, data := range []string{
		`{"type":"MODIFIED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","resourceVersion":"7"},"data":{"n":"1"}}}`,
		`{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure","message":"too old resource version","reason":"Expired","code":410}}`,
		`{"type":"BOOKMARK","object":{"kind":"WebApp","apiVersion":"kro.run/v1alpha1","metadata":{"resourceVersion":"9","annotations":{"k8s.io/initial-events-end":"true"}}}}`,
	} {
		var want, got metav1.WatchEvent
		if _, _, err := theirs.StreamSerializer.Serializer.Decode([]byte(data), nil, &want); err != nil {
			t.Fatal(err)
		}
		if _, _, err := ours.StreamSerializer.Serializer.Decode([]byte(data), nil, &got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("envelope %#v\nclient-go's %#v", got, want)
		}
		wantObj, err1 := runtime.Decode(theirs.Serializer, want.Object.Raw)
		gotObj, err2 := runtime.Decode(ours.Serializer, got.Object.Raw)
		if fmt.Sprint(err1) != fmt.Sprint(err2) || !reflect.DeepEqual(gotObj, wantObj) {
			t.Fatalf("object %#v (%v)\nclient-go's %#v (%v)", gotObj, err2, wantObj, err1)
		}
	}
}

// BenchmarkDecodeAnswer: an apply's answer (a ConfigMap with its
// managedFields), decoded by client-go's dynamic serializer and by the
// one-pass decoder.
func BenchmarkDecodeAnswer(b *testing.B) {
	data := []byte(`{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"i0000-a-b","namespace":"bench","uid":"6c1e6a7e-1b7e-4f0e-9b9a-2f6f2d1c9e11","resourceVersion":"1234","creationTimestamp":"2026-12-02T09:35:56Z","labels":{"app.kubernetes.io/managed-by":"kroscope","applyset.kubernetes.io/part-of":"applyset-eFLuYP_lx_HjPzzQKQIUd8v2cdDbYAzc0j3FCrj0JCA-v1","kro.run/instance-id":"c5238ed6-ca7c-421e-baaf-6ac45c81641e","kro.run/instance-kind":"BenchChain500","kro.run/instance-name":"i0000","kro.run/node-id":"b","kro.run/owned":"true"},"annotations":{"internal.kro.run/apply-order":"2","kroscope.dev/desired-hash":"d069325487728a01"},"ownerReferences":[{"apiVersion":"kro.run/v1alpha1","kind":"BenchChain500","name":"i0000","uid":"c5238ed6-ca7c-421e-baaf-6ac45c81641e","controller":true}],"managedFields":[{"manager":"kroscope","operation":"Apply","apiVersion":"v1","time":"2026-12-02T09:35:56Z","fieldsType":"FieldsV1","fieldsV1":{"f:data":{"f:from":{}},"f:metadata":{"f:annotations":{"f:internal.kro.run/apply-order":{},"f:kroscope.dev/desired-hash":{}},"f:labels":{"f:app.kubernetes.io/managed-by":{},"f:applyset.kubernetes.io/part-of":{},"f:kro.run/instance-id":{},"f:kro.run/instance-kind":{},"f:kro.run/instance-name":{},"f:kro.run/node-id":{},"f:kro.run/owned":{}}}}}]},"data":{"from":"i0000-a"}}`)
	for _, s := range []struct {
		name string
		n    runtime.NegotiatedSerializer
	}{
		{"client-go", dynamic.ConfigFor(&rest.Config{}).NegotiatedSerializer},
		{"one-pass", newOnePass(dynamic.ConfigFor(&rest.Config{}).NegotiatedSerializer)},
	} {
		dec := jsonInfo(b, s.n).Serializer
		b.Run(s.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := dec.Decode(data, nil, &unstructured.Unstructured{}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
