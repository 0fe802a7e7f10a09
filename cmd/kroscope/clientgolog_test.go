package main

import (
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr"
	"github.com/go-logr/logr/funcr"
	"k8s.io/klog/v2"
)

// client-go's lines reach the logger set last, with their names and
// values, and setting one while client-go logs from other goroutines is
// no data race (the race detector fails this test otherwise).
func TestClientGoLinesReachTheLoggerSetLast(t *testing.T) {
	var mu sync.Mutex
	got := map[string][]string{}
	capture := func(who string) logr.Logger {
		return funcr.New(func(prefix, args string) {
			mu.Lock()
			defer mu.Unlock()
			got[who] = append(got[who], prefix+" "+args)
		}, funcr.Options{})
	}
	setClientGoLogger(capture("a"))
	klog.Background().WithName("rest").WithValues("verb", "GET").Info("first")
	setClientGoLogger(capture("b"))
	klog.Background().WithName("rest").WithValues("verb", "PUT").Info("second")

	if len(got["a"]) != 1 || !strings.Contains(got["a"][0], "rest") || !strings.Contains(got["a"][0], `"verb"="GET"`) {
		t.Errorf("first logger got %q, want the first line with its name and values", got["a"])
	}
	if len(got["b"]) != 1 || !strings.Contains(got["b"][0], `"msg"="second"`) {
		t.Errorf("second logger got %q, want only the second line", got["b"])
	}

	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
				klog.FromContext(t.Context()).Info("background")
			}
		}
	}()
	for range 100 {
		setClientGoLogger(logr.Discard())
	}
	close(stop)
	wg.Wait()
}
