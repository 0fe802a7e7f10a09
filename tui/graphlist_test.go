package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest/v2"

	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/reconciler/graph/graphview"
	"github.com/kroscope/kroscope/test/graphs"
	"github.com/kroscope/kroscope/test/graphtest"
)

// The definitions of the graphs fixture: webapp and database match the
// fixture's instances; tenants is cluster-scoped and refused.
var (
	webappRGD = graphs.RGD("webapp", "WebApp", `spec:
  image: string | required=true description="the container image"
  replicas: integer | default=2 minimum=1 maximum=20
  ingress:
    enabled: boolean | default=false
  regions: '[]string | default=["eu"]'
status:
  available: ${deployment.status.availableReplicas}`,
		graphs.ConfigMap("config", "${schema.metadata.name}-config", ""),
		graphs.Template("secret", "v1", "Secret", "name: ${schema.metadata.name}-creds", "stringData:\n  password: hunter2"),
		graphs.Template("deployment", "apps/v1", "Deployment", "name: ${schema.metadata.name}\nannotations:\n  config: ${config.metadata.name}\n  secret: ${secret.metadata.name}",
			"spec:\n  replicas: ${schema.spec.replicas}", "readyWhen:\n- ${deployment.status.availableReplicas == deployment.spec.replicas}"),
		graphs.Template("service", "v1", "Service", "name: ${deployment.metadata.name}", ""),
		graphs.Template("ingress", "networking.k8s.io/v1", "Ingress", "name: ${service.metadata.name}\nannotations:\n  config: ${config.metadata.name}", "",
			"includeWhen:\n- ${schema.spec.ingress.enabled}"),
		graphs.ConfigMap("regional", `${schema.metadata.name + "-" + region}`, "", "forEach:\n- region: ${schema.spec.regions}"))
	databaseRGD = graphs.RGD("database", "Database", "spec:\n  size: string | default=\"10Gi\"",
		graphs.Template("pvc", "v1", "PersistentVolumeClaim", "name: ${schema.metadata.name}-data", ""),
		graphs.Resource("cluster", "externalRef:\n  apiVersion: v1\n  kind: ConfigMap\n  metadata:\n    name: shared-db\n    namespace: platform"),
		graphs.Template("statefulset", "apps/v1", "StatefulSet", "name: ${schema.metadata.name}\nannotations:\n  pvc: ${pvc.metadata.name}\n  db: ${cluster.metadata.name}", ""))
	tenantsRGD = graphs.RGD("tenants", "Tenant", "scope: Cluster\nspec:\n  name: string",
		graphs.Template("ns", "v1", "Namespace", "name: ${schema.spec.name}", ""))
)

// builtGraph builds a definition as the engine does and returns what the
// engine puts in the state.
func builtGraph(t testing.TB, yaml, source string) state.Graph {
	t.Helper()
	g := graphtest.Build(t, yaml, source)
	sum := graphview.Summarize(g)
	return state.Graph{Name: g.Name, Source: source, APIVersion: g.Instance.GVK.GroupVersion().String(), Kind: g.Instance.GVK.Kind,
		Resource: g.Instance.GVR.Resource + "." + g.Instance.GVR.Group, Template: &sum,
		Definition: &state.GraphDefinition{Scope: sum.Scope, YAML: strings.Replace(yaml, "password: hunter2", "password: '********'", 1)}}
}

