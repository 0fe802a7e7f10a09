package rights

import (
	"reflect"
	"testing"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kroscope/kroscope/test/graphs"
	"github.com/kroscope/kroscope/test/graphtest"
)

var testGraph = graphs.RGD("web", "Web", "",
	graphs.ExternalRef("creds", "v1", "Secret", "creds"),
	graphs.ConfigMap("config", "${schema.metadata.name}", "k: ${string(creds.data.k)}"),
	graphs.Template("svc", "v1", "Service", "name: ${schema.metadata.name}", "spec:\n  ports:\n  - port: 80"),
	graphs.Template("app", "apps/v1", "Deployment", "name: ${schema.metadata.name}", "spec:\n"+graphs.Indent(graphs.Workload("web", "containers:\n- name: app\n  image: nginx"), 2)))

// TestClusterRole: the rules are exactly what serving the graph takes,
// folded by group and verbs: children's six verbs, a read reference's
// three, the instances' and their status', and the CRD's patch by name.
func TestClusterRole(t *testing.T) {
	g := graphtest.Build(t, testGraph, "web.yaml")
	type rule struct {
		groups, resources, verbs, names []string
	}
	var got []rule
	cr := ClusterRole(g)
	for _, r := range cr.Rules {
		got = append(got, rule{r.APIGroups, r.Resources, r.Verbs, r.ResourceNames})
	}
	want := []rule{
		{[]string{""}, []string{"secrets"}, ReadVerbs, nil},
		{[]string{""}, []string{"configmaps", "services"}, ChildVerbs, nil},
		{[]string{"apps"}, []string{"deployments"}, ChildVerbs, nil},
		{[]string{"kro.run"}, []string{"webs"}, InstanceVerbs, nil},
		{[]string{"kro.run"}, []string{"webs/status"}, StatusVerbs, nil},
		{[]string{"apiextensions.k8s.io"}, []string{"customresourcedefinitions"}, CRDVerbs, []string{"webs.kro.run"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("rules:\n got %+v\nwant %+v", got, want)
	}
	if cr.Name != "kroscope:graph:web" || cr.Labels[AggregateLabel] != "true" {
		t.Errorf("ClusterRole %s labels %v", cr.Name, cr.Labels)
	}
	b := ClusterRoleBinding("web", "kroscope-system", "kroscope")
	if b.RoleRef.Name != cr.Name || b.Subjects[0].Name != "kroscope" || b.Subjects[0].Namespace != "kroscope-system" {
		t.Errorf("binding %+v", b)
	}
}

func TestRulesFoldVerbs(t *testing.T) {
	cm := schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	got := Rules([]Need{{GVR: cm, Verbs: ReadVerbs, Namespaced: true}, {GVR: cm, Verbs: []string{"delete", "create"}, Namespaced: true}})
	if len(got) != 1 || !reflect.DeepEqual(got[0].Verbs, []string{"get", "list", "watch", "create", "delete"}) {
		t.Errorf("a kind read by one resource and written by another: %+v", got)
	}
}
