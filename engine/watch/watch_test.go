package watch

import (
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestSpecName(t *testing.T) {
	dep := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	cm := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	cases := map[string]Spec{
		"deployments.apps (children)":                   {GVR: dep, LabelSelector: "kro.run/instance-id"},
		"configmaps (external ns metadata.name=shared)": {GVR: cm, Namespace: "ns", FieldSelector: "metadata.name=shared"},
		"configmaps (metadata)":                         {GVR: cm},
		"configmaps (external selector team=a)":         {GVR: cm, LabelSelector: "team=a", ExternalSelector: true},
		"configmaps (external selector ns team in (a))": {GVR: cm, Namespace: "ns", LabelSelector: "team in (a)", ExternalSelector: true},
	}
	for want, s := range cases {
		if got := s.Name(); got != want {
			t.Errorf("Name() = %q, want %q", got, want)
		}
	}
}
