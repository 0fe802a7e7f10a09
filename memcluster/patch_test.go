package memcluster

import (
	"encoding/json"
	"reflect"
	"testing"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
)

// The merge patch is applied to the decoded object as RFC 7386 says: the
// same result as the JSON merge of the encoded object, and old unchanged.
func TestMergePatchAsRFC7386(t *testing.T) {
	old := `{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x","labels":{"a":"1","b":"2"}},
		"data":{"k":"v"},"spec":{"list":[1,2,3],"n":5,"s":"str","obj":{"deep":{"x":1}}}}`
	for _, patch := range []string{
		`{"metadata":{"labels":{"a":null,"c":"3"}}}`,
		`{"data":null}`,
		`{"spec":{"list":[4],"n":6.5,"s":{"now":"an object"},"obj":{"deep":{"y":2,"x":null}}}}`,
		`{"spec":{"obj":"a string now"},"status":{"phase":"Bound","capacity":{"storage":"1Gi"},"gone":null}}`,
		`{}`,
	} {
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON([]byte(old)); err != nil {
			t.Fatal(err)
		}
		before := u.DeepCopy()
		got, err := applyPatch(u, types.MergePatchType, []byte(patch))
		if err != nil {
			t.Fatalf("%s: %v", patch, err)
		}
		if !reflect.DeepEqual(u, before) {
			t.Errorf("%s: the patch changed old", patch)
		}
		wantJSON, err := jsonpatch.MergePatch([]byte(old), []byte(patch))
		if err != nil {
			t.Fatal(err)
		}
		want := &unstructured.Unstructured{}
		if err := want.UnmarshalJSON(wantJSON); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got.Object, want.Object) {
			g, _ := json.Marshal(got.Object)
			t.Errorf("%s:\n got %s\nwant %s", patch, g, wantJSON)
		}
	}
	for _, bad := range []string{`[1]`, `"x"`, `{`} {
		u := &unstructured.Unstructured{Object: map[string]any{"kind": "ConfigMap"}}
		if _, err := applyPatch(u, types.MergePatchType, []byte(bad)); err == nil {
			t.Errorf("merge patch %s accepted", bad)
		}
	}
}
