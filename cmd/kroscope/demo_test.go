package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"

	"github.com/kroscope/kroscope/engine"
	"github.com/kroscope/kroscope/headless"
)

// The demo through the headless runner: the examples that should converge
// do, and every instance line reaches ACTIVE.
func TestDemoHeadlessActive(t *testing.T) {
	var out bytes.Buffer
	f := demoFlags{headless: true}
	f.demo.Examples = []string{"webapp", "fanout"}
	f.h.ExitWhen = "active"
	f.h.Timeout = 3 * time.Minute // generous: a busy 2-core machine
	start := time.Now()
	if err := runDemo(context.Background(), f, logr.Discard(), &out); err != nil {
		t.Fatalf("demo --headless --examples webapp,fanout: %v\n%s", err, out.String())
	}
	t.Logf("all ACTIVE after %s", time.Since(start).Round(time.Millisecond))
	for _, name := range []string{"demo/shop", "demo/blog", "demo/clicks", "demo/orders"} {
		if !strings.Contains(out.String(), name+" IN_PROGRESS -> ACTIVE") && !strings.Contains(out.String(), name+" - -> ACTIVE") {
			t.Errorf("no ACTIVE transition for %s in:\n%s", name, out.String())
		}
	}
}

// With the example that fails on purpose, the run reports that instance's
// error and exits non-zero.
func TestDemoHeadlessBroken(t *testing.T) {
	var out bytes.Buffer
	f := demoFlags{headless: true}
	f.demo.Examples = []string{"broken", "webapp"}
	f.h.ExitWhen = "active"
	f.h.Timeout = 3 * time.Minute
	err := runDemo(context.Background(), f, logr.Discard(), &out)
	var ee *headless.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("want exit code 1, got %v\n%s", err, out.String())
	}
	for _, want := range []string{"flakies.kro.run/demo/flaky is FAILED", "division by zero", "quota"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestDemoRejectsBadFlags(t *testing.T) {
	for _, tc := range []struct {
		f    func(*demoFlags)
		want string
	}{
		{func(f *demoFlags) { f.headless = true; f.demo.Examples = []string{"nope"} }, `unknown example "nope"`},
		{func(f *demoFlags) { f.headless = true; f.demo.FailRate = 2 }, "--fail-rate"},
		{func(f *demoFlags) { f.h.ExitWhen = "active" }, "need --headless"},
	} {
		var f demoFlags
		tc.f(&f)
		err := runDemo(context.Background(), f, logr.Discard(), io.Discard)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v, want an error mentioning %q", err, tc.want)
		}
	}
}

// TestDemoHeadlessRunawayCEL: with a graph whose CEL is exponential, the
// headless demo exits within --timeout plus the shutdown grace, reports
// the FAILED resource with the expression and the limit, and the other
// examples' instances still reach ACTIVE.
func TestDemoHeadlessRunawayCEL(t *testing.T) {
	var out bytes.Buffer
	f := demoFlags{headless: true}
	f.demo.Examples = []string{"runaway", "webapp"}
	f.h.ExitWhen = "active"
	f.h.Timeout = 2 * time.Minute
	start := time.Now()
	err := runDemo(context.Background(), f, logr.Discard(), &out)
	took := time.Since(start)
	if took > f.h.Timeout+engine.ShutdownGrace {
		t.Errorf("took %v, more than --timeout %v plus the grace %v", took, f.h.Timeout, engine.ShutdownGrace)
	}
	var ee *headless.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("want exit code 1 (a FAILED instance), got %v\n%s", err, out.String())
	}
	for _, want := range []string{"runaways.kro.run/demo/spinner is FAILED", "probe", "CEL cost limit of 1000000", "--cel-cost-limit"} {
		if !strings.Contains(err.Error()+out.String(), want) {
			t.Errorf("output lacks %q: %v\n%s", want, err, out.String())
		}
	}
	for _, name := range []string{"demo/shop", "demo/blog"} {
		if !strings.Contains(out.String(), name+" IN_PROGRESS -> ACTIVE") && !strings.Contains(out.String(), name+" - -> ACTIVE") {
			t.Errorf("%s never reached ACTIVE:\n%s", name, out.String())
		}
	}
	t.Logf("exited after %v: %v", took.Round(time.Millisecond), err)
}

// `demo --help` says which examples load by default, and which only when
// named (issue 27 item 8: it said "default all but runaway:" and then
// listed runaway among them).
func TestDemoExamplesHelp(t *testing.T) {
	demoCmd, _, err := rootCmd.Find([]string{"demo"})
	if err != nil {
		t.Fatal(err)
	}
	const want = "examples to load, comma-separated (default broken,fanout,webapp; runaway only when named)"
	if got := demoCmd.Flags().Lookup("examples").Usage; got != want {
		t.Errorf("--examples usage = %q, want %q", got, want)
	}
	// the text above the flags says the same (it listed runaway among the
	// graphs demo loads)
	if long := strings.Join(strings.Fields(demoCmd.Long), " "); !strings.Contains(long, "graphs (broken, fanout, webapp; runaway only when named in --examples)") {
		t.Errorf("demo --help:\n%s", demoCmd.Long)
	}
}
