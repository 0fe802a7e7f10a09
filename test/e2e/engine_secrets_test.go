package e2e

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/exp/teatest/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kroscope/kroscope/engine"
	"github.com/kroscope/kroscope/test/engrun"
	"github.com/kroscope/kroscope/test/graphs"
	"github.com/kroscope/kroscope/tui"
)

// plantedToken is the value planted in a Secret the graph reads.
const plantedToken = "pl4nted-T0KEN-7x9q"

// plantedRGD reads the planted Secret into children and the status:
// "made" copies the token into a Secret whose readyWhen returns the token (a
// string, not a bool; dyn() gets it past the type check); "convert" turns
// the token into an int (a CEL conversion error); "holder" is a ConfigMap
// that names the Secret only; the status holds the token's length. (A value
// copied into a ConfigMap, an env value or an annotation is shown as
// written, as kubectl shows it: see docs/testing-secrets.md.)
var plantedRGD = graphs.RGD("engplant", "EngPlant", "status:\n  tokenLength: ${size(string(creds.data.token))}",
	graphs.ExternalRef("creds", "v1", "Secret", "planted"),
	graphs.Template("made", "v1", "Secret", "name: ${schema.metadata.name}-made", "stringData:\n  token: ${string(creds.data.token)}",
		"readyWhen:\n- ${dyn(string(made.data.token))}"),
	graphs.ConfigMap("holder", "${schema.metadata.name}-holder", "secretName: ${creds.metadata.name}"),
	graphs.ConfigMap("convert", "${schema.metadata.name}-convert", "number: ${string(int(string(creds.data.token)))}"))