// graphsFixture is the fixture with every graph's facts, passed through a
// real store so that each graph's Status is derived as the engine's is.
func graphsFixture(t testing.TB, more ...func(*state.Store)) *state.Snapshot {
	t.Helper()
	base := fixture()
	st := state.NewStore()
	st.SetCluster(base.Cluster)
	st.SetMode(base.Mode)
	st.SetEngine(base.Engine)
	st.SetStartup(base.Startup)
	for _, w := range base.Watches {
		st.SetWatch(w)
	}
	web := builtGraph(t, webappRGD, "cluster")
	web.Served = true
	db := builtGraph(t, databaseRGD, "examples/database.yaml")
	db.Served, db.Note = true, "CRD checks skipped: no cluster rights"
	tenants := builtGraph(t, tenantsRGD, "cluster")
	tenants.Err = "kind Tenant: the CRD tenants.kro.run changes in a way that breaks stored instances (spec.name removed); set kro.run/allow-breaking-changes: \"true\" on the RGD to allow it"
	broken := state.Graph{Name: "broken", Source: "examples/broken.yaml", Err: `resource deployment: spec.replicas: ${schema.spec.replica}: undefined field "replica"`,
		Definition: &state.GraphDefinition{Scope: "Namespaced", YAML: "apiVersion: kro.run/v1alpha1\nkind: ResourceGraphDefinition\n"}}
	ready := []state.Condition{{Type: "GraphAccepted", Status: "True", Reason: "Valid", Message: "resource graph and schema are valid", LastTransition: at(-900)},
		{Type: "KindReady", Status: "True", Reason: "Ready", Message: "kind WebApp has been accepted and ready", LastTransition: at(-899)},
		{Type: "ControllerReady", Status: "True", Reason: "Running", Message: "controller is running", LastTransition: at(-899)},
		{Type: "Ready", Status: "True", Reason: "Ready", LastTransition: at(-899)}}
	for _, g := range []state.Graph{web, db, tenants, broken} {
		st.SetGraph(g)
		st.SetGraphConditions(g.Name, ready)
	}
	st.SetGraphConditions("tenants", []state.Condition{{Type: "GraphAccepted", Status: "True", Reason: "Valid"},
		{Type: "KindReady", Status: "False", Reason: "Failed", Message: tenants.Err}, {Type: "Ready", Status: "False", Reason: "Failed"}})
	st.SetGraphConditions("broken", []state.Condition{{Type: "GraphAccepted", Status: "False", Reason: "InvalidResourceGraph", Message: broken.Err},
		{Type: "Ready", Status: "False", Reason: "InvalidResourceGraph"}})
	for _, in := range base.Instances {
		st.UpdateInstance(in.Key, func(n *state.Instance) { *n = *in })
	}
	for _, f := range more {
		f(st)
	}
	return st.Snapshot()
}

// observingKro: this process observes a cluster kro serves, and kro
// refuses webapp's new spec.
func observingKro(st *state.Store) {
	st.SetMode(state.Mode{Kro: "kro's controller holds its Lease"})
	st.SetKro("webapp", &state.KroGraph{State: "Inactive", Revision: 3, LatestRevision: 4,
		Blocked: "KindReady: cannot update CRD webapps.kro.run: breaking change", Conditions: []state.Condition{
			{Type: "KindReady", Status: "False", Reason: "Failed", Message: "cannot update CRD webapps.kro.run: breaking change"},
			{Type: "Ready", Status: "False", Reason: "Failed"}}})
	st.SetKro("database", &state.KroGraph{State: "Active", Revision: 1, Conditions: []state.Condition{{Type: "Ready", Status: "True", Reason: "Ready"}}})
}

// eventsBackend lists Events for the webapp graph.
type eventsBackend struct{ *fakeBackend }

func (eventsBackend) GraphEvents(_ context.Context, name string) ([]state.Event, error) {
	if name != "webapp" {
		return nil, nil
	}
	return []state.Event{{Type: "Normal", Reason: "Ready", Message: "graph webapp is ready", Source: "kro", Count: 2, Last: at(-60)},
		{Type: "Warning", Reason: "CRDUpdateBlocked", Message: "breaking change refused", Source: "kro", Last: at(-600)}}, nil
}

// pressAll presses keys and runs what they ask the backend (the Events
// read), feeding the replies back; ticks are not waited for.
func pressAll(m *Model, keys ...string) {
	for _, k := range keys {
		_, cmd := m.Update(keyMsg(k))
		feedReads(m, cmd)
	}
}

func feedReads(m *Model, cmd tea.Cmd) {
	feedBack(m, cmd, 200*time.Millisecond, false, func(msg tea.Msg) bool { _, ok := msg.(rgdEventsMsg); return ok })
}

