package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/kroscope/kroscope/engine"
	"github.com/kroscope/kroscope/engine/packed"
	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/test/engrun"
	"github.com/kroscope/kroscope/test/graphs"
)

// shapeValues are the planted Secret's values, one per shape: each is
// distinct, so a leak names its shape.
var shapeValues = map[string]string{
	"mapkey":   "m4pkey-S3CRET-5081",
	"label":    "l4bel-S3CRET-5082",
	"name":     "n4me-s3cret-5083",
	"annot":    "a4nnot-S3CRET-5084",
	"regex":    "^r3gex-S3CRET-5085$",
	"badregex": "r3gex(S3CRET-5086",
	"ns":       "n4mespace-s3cret-5087",
}

// shapeGraph is one graph reading the planted Secret ("creds") and putting
// one value where it leaks: resources are the rest of spec.resources.
func shapeGraph(name, kind string, resources []string) string {
	doc := graphs.RGD(name, kind, "", append([]string{graphs.ExternalRef("creds", "v1", "Secret", "shapes")}, resources...)...)
	// Every graph but redconfine lets its children go to another
	// namespace: redns's namespace must reach the API server (and fail).
	if name != "redconfine" {
		doc = graphs.Annotated(doc, "kroscope.dev/children-scope: Cluster")
	}
	return doc
}

// secretShapes are the ways a Secret's value reached a message on main
// (issue #26): an unquoted CEL map key (in a template field and in a
// readyWhen), an API server rejecting a label, a name and an annotation key
// built from the value, a regex pattern from it (its operand shown by the
// ready checks; an invalid one failing), and a namespace from it that does
// not exist (an ERROR, which the log reports).
var secretShapes = []struct {
	graph, kind string
	resources   []string
	wantState   string
}{
	{"redmapkey", "RedMapKey", []string{
		graphs.ExternalRef("probe", "v1", "Secret", "shapes", `readyWhen:
- '${ {"x": true}[string(probe.data.mapkey)] }'`),
		graphs.ConfigMap("cm", "${schema.metadata.name}-mapkey", `v: '${string({"x": true}[string(creds.data.mapkey)])}'`),
	}, "IN_PROGRESS"},
	{"redlabel", "RedLabel", []string{graphs.Template("cm", "v1", "ConfigMap",
		"name: ${schema.metadata.name}-label\nlabels:\n  leak: ${string(creds.data.label) + \"!\"}", "")}, "FAILED"},
	{"redname", "RedName", []string{graphs.ConfigMap("cm", `${string(creds.data.name) + "!"}`, "")}, "FAILED"},
	{"redannot", "RedAnnot", []string{graphs.Template("cm", "v1", "ConfigMap",
		"name: ${schema.metadata.name}-annot\nannotations: '${ {string(creds.data.annot) + \"!\": \"x\"} }'", "")}, "FAILED"},
	{"redregex", "RedRegex", []string{
		graphs.ConfigMap("pattern", "${schema.metadata.name}-pattern", "p: ${string(creds.data.regex)}", "readyWhen:\n- ${\"abc\".matches(pattern.data.p)}"),
		graphs.ConfigMap("bad", "${schema.metadata.name}-bad", "p: ${string(creds.data.badregex)}", "readyWhen:\n- ${\"abc\".matches(bad.data.p)}"),
	}, "FAILED"},
	{"redns", "RedNs", []string{nsShape}, "ERROR"},
	// The same namespace in a graph that does not let its children leave
	// the instance's namespace: refused (confine.Decide), the refusal
	// naming the namespace.
	{"redconfine", "RedConfine", []string{nsShape}, "FAILED"},
}

// nsShape is a ConfigMap in the namespace a Secret's value names.
var nsShape = graphs.Template("cm", "v1", "ConfigMap", "name: ${schema.metadata.name}-ns\nnamespace: ${string(creds.data.ns)}", "")

