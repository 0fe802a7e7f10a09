package probes

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestServe(t *testing.T) {
	var ready atomic.Bool
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, err := Serve(ctx, "127.0.0.1:0", func() error { return nil }, func() error {
		if !ready.Load() {
			return errors.New("starting: loading graphs")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get("http://" + addr.String() + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/healthz"); code != 200 || body != "ok" {
		t.Errorf("/healthz = %d %q, want 200 ok", code, body)
	}
	if code, body := get("/readyz"); code != 500 || strings.Contains(body, "loading graphs") {
		t.Errorf("/readyz not ready = %d %q, want 500 without the reason (the aggregate withholds it)", code, body)
	}
	if code, body := get("/readyz/engine"); code != 500 || !strings.Contains(body, "loading graphs") {
		t.Errorf("/readyz/engine not ready = %d %q, want 500 with the reason", code, body)
	}
	if code, body := get("/readyz?verbose"); code != 500 || !strings.Contains(body, "[-]engine failed") {
		t.Errorf("/readyz?verbose = %d %q, want the failing check named", code, body)
	}
	ready.Store(true)
	if code, _ := get("/readyz"); code != 200 {
		t.Errorf("/readyz ready = %d, want 200", code)
	}
	if code, _ := get("/metrics"); code != 404 {
		t.Errorf("/metrics = %d, want 404 (metrics have their own address)", code)
	}
	cancel()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, err := http.Get("http://" + addr.String() + "/healthz"); err != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("still serving after the context was cancelled")
		}
	}
}

func TestServeBadAddress(t *testing.T) {
	if _, err := Serve(context.Background(), "256.0.0.1:http", func() error { return nil }, func() error { return nil }); err == nil {
		t.Fatal("a bad address was accepted")
	}
}