// TestGraphsGolden renders the graphs screen and one graph's tabs at
// 60x15, 80x24 and 200x50 (refresh with go test ./tui -update).
func TestGraphsGolden(t *testing.T) {
	open := []string{"D", "G", "enter"} // webapp: the graphs sort by name, webapp last
	for _, c := range []struct {
		name    string
		w, h    int
		keys    []string
		observe bool
	}{
		{"graphs_60x15", 60, 15, []string{"D"}, false},
		{"graphs_80x24", 80, 24, []string{"D"}, false},
		{"graphs_200x50", 200, 50, []string{"D"}, false},
		{"graphs_sorted_state_80x24", 80, 24, []string{"D", "S"}, false},
		{"graphs_filter_inactive_80x24", 80, 24, append([]string{"D", "/"}, append(strings.Split("state:inactive", ""), "enter")...), false},
		{"graphs_command_rgd_80x24", 80, 24, append(strings.Split(":rgd", ""), "enter"), false},
		{"graph_60x15", 60, 15, open, false},
		{"graph_80x24", 80, 24, open, false},
		{"graph_200x50", 200, 50, open, false},
		{"graph_schema_60x15", 60, 15, append(open, "tab"), false},
		{"graph_schema_80x24", 80, 24, append(open, "tab"), false},
		{"graph_schema_200x50", 200, 50, append(open, "tab"), false},
		{"graph_status_80x24", 80, 24, append(open, "tab", "tab"), false},
		{"graph_status_refused_200x50", 200, 50, []string{"D", "S", "j", "enter", "tab", "tab"}, false},
		{"graph_yaml_80x24", 80, 24, append(open, "y"), false},
		{"graph_events_80x24", 80, 24, append(open, "["), false},
		{"graph_database_200x50", 200, 50, []string{"D", "j", "enter"}, false},
		{"graphs_kro_observing_80x24", 80, 24, []string{"D"}, true},
		{"graphs_kro_observing_200x50", 200, 50, []string{"D"}, true},
		{"graph_status_kro_observing_80x24", 80, 24, append(open, "tab", "tab"), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			snap := graphsFixture(t)
			if c.observe {
				snap = graphsFixture(t, observingKro)
			}
			f := newFake(snap)
			m := newModel(eventsBackend{f}, Options{Theme: "dark", ConfigPath: "-", Now: func() time.Time { return fixedNow }})
			m.Update(tea.WindowSizeMsg{Width: c.w, Height: c.h})
			pressAll(m, c.keys...)
			out := plain(m.View().Content)
			for i, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
				if w := ansi.StringWidth(l); w > c.w {
					t.Errorf("line %d is %d cells wide, terminal is %d: %q", i, w, c.w, l)
				}
			}
			if n := strings.Count(out, "\n"); n > c.h {
				t.Errorf("frame has %d lines, terminal has %d", n, c.h)
			}
			if strings.Contains(out, "hunter2") {
				t.Errorf("a Secret's value reached the screen:\n%s", out)
			}
			golden.RequireEqual(t, out)
		})
	}
}

// TestFlowGraphsToInstances: :graphs, enter on a graph, i lists that
// graph's instances only, replacing the filter the list had, and says so.
func TestFlowGraphsToInstances(t *testing.T) {
	f := newFake(graphsFixture(t))
	m := NewModel(f, Options{Theme: "dark", ConfigPath: "-", Now: func() time.Time { return fixedNow }})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(100, 30), progOpts())
	t.Cleanup(func() { _ = tm.Quit() })
	send(tm, ":", "n", "s", " ", "t", "e", "a", "m", "-", "a", "enter") // a filter to replace
	send(tm, ":", "g", "r", "a", "p", "h", "s", "enter")
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return strings.Contains(string(b), "INSTANCES") }, teatest.WithDuration(10*time.Second))
	send(tm, "j", "j", "j", "enter") // webapp: broken, database, tenants, webapp
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return strings.Contains(string(b), "LAYER 0") }, teatest.WithDuration(10*time.Second))
	send(tm, "i")
	out := finalFrame(t, tm)
	for _, want := range []string{"4/6 instances", "team-a/shop", "team-a/blog", "team-b/api", "team-c/legacy", "graph webapp: 4 instances"} {
		if !strings.Contains(out, want) {
			t.Errorf("the list lacks %q:\n%s", want, out)
		}
	}
	for _, gone := range []string{"team-b/orders", "team-c/cache", "ns:team-a"} {
		if strings.Contains(out, gone) {
			t.Errorf("the list still shows %s, not of graph webapp:\n%s", gone, out)
		}
	}
}