// TestSecretValueShapesLeakNowhere plants values in a Secret, runs one
// graph per shape that puts a value where a message may echo it, and greps
// every channel for each value (as stored and decoded): the instances'
// status, the Events, the log, the `run -o json` lines and the engine's
// state the TUI shows (messages, resource errors and reasons, ready
// checks, the instance's log of failed API calls).
func TestSecretValueShapesLeakNowhere(t *testing.T) {
	r := newEngRig(t)
	ctx := context.Background()
	kube := r.env.Kubernetes()
	if _, err := kube.CoreV1().Secrets(r.ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "shapes"},
		StringData: shapeValues}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, s := range secretShapes {
		files = append(files, r.writeFile(s.graph+".yaml", shapeGraph(s.graph, s.kind, s.resources)))
	}
	var out, logs engrun.Buffer
	run := r.startJSON(files, &out, &logs)
	e := run.E
	gvrs := map[string]schema.GroupVersionResource{}
	for _, s := range secretShapes {
		gvrs[s.graph] = gvrOfGraph(t, servedGraph(t, e, s.graph))
		r.createInstance(gvrs[s.graph], s.kind, s.graph, nil)
	}
	settled := func() bool {
		n := 0
		for _, in := range e.Snapshot().Instances {
			for _, s := range secretShapes {
				if in.Key.Name == s.graph && in.State == s.wantState && in.Message != "" {
					n++
				}
			}
		}
		return n == len(secretShapes)
	}
	for deadline := time.Now().Add(2 * time.Minute); !settled(); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the instances never reached their states:\n%s", engrun.Describe(e.Snapshot()))
		}
	}
	// One more pass of every instance (the requeue) lands in every channel.
	time.Sleep(6 * time.Second)

	channels := map[string]string{}
	for _, s := range secretShapes {
		inst, err := r.dyn.Resource(gvrs[s.graph]).Namespace(r.ns).Get(ctx, s.graph, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		status, _ := json.Marshal(inst.Object["status"])
		channels["status"] += string(status) + "\n"
	}
	events, err := kube.CoreV1().Events(r.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range events.Items {
		channels["events"] += x.Reason + " " + x.Message + "\n"
	}
	channels["engine state"] = stateMessages(t, e.Snapshot())
	if err := run.Stop(); err != nil {
		t.Logf("headless run: %v", err) // FAILED instances: exit 1 is expected
	}
	channels["run -o json"] = out.String()
	channels["log"] = logs.String()

	for name, text := range channels {
		for shape, v := range shapeValues {
			if strings.Contains(text, v) || strings.Contains(text, base64.StdEncoding.EncodeToString([]byte(v))) {
				t.Errorf("%s carries the %s value %q:\n%s", name, shape, v, text)
			}
		}
	}
	// The channels are not empty: each shape's failure is reported there.
	for name, wants := range map[string][]string{
		"status":       {"no such key", "Invalid value", "metadata.name", "metadata.annotations", "error parsing regexp", "not found", "not the instance's namespace"},
		"events":       {"metadata.labels", "metadata.name", "metadata.annotations", "error parsing regexp"},
		"run -o json":  {"no such key", "metadata.labels", "metadata.name", "metadata.annotations", "error parsing regexp"},
		"engine state": {"no such key", "metadata.labels", "metadata.name", "metadata.annotations", "pattern.data.p", "HTTP 422", "HTTP 404", "not the instance's namespace"},
		"log":          {"reconcile failed", "not found"},
	} {
		for _, want := range wants {
			if !strings.Contains(channels[name], want) {
				t.Errorf("%s lacks %q: the channel was not checked\n%s", name, want, channels[name])
			}
		}
	}
}

// stateMessages is the engine's state as JSON without the objects (the
// TUI masks a Secret's data; a child's own fields are the cluster's data):
// every message, reason, ready check and log line the TUI can show.
func stateMessages(t *testing.T, snap *state.Snapshot) string {
	t.Helper()
	var b strings.Builder
	for _, in := range snap.Instances {
		cp := *in
		cp.Resources = append([]state.Resource(nil), in.Resources...)
		for i := range cp.Resources {
			cp.Resources[i].Desired, cp.Resources[i].Observed = packed.Object{}, packed.Object{}
		}
		j, err := json.Marshal(cp)
		if err != nil {
			t.Fatal(err)
		}
		b.Write(j)
		b.WriteString("\n")
	}
	j, _ := json.Marshal(snap.Logs)
	b.Write(j)
	return b.String()
}

// servedGraph waits for graph name to be served; it fails with the
// graphs' errors.
func servedGraph(t *testing.T, e *engine.Engine, name string) state.Graph {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		for _, g := range e.Snapshot().Graphs {
			if g.Name == name && g.Served {
				return g
			}
		}
	}
	var errs []string
	for _, g := range e.Snapshot().Graphs {
		errs = append(errs, g.Name+": "+g.Err)
	}
	t.Fatalf("graph %s not served:\n%s", name, strings.Join(errs, "\n"))
	return state.Graph{}
}
