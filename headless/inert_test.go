package headless

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/termtext/termtexttest"
)

// staticEngine serves one snapshot and runs until cancelled.
type staticEngine struct{ snap *state.Snapshot }

func (e staticEngine) Run(ctx context.Context) error        { <-ctx.Done(); return nil }
func (e staticEngine) Snapshot() *state.Snapshot            { return e.snap }
func (e staticEngine) Subscribe() (<-chan struct{}, func()) { return make(chan struct{}), func() {} }

// TestRunWritesClusterTextInert: every sequence planted in the names,
// messages and errors of a snapshot reaches the text and JSON output
// escaped, written straight to the writer (no escaping writer between),
// and the JSON lines stay valid.
func TestRunWritesClusterTextInert(t *testing.T) {
	payload := termtexttest.Payload()
	key := state.InstanceKey{Resource: "webapps.kro.run", Namespace: "ns", Name: "web"}
	snap := &state.Snapshot{
		Startup: state.Startup{Done: true},
		Graphs:  []state.Graph{{Name: "broken", Err: "resource x: bad"}},
		Instances: []*state.Instance{{Key: key, Graph: "webapp", State: "FAILED", Message: "no such key: x", History: []state.Transition{
			{At: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), To: "FAILED", Message: "no such key: x"},
		}}},
	}
	termtexttest.Plant(snap, payload, "Resource", "Namespace", "Name", "State", "To", "From")
	for _, output := range []string{"text", "json"} {
		var buf bytes.Buffer
		err := Run(context.Background(), staticEngine{snap}, &buf, Options{Output: output, ExitWhen: "active", Timeout: time.Minute})
		if err == nil {
			t.Fatalf("%s: a FAILED instance ended the run without an error", output)
		}
		for name, text := range map[string]string{output: buf.String(), output + " exit error": err.Error()} {
			if bad := termtexttest.Unsafe(text); len(bad) > 0 {
				t.Errorf("%s carries %v raw:\n%q", name, bad, text)
			}
			var decoded strings.Builder // what a JSON reader (jq -r) prints
			if output == "json" && name == output {
				for _, l := range strings.Split(strings.TrimSpace(text), "\n") {
					var m map[string]any
					if err := json.Unmarshal([]byte(l), &m); err != nil {
						t.Errorf("not JSON: %v: %q", err, l)
					}
					decoded.WriteString(m["message"].(string) + "\n")
				}
				text = decoded.String()
				if bad := termtexttest.Unsafe(text); len(bad) > 0 {
					t.Errorf("the JSON's decoded messages carry %v raw", bad)
				}
			}
			if missing := termtexttest.Escaped(text); len(missing) > 0 {
				t.Errorf("%s does not show %v escaped:\n%s", name, missing, text)
			}
		}
	}
}
