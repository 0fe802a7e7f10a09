package demo

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/kroscope/kroscope/engine"
	"github.com/kroscope/kroscope/plan"
	"github.com/kroscope/kroscope/reconciler"
	"github.com/kroscope/kroscope/test/prereq"
)

// The demo's :plan shows what the change does (#38: every change was
// "dry run is not supported by the demo"): docs/plan.md's webapp-v2 over
// the demo's shop and blog gives the diffs the documented plan on a real
// API server gives.
func TestPlanOnTheDemo(t *testing.T) {
	d, err := New(Options{Examples: []string{"webapp"}, Log: logr.Discard()})
	if err != nil {
		t.Fatal(err)
	}
	e, err := engine.New(d.EngineOptions(2, logr.Discard()))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	engineDone, demoDone := make(chan error, 1), make(chan error, 1)
	go func() { engineDone <- e.Run(ctx) }()
	go func() { demoDone <- d.Run(ctx) }()
	defer func() {
		cancel()
		<-engineDone
		<-demoDone
	}()
	waitActive(t, e, 2)

	plans, err := e.Plan(ctx, filepath.Join(prereq.RepoRoot(), "test", "plan", "testdata", "webapp-v2.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := plan.Text(&b, plans); err != nil {
		t.Fatal(err)
	}
	text := b.String()
	for _, want := range []string{
		"~ ConfigMap demo/blog-config (config)",
		`+ data.MOTD: "hello from kroscope (v2)"`,
		"+ ConfigMap demo/shop-banner (banner)",
		"- Ingress demo/shop (ingress)",
		"spec.replicas: maximum lowered from 20 to 2",
		"Plan: 2 to create, 2 to change, 1 to prune, across 2 instances; 2 would fail.",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("the plan lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "dry run") {
		t.Errorf("the plan mentions dry runs:\n%s", text)
	}
}

// waitActive waits until n instances are ACTIVE.
func waitActive(t *testing.T, e *engine.Engine, n int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		active := 0
		for _, in := range e.Snapshot().Instances {
			if in.State == reconciler.InstanceStateActive {
				active++
			}
		}
		if active >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d instances ACTIVE after 2 minutes", active, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
