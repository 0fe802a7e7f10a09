package e2e

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/colorprofile"
	"github.com/charmbracelet/x/exp/teatest/v2"
	"k8s.io/client-go/rest"

	"github.com/kroscope/kroscope/engine"
	"github.com/kroscope/kroscope/reconciler/client"
	"github.com/kroscope/kroscope/test/graphs"
	"github.com/kroscope/kroscope/tui"
)

// fail500 answers every write to ConfigMaps with the API server's 500
// Status, as an overloaded etcd does.
type fail500 struct{ next http.RoundTripper }

func (f fail500) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet && strings.Contains(req.URL.Path, "/configmaps") {
		body := `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"etcdserver: request timed out","reason":"InternalError","code":500}`
		return &http.Response{StatusCode: 500, Status: "500 Internal Server Error", Header: http.Header{"Content-Type": {"application/json"}},
			Body: io.NopCloser(bytes.NewBufferString(body)), Request: req}, nil
	}
	return f.next.RoundTrip(req)
}

// "Per-instance logs (L) are empty even while every write fails with a
// 500": the instance's Logs tab shows each reconcile's decisions and the
// failed calls with their HTTP status and the server's message.
func TestTUIInstanceLogsShowFailedCalls(t *testing.T) {
	rig := newEngRig(t)
	rig.writeFile("chain.yaml", graphs.Chain("tui-logs", "TuiLogs"))
	run := rig.start(func(o *engine.Options) {
		o.RGDPaths = []string{rig.dir}
		cfg := rest.CopyConfig(rig.cfg)
		cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return fail500{next: rt} })
		set, err := client.NewSet(cfg)
		if err != nil {
			t.Fatal(err)
		}
		o.ClientSet = set
	})
	gvr := run.graphServed("tui-logs")
	rig.createInstance(gvr, "TuiLogs", "flaky", nil)

	m := tui.NewModel(run.e, tui.Options{ConfigPath: "-", Theme: "dark", ASCII: true, NoColor: true})
	tm := teatest.NewTestModel(t, m, teatest.WithInitialTermSize(220, 40),
		teatest.WithProgramOptions(tea.WithColorProfile(colorprofile.Ascii)))
	t.Cleanup(func() { _ = tm.Quit() })
	screenUntil(t, tm, "the instance row", func(s string) bool { return strings.Contains(s, "/flaky") })
	tm.Send(tea.KeyPressMsg{Code: tea.KeyEnter})
	tm.Send(tea.KeyPressMsg{Code: 'L', Text: "L"})
	screen := screenUntil(t, tm, "the failed call in the instance's log", func(s string) bool {
		return strings.Contains(s, "PATCH configmaps/flaky-a: HTTP 500 Internal Server Error: etcdserver: request timed out") &&
			strings.Contains(s, "reconcile ") && strings.Contains(s, "a: ") && strings.Contains(s, "-> ERROR")
	})
	if !strings.Contains(screen, "ERROR") {
		t.Fatalf("the failed call does not name the object:\n%s", screen)
	}
}
