package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/charmbracelet/x/ansi"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kroscope/kroscope/engine"
	"github.com/kroscope/kroscope/engine/logsink"
	"github.com/kroscope/kroscope/headless"
	"github.com/kroscope/kroscope/termtext"
	"github.com/kroscope/kroscope/termtext/termtexttest"
	"github.com/kroscope/kroscope/test/engrun"
	"github.com/kroscope/kroscope/test/graphs"
)

// textRGD carries the planted sequences three ways: the instance's
// spec.key fails a CEL map lookup, whose error ("no such key: <key>")
// becomes the instance's message, its conditions, its Events, the log
// and the plan; spec.note is copied into a ConfigMap (the YAML views);
// and the definition itself carries them in an annotation (%s, as a
// JSON string, which YAML reads).
var textRGD = graphs.Annotated(graphs.RGD("engtext", "EngText", "spec:\n  key: string\n  note: string",
	graphs.ConfigMap("shown", "${schema.metadata.name}-shown", "note: ${schema.spec.note}"),
	graphs.ConfigMap("lookup", "${schema.metadata.name}-lookup", `value: '${string({"k": 1}[schema.spec.key])}'`)),
	"kroscope.test/note: %s")

// badRGD is a graph whose expression does not parse: CEL's error quotes
// the expression, and with it the string literal %s (the graph error
// that -o json, the log and the graphs screen show).
var badRGD = graphs.RGD("engtextbad", "EngTextBad", "spec:\n  key: string",
	graphs.ConfigMap("broken", "${schema.metadata.name}-broken", "value: %s"))

// clusterTextRGD is a cluster graph (its Events are the graph screen's
// Events tab) carrying the sequences in an annotation (%s); it sorts
// before engtext, so the graph views the test reaches show it.
var clusterTextRGD = graphs.Annotated(graphs.RGD("engrgd", "EngRgd", "",
	graphs.ConfigMap("plain", "${schema.metadata.name}-plain", "")),
	"kroscope.test/note: %s")

// TestPlantedSequencesShownEscapedEverywhere plants every terminal
// sequence of termtexttest (CSI, OSC 8, APC, DCS, PM, SOS, C1, bare CR,
// bidi overrides, isolates and marks) in an instance's spec, annotations
// and labels' neighbours, in Events about it and in its graph, on a real
// API server, and then reads every view of tui.Views (each per-node view
// for every node), the bytes the TUI wrote to its terminal, `run -o
// json` and the log: none carries a sequence raw, and the views show
// them escaped.
func TestPlantedSequencesShownEscapedEverywhere(t *testing.T) {
	r := newEngRig(t)
	ctx := context.Background()
	payload := termtexttest.Payload()
	file := r.writeFile("text.yaml", fmt.Sprintf(textRGD, yamlQuote(payload)))
	bad := r.writeFile("textbad.yaml", fmt.Sprintf(badRGD, yamlQuote("${schema.spec.key == '"+payload+"' +}")))
	installKroCRDsForEngine(t, r)
	rgd := r.clusterRGD(fmt.Sprintf(clusterTextRGD, yamlQuote(payload)))
	plantEvent(t, r, "default", rgd, payload)
	var out, logs engrun.Buffer
	run := engrun.Start(t, engrun.Config{
		Rest: r.cfg, Namespace: r.ns, LogLines: 40, LogPrefix: "engine log: ",
		Run: func(ctx context.Context, e *engine.Engine) error {
			return headless.Run(ctx, e, &out, headless.Options{Output: "json"})
		},
	}, func(o *engine.Options) {
		o.RGDPaths = []string{file, bad}
		o.WatchClusterRGDs = true
		o.Log = logsink.New(logsink.Options{Writer: &logs, Verbosity: 1})
	})
	e := run.E
	waitGraph(t, e, "engrgd")
	gvr := gvrOfGraph(t, waitGraph(t, e, "engtext"))
	// The note goes into a child by server-side apply, whose YAML decoder
	// refuses a raw C1 control (the API server answers "control
	// characters are not allowed"): the note carries every other kind.
	var note strings.Builder
	for _, sq := range termtexttest.Sequences {
		if !strings.HasPrefix(sq.Name, "C1") {
			note.WriteString(" " + sq.Raw)
		}
	}
	inst := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": gvr.GroupVersion().String(), "kind": "EngText",
		"metadata": map[string]any{"name": "one", "namespace": r.ns, "annotations": map[string]any{"kroscope.test/note": payload}},
		"spec":     map[string]any{"key": payload, "note": note.String()},
	}}
	inst, err := r.dyn.Resource(gvr).Namespace(r.ns).Create(ctx, inst, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating the instance: %v", err)
	}
	plantEvent(t, r, r.ns, inst, payload)
	nodes := waitLookupFailed(t, e)

	d := newDriver(t, e)
	d.raw = true
	views := d.renderEveryView(nodes)
	written := string(d.output())
	if err := run.Stop(); err != nil {
		t.Fatalf("headless run: %v", err)
	}
	channels := map[string]string{
		"bytes the TUI wrote": written,
		"run -o json":         out.String(),
		"log":                 logs.String(),
	}
	for _, v := range views {
		channels["tui "+v.key()] = v.shown.Frame + "\n" + v.shown.Text
	}
	var decoded strings.Builder // what `jq -r .message` prints
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("run -o json wrote a line that is not JSON: %v: %q", err, l)
		}
		if msg, ok := m["message"].(string); ok {
			decoded.WriteString(msg + "\n")
		}
	}
	channels["run -o json, decoded"] = decoded.String()
	for name, text := range channels {
		if bad := termtexttest.Unsafe(text); len(bad) > 0 {
			t.Errorf("%s carries %v raw", name, bad)
		}
	}
	// The checks are not empty: where a view shows the whole text, every
	// sequence is there, escaped; a row shows the start of the message.
	// (The log quotes an error as Go does: `\a` for a BEL, so its check is
	// that the first sequence is there, escaped.)
	first := `\x1b[38;5`
	// The instance view shows the planted Event, not only the conditions.
	if ev := "planted: " + first; !strings.Contains(ansi.Strip(channels["tui instance"]), ev) {
		t.Errorf("tui instance does not show the planted Event (%q):\n%s", ev, ansi.Strip(channels["tui instance"]))
	}
	for name, want := range map[string][]string{
		"tui instances": {"no such key", first}, "tui inspect lookup": nil, "tui instance": nil,
		"tui instance/yaml": nil, "tui yaml/desired shown": {"note"}, "tui yaml/observed shown": {"note"},
		"tui rgd/yaml": nil, "tui graphs": {"engtextbad", first}, "tui rgd/events": {"planted: " + first}, "tui plan/instance": {"no such key", first}, "tui logs": {"no such key", first},
		"run -o json, decoded": nil, "log": {first}, "bytes the TUI wrote": {`\x1b`, `\u202e`, `\r`},
	} {
		text := ansi.Strip(channels[name])
		if want == nil {
			if missing := termtexttest.Escaped(text); len(missing) > 0 {
				t.Errorf("%s does not show %v escaped:\n%s", name, missing, text)
			}
			continue
		}
		if strings.HasPrefix(name, "tui yaml/") {
			for _, sq := range termtexttest.Sequences {
				if !strings.HasPrefix(sq.Name, "C1") {
					want = append(want, sq.Shown)
				}
			}
		}
		for _, w := range want {
			if !strings.Contains(text, w) {
				t.Errorf("%s lacks %q: the channel was not checked\n%s", name, w, text)
			}
		}
	}
}

