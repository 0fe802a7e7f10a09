package e2e

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/teatest/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kroscope/kroscope/engine"
	"github.com/kroscope/kroscope/engine/logsink"
	"github.com/kroscope/kroscope/reconciler/client"
	"github.com/kroscope/kroscope/tui"
)

// plantedRGD reads a planted Secret: "made" copies its token into a Secret
// whose readyWhen returns the Secret's token (a string, not a bool; dyn() gets it
// past the type check), and "convert"
// turns the token into an int (a CEL conversion error).
const plantedRGD = `apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata:
  name: engplant
spec:
  schema:
    apiVersion: v1alpha1
    kind: EngPlant
  resources:
  - id: creds
    externalRef:
      apiVersion: v1
      kind: Secret
      metadata:
        name: planted
  - id: made
    readyWhen:
    - ${dyn(string(made.data.token))}
    template:
      apiVersion: v1
      kind: Secret
      metadata:
        name: ${schema.metadata.name}-made
      stringData:
        token: ${string(creds.data.token)}
  - id: convert
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata:
        name: ${schema.metadata.name}-convert
      data:
        n: ${string(int(string(creds.data.token)))}
`

// TestPlantedSecretTokenLeaksNowhere plants a token in a Secret that a
// graph reads and fails on, then greps every output channel for it (and
// its base64 form): the instance's status, the Events, the log, the
// `run -o json` lines and every TUI view of every node.
func TestPlantedSecretTokenLeaksNowhere(t *testing.T) {
	const token = "pl4nted-T0KEN-7x9q"
	encoded := base64.StdEncoding.EncodeToString([]byte(token))
	r := newEngRig(t)
	ctx := context.Background()
	kube := r.env.Kubernetes()
	if _, err := kube.CoreV1().Secrets(r.ns).Create(ctx, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "planted"},
		StringData: map[string]string{"token": token}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	file := r.writeFile("plant.yaml", plantedRGD)
	set, err := client.NewSet(r.cfg)
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	e, err := engine.New(engine.Options{ClientSet: set, RGDPaths: []string{file}, Namespace: r.ns, DisableLease: true,
		Log: logsink.New(logsink.Options{Writer: &syncWriter{w: &logs}, Verbosity: 1})})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	done := make(chan error, 1)
	runCtx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	go func() {
		done <- engine.RunHeadless(runCtx, e, &syncWriter{w: &out}, engine.HeadlessOptions{Output: "json"})
	}()
	g := waitGraph(t, e, "engplant")
	gvr := gvrOfGraph(t, g)
	r.createInstance(gvr, "EngPlant", "one", nil)
	failed := func() bool {
		for _, in := range e.Snapshot().Instances {
			if in.Key.Name == "one" && in.State == "FAILED" {
				return true
			}
		}
		return false
	}
	for deadline := time.Now().Add(2 * time.Minute); !failed(); time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the instance never became FAILED:\n%s", describeSnapshot(e.Snapshot()))
		}
	}
	channels := map[string]string{}
	inst, err := r.dyn.Resource(gvr).Namespace(r.ns).Get(ctx, "one", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	status, _ := json.Marshal(inst.Object["status"])
	channels["status"] = string(status)
	events, err := kube.CoreV1().Events(r.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var ev strings.Builder
	for _, x := range events.Items {
		ev.WriteString(x.Reason + " " + x.Message + "\n")
	}
	channels["events"] = ev.String()

	// Every TUI view: the list, the instance, each node's inspect and YAML
	// views (desired, observed, diff), its history and the log.
	m := tui.NewModel(e, tui.Options{ConfigPath: "-", Theme: "dark", ASCII: true, NoColor: true})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(160, 60),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii)))
	t.Cleanup(func() { _ = tm.Quit() })
	var screens strings.Builder
	frame := func() {
		screens.WriteString(screenUntil(t, tm, "a frame", func(string) bool { return true }) + "\n")
	}
	screenUntil(t, tm, "the instance row", func(s string) bool { return strings.Contains(s, "/one") })
	frame()
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	frame()
	for range 3 { // the three nodes
		for _, k := range []rune{'y', 'y', 'y', 'H', 'L'} {
			tm.Send(tea.KeyPressMsg{Code: k, Text: string(k)})
			frame()
		}
		tm.Send(tea.KeyPressMsg{Code: 'e', Text: "e"})
		frame()
		tm.Send(tea.KeyPressMsg{Code: 'j', Text: "j"})
		frame()
	}
	channels["tui"] = screens.String()
	_ = tm.Quit()
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("headless run: %v", err)
	}
	channels["run -o json"] = out.String()
	channels["log"] = logs.String()

	for name, text := range channels {
		if strings.Contains(text, token) || strings.Contains(text, encoded) {
			t.Errorf("%s carries the planted token:\n%s", name, text)
		}
	}
	// The checks are not empty: the failure is reported where it should be.
	for name, want := range map[string]string{"run -o json": "made", "status": "not a boolean", "events": "convert", "tui": "one"} {
		if !strings.Contains(channels[name], want) {
			t.Errorf("%s lacks %q: the channel was not checked\n%s", name, want, channels[name])
		}
	}
}

// syncWriter serializes writes from the engine's goroutines.
type syncWriter struct {
	mu sync.Mutex
	w  *bytes.Buffer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
