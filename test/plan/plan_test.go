package plan_test

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kroscope/kroscope/plan"
	"github.com/kroscope/kroscope/reconciler/client"
	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/test/graphs"
)

// graphDoc is a ResourceGraphDefinition of kind with the spec fields
// (YAML, as under spec.schema.spec) and resources (items as
// graphs.ConfigMap writes them) given.
func graphDoc(kind, spec string, resources ...string) string {
	return graphs.RGD(strings.ToLower(kind), kind, "spec:\n"+graphs.Indent(spec, 2), resources...)
}

// checkApplied applies g2 for real (the reconciler, on every instance
// named) and fails unless what changed is what the plan p said.
func checkApplied(r *rig, p *plan.Plan, g2 *graph2, names ...string) {
	r.t.Helper()
	for _, name := range names {
		uid := r.uid(g2.old, name)
		before := r.children(uid, g2.old, g2.new)
		r.reconcile(g2.new, name)
		after := r.children(uid, g2.old, g2.new)
		expect(r.t, "instance "+name+": the plan against what the reconciler did", planned(instanceOf(r.t, p, name)), outcome(before, after))
	}
}

// TestPlanTemplateChange: a changed template field is one "~" field per
// instance; the plan sends only reads and dry runs (counted by verb and
// dryRun parameter); the reconciler then makes exactly that change.
func TestPlanTemplateChange(t *testing.T) {
	r := newRig(t)
	old := r.build(graphDoc("PlanTpl", "name: string", graphs.ConfigMap("cm", "${schema.spec.name}", "greeting: hello")))
	r.serve(old, graphs.Instance("PlanTpl", "a", "name: a-cm"), graphs.Instance("PlanTpl", "b", "name: b-cm"))
	g := r.build(graphDoc("PlanTpl", "name: string", graphs.ConfigMap("cm", "${schema.spec.name}", "greeting: bonjour")))

	var c counter
	set, err := client.NewSet(c.wrap(r.env.Config))
	if err != nil {
		t.Fatal(err)
	}
	p := r.plan(g, set)
	t.Logf("requests: %v", c.counts())
	for k, n := range c.counts() {
		verb, _, _ := strings.Cut(k, " ")
		if verb != "GET" && k != verb+" dryRun=All" {
			t.Errorf("%d %s request(s): a plan sends only reads and dry runs (all: %v)", n, k, c.counts())
		}
	}
	if c.counts()["PATCH dryRun=All"] == 0 {
		t.Errorf("no dry-run apply counted: %v", c.counts())
	}
	s := plan.Summarize([]*plan.Plan{p})
	if want := (plan.Summary{Change: 2, Instances: 2}); s != want {
		t.Errorf("summary %+v, want %+v", s, want)
	}
	expect(t, "plan of a", planned(instanceOf(t, p, "a")), []string{"~ ConfigMap " + r.ns + "/a-cm data.greeting"})
	checkApplied(r, p, &graph2{old, g}, "a", "b")
}

// checkEdited applies instance edits for real (the spec, then the
// reconciler) and fails unless what changed is what the plan p said.
func checkEdited(r *rig, p *plan.Plan, g *graph.Graph, edits ...string) {
	r.t.Helper()
	for _, doc := range edits {
		edit := r.object(doc)
		name := edit.GetName()
		ri := r.set.Dynamic().Resource(g.Instance.GVR).Namespace(r.ns)
		cur, err := ri.Get(context.Background(), name, metav1.GetOptions{})
		if err != nil {
			r.t.Fatal(err)
		}
		before := r.children(cur.GetUID(), g)
		cur.Object["spec"] = edit.Object["spec"]
		if _, err := ri.Update(context.Background(), cur, metav1.UpdateOptions{}); err != nil {
			r.t.Fatalf("editing %s: %v", name, err)
		}
		r.reconcile(g, name)
		after := r.children(cur.GetUID(), g)
		expect(r.t, "instance "+name+": the plan against what the reconciler did", planned(instanceOf(r.t, p, name)), outcome(before, after))
	}
}

// TestPlanSpecFieldWithDefault: a new spec field with a default reaches
// every stored instance through the new schema's defaulting.
func TestPlanSpecFieldWithDefault(t *testing.T) {
	r := newRig(t)
	old := r.build(graphDoc("PlanDefault", "name: string", graphs.ConfigMap("cm", "${schema.spec.name}", "greeting: hello")))
	r.serve(old, graphs.Instance("PlanDefault", "a", "name: a-cm"))
	g := r.build(graphDoc("PlanDefault", "name: string\ncolor: string | default=teal",
		graphs.ConfigMap("cm", "${schema.spec.name}", "greeting: hello\ncolor: ${schema.spec.color}")))
	p := r.plan(g, nil)
	if p.Schema == nil || len(p.Schema.Breaking) > 0 {
		t.Errorf("an added field with a default is not breaking: %+v", p.Schema)
	}
	expect(t, "plan", planned(instanceOf(t, p, "a")), []string{"~ ConfigMap " + r.ns + "/a-cm data.color"})
	if f := instanceOf(t, p, "a").Objects[0].Fields[0]; f.New != "teal" {
		t.Errorf("data.color would be %v, want the default teal", f.New)
	}
	r.env.InstallCRDs(t, g.Instance.CRD)
	checkApplied(r, p, &graph2{old, g}, "a")
}