// TestPlantedSecretTokenLeaksNowhere plants a token in a Secret that a
// graph reads and fails on, then greps every output channel for it (and
// its base64 form): the instance's status, the Events, the log, the
// `run -o json` lines, and every view the TUI lists (tui.Views), each
// per-node view for every node. It fails on a view it cannot reach, and
// when the number of views rendered is not what tui.Views implies.
func TestPlantedSecretTokenLeaksNowhere(t *testing.T) {
	r := newEngRig(t)
	ctx := context.Background()
	plantSecret(t, r)
	file := r.writeFile("plant.yaml", plantedRGD)
	var out, logs engrun.Buffer
	run := r.startJSON([]string{file}, &out, &logs)
	e := run.E
	gvr := gvrOfGraph(t, waitGraph(t, e, "engplant"))
	r.createInstance(gvr, "EngPlant", "one", nil)
	nodes := waitPlantedFailed(t, e)

	channels := map[string]string{}
	for _, v := range renderEveryView(t, e, nodes) {
		channels["tui "+v.key()] = v.shown.Frame + "\n" + v.shown.Text
	}
	if err := run.Stop(); err != nil {
		t.Fatalf("headless run: %v", err)
	}
	inst, err := r.dyn.Resource(gvr).Namespace(r.ns).Get(ctx, "one", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	status, _ := json.Marshal(inst.Object["status"])
	channels["status"] = string(status)
	channels["events"] = eventsText(t, r)
	channels["run -o json"] = out.String()
	channels["log"] = logs.String()

	encoded := base64.StdEncoding.EncodeToString([]byte(plantedToken))
	for name, text := range channels {
		if strings.Contains(text, plantedToken) || strings.Contains(text, encoded) {
			t.Errorf("%s carries the planted token:\n%s", name, text)
		}
	}
	// The checks are not empty: each channel shows what it should.
	for name, want := range map[string]string{"run -o json": "made", "status": "tokenLength", "events": "convert",
		"tui instances": "one", "tui instance": "CONDITIONS", "tui instance/yaml": "tokenLength",
		"tui yaml/observed made": "********", "tui yaml/observed creds": "********", "tui inspect convert": "Error",
		"tui graphs": "engplant", "tui rgd/schema": "tokenLength", "tui rgd/yaml": "********",
		"tui plan": "/one", "tui plan/instance": "convert"} {
		if !strings.Contains(channels[name], want) {
			t.Errorf("%s lacks %q: the channel was not checked\n%s", name, want, channels[name])
		}
	}
}

// plantSecret creates the Secret "planted", its token also in the
// last-applied annotation kubectl apply would write.
func plantSecret(t *testing.T, r *engRig) {
	t.Helper()
	applied, _ := json.Marshal(map[string]any{"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "planted"}, "stringData": map[string]any{"token": plantedToken}})
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "planted",
		Annotations: map[string]string{"kubectl.kubernetes.io/last-applied-configuration": string(applied)}},
		StringData: map[string]string{"token": plantedToken}}
	if _, err := r.env.Kubernetes().CoreV1().Secrets(r.ns).Create(context.Background(), s, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// waitPlantedFailed waits until the instance is FAILED with every node of
// its graph known, and returns the node ids.
func waitPlantedFailed(t *testing.T, e *engine.Engine) []string {
	t.Helper()
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(200 * time.Millisecond) {
		for _, in := range e.Snapshot().Instances {
			if in.Key.Name == "one" && in.State == "FAILED" && len(in.Resources) == 4 {
				ids := make([]string, 0, len(in.Resources))
				for _, r := range in.Resources {
					ids = append(ids, r.ID)
				}
				return ids
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the instance never became FAILED with its 4 nodes:\n%s", engrun.Describe(e.Snapshot()))
		}
	}
}

func eventsText(t *testing.T, r *engRig) string {
	t.Helper()
	events, err := r.env.Kubernetes().CoreV1().Events(r.ns).List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var ev strings.Builder
	for _, x := range events.Items {
		ev.WriteString(x.InvolvedObject.Name + " " + x.Reason + " " + x.Message + "\n")
	}
	return ev.String()
}

// viewKeys are the keys that reach each view of tui.Views from the
// instance screen (overlays and the list: from the instance screen too),
// pressed in turn until the model says it shows the view, and the key that
// goes back to the instance screen from it. A view tui.Views lists and
// this map does not fails the test: add how to reach it here.
var viewKeys = map[string]struct {
	reach, leave []string
	// typed: reach is typed once, in order (a `:` command), then the
	// test waits for via (when set), presses then, and waits for the view.
	typed bool
	via   string
	then  []string
}{
	"instances":     {reach: []string{"esc"}, leave: []string{"enter"}},
	"graph/tree":    {reach: []string{"g"}},
	"graph/layers":  {reach: []string{"g"}},
	"inspect":       {reach: []string{"enter"}},
	"yaml/desired":  {reach: []string{"y"}},
	"yaml/observed": {reach: []string{"y"}},
	"yaml/diff":     {reach: []string{"y"}},
	"history":       {reach: []string{"H"}},
	"timeline":      {reach: []string{"t"}},
	"logs":          {reach: []string{"L"}},
	"instance":      {reach: []string{"i", "y"}},
	"instance/yaml": {reach: []string{"i", "y"}},
	"help":          {reach: []string{"?"}, leave: []string{"esc"}},
	"dialog":        {reach: []string{"ctrl+d"}, leave: []string{"esc"}}, // the delete dialog; esc cancels
	// The graphs screen and one graph's tabs: back to the list, D, enter
	// on the one graph; esc twice and enter come back to the instance.
	"graphs":     {reach: []string{"esc", "D"}, leave: []string{"esc", "enter"}},
	"rgd/graph":  {reach: []string{"esc", "D", "enter"}, leave: []string{"esc", "esc", "enter"}},
	"rgd/schema": {reach: []string{"esc", "D", "enter", "]"}, leave: []string{"esc", "esc", "enter"}},
	"rgd/status": {reach: []string{"esc", "D", "enter", "]", "]"}, leave: []string{"esc", "esc", "enter"}},
	"rgd/yaml":   {reach: []string{"esc", "D", "enter", "y"}, leave: []string{"esc", "esc", "enter"}},
	"rgd/events": {reach: []string{"esc", "D", "enter", "["}, leave: []string{"esc", "esc", "enter"}},
	// :plan plans the served graph file, as dry runs, in the engine.
	"plan":          {reach: planCommand, typed: true, leave: []string{"esc"}},
	"plan/instance": {reach: planCommand, typed: true, via: "plan", then: []string{"enter"}, leave: []string{"esc", "esc"}},
}

var planCommand = []string{":", "p", "l", "a", "n", "enter"}

// loaded says when a view that reads more than the snapshot has read it.
var loaded = map[string]string{"instance": "CONDITIONS", "instance/yaml": "apiVersion", "rgd/events": "EVENTS"}

// rendered is one view rendered for one node ("" for a view not per node).
type rendered struct {
	view, node string
	shown      tui.Shown
}

func (v rendered) key() string { return strings.TrimSpace(v.view + " " + v.node) }

// renderEveryView drives the real TUI over the engine to every view of
// tui.Views, each per-node view for every node, and fails unless it
// rendered exactly that many.
func renderEveryView(t *testing.T, e *engine.Engine, nodes []string) []rendered {
	t.Helper()
	return newDriver(t, e).renderEveryView(nodes)
}

func (d *driver) renderEveryView(nodes []string) []rendered {
	t := d.t
	t.Helper()
	d.until("the instance row", func(s tui.Shown) bool { return strings.Contains(s.Frame, "/one") })
	var out []rendered
	var wantKeys []string // the per-node views, for every node
	want := 0             // what tui.Views implies: per-node views once per node
	for _, v := range tui.Views() {
		want++
		if v.PerNode {
			want += len(nodes) - 1
		}
	}
	for _, v := range tui.Views() {
		if _, ok := viewKeys[v.Name]; !ok {
			t.Errorf("view %q of tui.Views is not rendered by this test: add how to reach it to viewKeys", v.Name)
			continue
		}
		if !v.PerNode {
			out = append(out, d.render(v.Name, false))
			continue
		}
		for i, id := range nodes {
			d.selectNode(i)
			out = append(out, d.render(v.Name, true))
			wantKeys = append(wantKeys, v.Name+" "+id)
		}
	}
	seen := map[string]bool{}
	for _, r := range out {
		seen[r.key()] = true
	}
	if len(out) != want || len(seen) != want {
		t.Errorf("rendered %d views (%d distinct), want %d (tui.Views over %d nodes)", len(out), len(seen), want, len(nodes))
	}
	for _, k := range wantKeys {
		if !seen[k] {
			t.Errorf("view %s was not rendered", k)
		}
	}
	return out
}

// driver sends keys to the real program and asks it what it shows.
type driver struct {
	t  *testing.T
	tm *teatest.TestModel
	// raw keeps what the program shows as it is (its ANSI too): the
	// text boundary's test looks for sequences stripping would hide.
	raw bool
	// written is every byte the program wrote to its terminal so far.
	written []byte
}

func newDriver(t *testing.T, e *engine.Engine) *driver {
	m := tui.NewModel(e, tui.Options{ConfigPath: "-", Theme: "dark", ASCII: true, NoColor: true})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(200, 60),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii)))
	t.Cleanup(func() { _ = tm.Quit() })
	return &driver{t: t, tm: tm}
}

func (d *driver) shown() tui.Shown {
	d.t.Helper()
	reply := make(chan tui.Shown, 1)
	d.tm.Send(tui.ShownRequest{Reply: reply})
	select {
	case s := <-reply:
		if !d.raw {
			s.Frame, s.Text = ansi.Strip(s.Frame), ansi.Strip(s.Text)
		}
		return s
	case <-time.After(30 * time.Second):
		d.t.Fatalf("the program did not answer a ShownRequest")
	}
	return tui.Shown{}
}

// output returns every byte the program wrote to its terminal so far.
func (d *driver) output() []byte {
	b, err := io.ReadAll(d.tm.Output())
	if err != nil {
		d.t.Fatal(err)
	}
	d.written = append(d.written, b...)
	return d.written
}

// until polls what the program shows until cond holds.
func (d *driver) until(what string, cond func(tui.Shown) bool) tui.Shown {
	d.t.Helper()
	var last tui.Shown
	for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if last = d.shown(); cond(last) {
			return last
		}
	}
	d.t.Fatalf("timed out waiting for %s; shown %v, node %q:\n%s", what, last.Views, last.Node, last.Frame)
	return last
}

