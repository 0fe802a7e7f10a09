package rgdstatus

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func newRGD(gen int64) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "kro.run/v1alpha1", "kind": "ResourceGraphDefinition"}}
	u.SetName("web")
	u.SetGeneration(gen)
	u.SetCreationTimestamp(metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)))
	return u
}

// stored puts status on u through JSON, as the API server returns it.
func stored(u *unstructured.Unstructured, status map[string]any) {
	data, _ := json.Marshal(status)
	var m map[string]any
	_ = json.Unmarshal(data, &m)
	u.Object["status"] = m
}

var served = Outcome{Kind: "Web", TopologicalOrder: []string{"cm", "deploy", "svc"},
	Dependencies: map[string][]string{"deploy": {"cm"}, "svc": {"deploy"}}, CRDReady: true, Serving: true}

func TestServedGraph(t *testing.T) {
	rgd := newRGD(1)
	now := time.Date(2026, 1, 1, 0, 5, 0, 0, time.UTC)
	st, changed := Desired(rgd, served, now)
	if !changed {
		t.Fatal("a fresh RGD must get a status")
	}
	if st["state"] != StateActive {
		t.Errorf("state = %v", st["state"])
	}
	conds := st["conditions"].([]any)
	var types []string
	for _, c := range conds {
		m := c.(map[string]any)
		types = append(types, m["type"].(string)+"="+m["status"].(string)+"/"+m["reason"].(string))
	}
	want := []string{"GraphAccepted=True/Valid", "GraphRevisionsResolved=True/Resolved", "KindReady=True/Ready", "ControllerReady=True/Running", "Ready=True/Ready"}
	if len(types) != len(want) {
		t.Fatalf("conditions %v, want %v", types, want)
	}
	for i := range want {
		if types[i] != want[i] {
			t.Errorf("condition %d = %s, want %s", i, types[i], want[i])
		}
	}
	res, _ := json.Marshal(st["resources"])
	if string(res) != `[{"dependencies":[{"id":"cm"}],"id":"deploy"},{"dependencies":[{"id":"deploy"}],"id":"svc"}]` {
		t.Errorf("resources = %s", res)
	}
	stored(rgd, st)
	if _, changed := Desired(rgd, served, now.Add(time.Hour)); changed {
		t.Error("the same outcome again must not change the status (no write)")
	}
}

func TestInvalidGraph(t *testing.T) {
	rgd := newRGD(1)
	now := time.Now()
	st, _ := Desired(rgd, served, now)
	stored(rgd, st)
	rgd.SetGeneration(2)
	st, changed := Desired(rgd, Outcome{BuildErr: errors.New("resource b: unknown field")}, now.Add(time.Minute))
	if !changed || st["state"] != StateInactive || st["topologicalOrder"] != nil {
		t.Fatalf("changed=%v status=%v", changed, st)
	}
	for _, c := range st["conditions"].([]any) {
		m := c.(map[string]any)
		switch m["type"] {
		case GraphAccepted:
			if m["status"] != "False" || m["reason"] != "InvalidResourceGraph" || m["message"] != "resource b: unknown field" {
				t.Errorf("GraphAccepted = %v", m)
			}
		case Ready:
			if m["status"] != "False" || m["reason"] != "InvalidResourceGraph" {
				t.Errorf("Ready = %v", m)
			}
		case KindReady:
			if m["status"] != "True" || fmt.Sprint(m["observedGeneration"]) != "1" {
				t.Errorf("KindReady must keep its last value: %v", m)
			}
		}
	}
}

func TestSettled(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		name string
		o    Outcome
		want bool
	}{
		{"compiled, still starting", Outcome{Kind: "App", TopologicalOrder: []string{"a"}}, false},
		{"CRD ready, controller not yet running", Outcome{Kind: "App", CRDReady: true}, false},
		{"serving", Outcome{Kind: "App", CRDReady: true, Serving: true}, true},
		{"does not compile", Outcome{BuildErr: boom}, true},
		{"CRD not ready", Outcome{Kind: "App", CRDErr: boom}, true},
		{"controller failed", Outcome{Kind: "App", CRDReady: true, ServeErr: boom}, true},
	} {
		if got := tc.o.Settled(); got != tc.want {
			t.Errorf("%s: Settled = %v, want %v", tc.name, got, tc.want)
		}
	}
}
