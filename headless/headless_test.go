package headless

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"

	"github.com/kroscope/kroscope/engine"
	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/reconciler/client"
)

func TestPrinterText(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	key := state.InstanceKey{Resource: "webapps.kro.run", Namespace: "ns", Name: "web"}
	snap := &state.Snapshot{
		Graphs: []state.Graph{{Name: "broken", Err: "resource x: bad"}},
		Instances: []*state.Instance{{Key: key, Graph: "webapp", History: []state.Transition{
			{At: at, To: "IN_PROGRESS", Message: "waiting for deployment", Duration: 12 * time.Millisecond},
			{At: at.Add(time.Second), From: "IN_PROGRESS", To: "ACTIVE", Duration: 3 * time.Millisecond},
		}}},
	}
	var buf bytes.Buffer
	p := &printer{w: &buf, last: map[state.InstanceKey]time.Time{}, graphErr: map[string]string{}}
	p.print(snap)
	p.print(snap) // nothing new: nothing printed twice
	p.print(&state.Snapshot{Graphs: snap.Graphs})
	out := buf.String()
	want := []string{
		"graph broken: resource x: bad",
		"03:04:05.000 webapps.kro.run/ns/web - -> IN_PROGRESS: waiting for deployment (12ms)",
		"03:04:06.000 webapps.kro.run/ns/web IN_PROGRESS -> ACTIVE (3ms)",
		"webapps.kro.run/ns/web removed",
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != len(want) {
		t.Fatalf("got %d lines:\n%s", len(lines), out)
	}
	for i, w := range want {
		if !strings.Contains(lines[i], w) {
			t.Errorf("line %d = %q, want it to contain %q", i, lines[i], w)
		}
	}
}

func TestPrinterJSON(t *testing.T) {
	key := state.InstanceKey{Resource: "webapps.kro.run", Namespace: "ns", Name: "web"}
	snap := &state.Snapshot{Instances: []*state.Instance{{Key: key, Graph: "webapp", History: []state.Transition{
		{At: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), To: "FAILED", Message: "bad CEL"},
	}}}}
	var buf bytes.Buffer
	p := &printer{w: &buf, json: true, last: map[state.InstanceKey]time.Time{}, graphErr: map[string]string{}}
	p.print(snap)
	want := `{"time":"2026-01-02T03:04:05Z","event":"transition","instance":"webapps.kro.run/ns/web","resource":"webapps.kro.run","namespace":"ns","name":"web","graph":"webapp","to":"FAILED","message":"bad CEL","reconcileDuration":"0s"}` + "\n"
	if buf.String() != want {
		t.Errorf("got  %s\nwant %s", buf.String(), want)
	}
}

// fakeSet is an in-memory client set with no graphs in it.
func fakeSet() *client.Set {
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{})
	return client.NewSetFromClients(client.Clients{Dynamic: dyn, Discovery: nil})
}

func TestRunHeadlessWithoutGraphsIsFatal(t *testing.T) {
	e, err := engine.New(engine.Options{ClientSet: fakeSet(), DisableLease: true})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err = Run(ctx, e, &buf, Options{ExitWhen: "active"})
	var ee *ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(ee.Msg, "no graphs") {
		t.Fatalf("err = %v, want exit 1 saying there are no graphs", err)
	}
	if !strings.Contains(buf.String(), "fatal: no graphs to serve") {
		t.Errorf("output does not report the fatal error:\n%s", buf.String())
	}
	if f := e.Snapshot().Fatal; f == nil || f.Hint == "" {
		t.Errorf("state Fatal = %+v, want one with a hint", f)
	}
}

func TestRunHeadlessRejectsBadOptions(t *testing.T) {
	e, err := engine.New(engine.Options{ClientSet: fakeSet(), DisableLease: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := Run(context.Background(), e, &bytes.Buffer{}, Options{Output: "yaml"}); err == nil {
		t.Error("output yaml accepted")
	}
	if err := Run(context.Background(), e, &bytes.Buffer{}, Options{ExitWhen: "done"}); err == nil {
		t.Error("exit-when done accepted")
	}
}