// yamlQuote writes s as a YAML double-quoted scalar with every rune YAML
// refuses raw (controls, C1, the bidi characters) as a \u escape.
func yamlQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '\\' || r == '"':
			b.WriteString(`\` + string(r))
		case r < 0x20 || r == 0x7f || termtext.Unsafe(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String() + `"`
}

// plantEvent records, in namespace ns, a Warning Event about obj whose
// reason, message and source carry payload.
func plantEvent(t *testing.T, r *engRig, ns string, obj *unstructured.Unstructured, payload string) {
	t.Helper()
	now := metav1.NewTime(time.Now())
	ev := &corev1.Event{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "planted-", Namespace: ns},
		InvolvedObject: corev1.ObjectReference{APIVersion: obj.GetAPIVersion(), Kind: obj.GetKind(),
			Namespace: obj.GetNamespace(), Name: obj.GetName(), UID: obj.GetUID()},
		Reason: "Planted" + payload, Message: "planted:" + payload, Type: corev1.EventTypeWarning,
		Source: corev1.EventSource{Component: "planter" + payload}, FirstTimestamp: now, LastTimestamp: now, Count: 1,
	}
	events := r.env.Kubernetes().CoreV1().Events(ns)
	made, err := events.Create(context.Background(), ev, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("creating the planted Event: %v", err)
	}
	t.Cleanup(func() { _ = events.Delete(context.Background(), made.Name, metav1.DeleteOptions{}) })
}

// waitLookupFailed waits until the instance's message is the lookup's
// error with both nodes known, and returns the node ids.
func waitLookupFailed(t *testing.T, e *engine.Engine) []string {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(200 * time.Millisecond) {
		for _, in := range e.Snapshot().Instances {
			if in.Key.Name == "one" && strings.Contains(in.Message, "no such key") && len(in.Resources) == 2 {
				return []string{in.Resources[0].ID, in.Resources[1].ID}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the lookup never failed with the instance's 2 nodes:\n%s", engrun.Describe(e.Snapshot()))
		}
	}
}
