package metrics

import (
	"context"
	"io"
	"net/http"
	"runtime"
	"strings"
	"testing"
)

// TestServeExposesMemoryAndQueue scrapes /metrics: the Go runtime's memory
// figures, the process's resident memory and the engine's queue gauges are
// served.
func TestServeExposesMemoryAndQueue(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, err := Serve(ctx, "127.0.0.1:0", nil)
	if err != nil {
		t.Fatal(err)
	}
	QueueDepth.Set(17)
	InFlight.Set(3)
	resp, err := http.Get("http://" + addr.String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"go_memstats_heap_inuse_bytes ", "go_goroutines ", "kroscope_queue_depth 17", "kroscope_reconciles_in_flight 3"}
	if runtime.GOOS == "linux" {
		want = append(want, "process_resident_memory_bytes ")
	}
	for _, w := range want {
		if !strings.Contains(string(body), "\n"+w) {
			t.Errorf("/metrics has no line starting %q", w)
		}
	}
}