// TestPlanRemovedResource: a resource taken out of the graph is pruned,
// and nothing else is.
func TestPlanRemovedResource(t *testing.T) {
	r := newRig(t)
	both := graphs.ConfigMap("one", "${schema.spec.name}-one", "k: v") + graphs.ConfigMap("two", "${schema.spec.name}-two", "k: v")
	old := r.build(graphDoc("PlanRemove", "name: string", both))
	r.serve(old, graphs.Instance("PlanRemove", "a", "name: a"))
	g := r.build(graphDoc("PlanRemove", "name: string", graphs.ConfigMap("one", "${schema.spec.name}-one", "k: v")))
	p := r.plan(g, nil)
	expect(t, "plan", planned(instanceOf(t, p, "a")), []string{"- ConfigMap " + r.ns + "/a-two"})
	checkApplied(r, p, &graph2{old, g}, "a")
}

// TestPlanRenamedID: a resource whose id changes keeps its object (the
// same name): its node label changes, nothing is pruned or created.
func TestPlanRenamedID(t *testing.T) {
	r := newRig(t)
	old := r.build(graphDoc("PlanRename", "name: string", graphs.ConfigMap("cm", "${schema.spec.name}", "k: v")))
	r.serve(old, graphs.Instance("PlanRename", "a", "name: a-cm"))
	g := r.build(graphDoc("PlanRename", "name: string", graphs.ConfigMap("config", "${schema.spec.name}", "k: v")))
	p := r.plan(g, nil)
	expect(t, "plan", planned(instanceOf(t, p, "a")), []string{`~ ConfigMap ` + r.ns + `/a-cm metadata.labels["kro.run/node-id"]`})
	checkApplied(r, p, &graph2{old, g}, "a")
}

// TestPlanIncludeWhenFlips: an instance edit that flips includeWhen prunes
// the resource (false) or creates it (true).
func TestPlanIncludeWhenFlips(t *testing.T) {
	r := newRig(t)
	g := r.build(graphDoc("PlanInclude", "name: string\nextra: boolean", graphs.ConfigMap("main", "${schema.spec.name}", "k: v"),
		graphs.ConfigMap("extra", "${schema.spec.name}-extra", "k: v", "includeWhen:\n- ${schema.spec.extra}")))
	r.serve(g, graphs.Instance("PlanInclude", "turned-off", "name: turned-off\nextra: true"), graphs.Instance("PlanInclude", "turned-on", "name: turned-on\nextra: false"))
	edits := []string{graphs.Instance("PlanInclude", "turned-off", "name: turned-off\nextra: false"), graphs.Instance("PlanInclude", "turned-on", "name: turned-on\nextra: true")}
	p := r.plan(g, nil, edits...)
	expect(t, "plan of turned-off", planned(instanceOf(t, p, "turned-off")), []string{"- ConfigMap " + r.ns + "/turned-off-extra"})
	expect(t, "plan of turned-on", planned(instanceOf(t, p, "turned-on")), []string{"+ ConfigMap " + r.ns + "/turned-on-extra"})
	checkEdited(r, p, g, edits...)
}

// TestPlanForEachGrowsAndShrinks: a forEach over a longer list creates the
// new items, over a shorter one prunes the items gone.
func TestPlanForEachGrowsAndShrinks(t *testing.T) {
	r := newRig(t)
	g := r.build(graphDoc("PlanForEach", "items: '[]string'",
		graphs.ConfigMap("cms", "${schema.metadata.name + '-' + entry}", "k: v", "forEach:\n- entry: ${schema.spec.items}")))
	r.serve(g, graphs.Instance("PlanForEach", "grow", "items: [p, q]"), graphs.Instance("PlanForEach", "shrink", "items: [p, q]"))
	edits := []string{graphs.Instance("PlanForEach", "grow", "items: [p, q, r]"), graphs.Instance("PlanForEach", "shrink", "items: [p]")}
	p := r.plan(g, nil, edits...)
	size := ` metadata.labels["kro.run/collection-size"]`
	expect(t, "plan of grow", planned(instanceOf(t, p, "grow")), []string{"+ ConfigMap " + r.ns + "/grow-r",
		"~ ConfigMap " + r.ns + "/grow-p" + size, "~ ConfigMap " + r.ns + "/grow-q" + size})
	expect(t, "plan of shrink", planned(instanceOf(t, p, "shrink")), []string{"- ConfigMap " + r.ns + "/shrink-q", "~ ConfigMap " + r.ns + "/shrink-p" + size})
	checkEdited(r, p, g, edits...)
}

// TestPlanBreakingSchemaChange: a spec field's type change breaks kro's
// compatibility rules, and the stored instances the new schema refuses
// are named as failing.
func TestPlanBreakingSchemaChange(t *testing.T) {
	r := newRig(t)
	old := r.build(graphDoc("PlanBreak", "size: integer", graphs.ConfigMap("cm", "${schema.metadata.name}", "size: ${string(schema.spec.size)}")))
	r.serve(old, graphs.Instance("PlanBreak", "a", "size: 3"))
	g := r.build(graphDoc("PlanBreak", "size: string", graphs.ConfigMap("cm", "${schema.metadata.name}", "size: ${schema.spec.size}")))
	p := r.plan(g, nil)
	if p.Schema == nil || len(p.Schema.Breaking) == 0 {
		t.Fatalf("a type change is breaking: %+v", p.Schema)
	}
	in := instanceOf(t, p, "a")
	if len(in.Objects) == 0 || in.Objects[0].Op != plan.OpFail || in.Objects[0].Kind != "PlanBreak" ||
		!strings.Contains(in.Objects[0].Message, "spec.size") {
		t.Errorf("instance a would fail validation at spec.size: %+v", in.Objects)
	}
	s := plan.Summarize([]*plan.Plan{p})
	if s.Fail < 2 || plan.ExitCode(s, nil) != 2 {
		t.Errorf("summary %+v: the breaking CRD and the instance fail", s)
	}
}