func (d *driver) press(keys ...string) {
	for _, k := range keys {
		d.tm.Send(keyPress(k))
	}
}

// selectNode puts the graph's cursor on the i-th node.
func (d *driver) selectNode(i int) {
	d.press("home")
	for range i {
		d.press("j")
	}
}

// render reaches view (on the selected node when perNode), waits until it
// has read what it shows, checks that every view it names is one of
// tui.Views, and goes back to the instance screen.
func (d *driver) render(view string, perNode bool) rendered {
	d.t.Helper()
	keys := viewKeys[view]
	s := d.shown()
	if keys.typed {
		s = d.typeTo(view, keys.reach, keys.via, keys.then)
	}
	for i := 0; !slices.Contains(s.Views, view); i++ {
		if i == 8 {
			d.t.Fatalf("keys %v never showed view %q; shown %v:\n%s", keys.reach, view, s.Views, s.Frame)
		}
		d.press(keys.reach[i%len(keys.reach)])
		s = d.shown()
	}
	if w, ok := loaded[view]; ok {
		s = d.until(view+" read", func(s tui.Shown) bool { return strings.Contains(s.Text, w) })
	}
	node := ""
	if perNode {
		node = s.Node
	}
	names := map[string]bool{}
	for _, v := range tui.Views() {
		names[v.Name] = true
	}
	for _, v := range s.Views {
		if !names[v] {
			d.t.Errorf("the program shows view %q, which tui.Views does not list", v)
		}
	}
	d.press(keys.leave...)
	return rendered{view: view, node: node, shown: s}
}

// typeTo types keys once, in order, waits for via (when set), presses
// then, and waits for view.
func (d *driver) typeTo(view string, keys []string, via string, then []string) tui.Shown {
	d.t.Helper()
	d.press(keys...)
	if via != "" {
		d.until(via, func(s tui.Shown) bool { return slices.Contains(s.Views, via) })
		d.press(then...)
	}
	return d.until(view, func(s tui.Shown) bool { return slices.Contains(s.Views, view) })
}

// keyPress is the key message Bubble Tea sends for a key name.
func keyPress(k string) tea.KeyPressMsg {
	switch k {
	case "esc":
		return tea.KeyPressMsg{Code: tea.KeyEscape}
	case "enter":
		return tea.KeyPressMsg{Code: tea.KeyEnter}
	case "home":
		return tea.KeyPressMsg{Code: tea.KeyHome}
	case "ctrl+d":
		return tea.KeyPressMsg{Code: 'd', Mod: tea.ModCtrl}
	}
	if len([]rune(k)) != 1 {
		panic(fmt.Sprintf("keyPress: no key %q", k))
	}
	c := []rune(k)[0]
	return tea.KeyPressMsg{Code: c, Text: k}
}
