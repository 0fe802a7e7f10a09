package tui

import (
	"context"
	"fmt"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/tui/cmdrunner"
)

var benchStates = []string{"SYNCED", "SYNCED", "SYNCED", "WAITING_FOR_READINESS", "IN_PROGRESS", "PENDING", "ERROR", "SKIPPED"}

// benchObject is a Deployment-sized object, so memory figures are honest.
func benchObject(ns, name string, i int) map[string]any {
	return map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": name, "namespace": ns, "labels": map[string]any{"app": name, "kro.run/owned": "true", "index": strconv.Itoa(i)}},
		"spec": map[string]any{"replicas": int64(2), "selector": map[string]any{"matchLabels": map[string]any{"app": name}},
			"template": map[string]any{"metadata": map[string]any{"labels": map[string]any{"app": name}},
				"spec": map[string]any{"containers": []any{map[string]any{"name": "app", "image": "nginx:1.27", "ports": []any{map[string]any{"containerPort": int64(80)}},
					"env": []any{map[string]any{"name": "MODE", "value": "production"}, map[string]any{"name": "INDEX", "value": strconv.Itoa(i)}}}}}}},
	}
}

// fillStore writes n instances of r resources each into a real store.
func fillStore(s *state.Store, n, r int) []state.InstanceKey {
	s.SetStartup(state.Startup{Done: true})
	s.SetCluster(state.Cluster{Context: "bench"})
	s.SetMode(state.Mode{Reconciling: true})
	keys := make([]state.InstanceKey, n)
	for i := range n {
		ns := fmt.Sprintf("team-%02d", i%20)
		name := fmt.Sprintf("app-%04d", i)
		k := state.InstanceKey{Resource: webapps, Namespace: ns, Name: name}
		keys[i] = k
		res := make([]state.Resource, r)
		for j := range res {
			id := fmt.Sprintf("res%d", j)
			var deps []string
			if j > 0 {
				deps = []string{fmt.Sprintf("res%d", j-1)}
			}
			if j > 2 {
				deps = append(deps, "res0")
			}
			obj := pk(benchObject(ns, name+"-"+id, i))
			res[j] = state.Resource{ID: id, APIVersion: "apps/v1", Kind: "Deployment", Name: name + "-" + id, Namespace: ns,
				Dependencies: deps, State: benchStates[(i+j)%len(benchStates)], Desired: obj, Observed: obj,
				FirstApplied: fixedNow.Add(time.Duration(j) * time.Second), Ready: fixedNow.Add(time.Duration(j+1) * time.Second)}
		}
		s.UpdateInstance(k, func(in *state.Instance) {
			in.Kind, in.Graph, in.State = "WebApp", "webapp", benchStates[i%len(benchStates)]
			in.Message = "waiting for res3: readyWhen is false"
			in.Resources = res
			in.Created, in.LastReconcile, in.LastDuration = fixedNow.Add(-time.Hour), fixedNow, 20*time.Millisecond
		})
	}
	// Table order, so keys[:40] are the rows on screen.
	slices.SortFunc(keys, func(a, b state.InstanceKey) int {
		if a.Less(b) {
			return -1
		}
		return 1
	})
	return keys
}

// benchSizes are the store sizes the UI benchmarks run at: instances × 10
// resources each.
var benchSizes = []int{1000, 10000}

func sizeName(n int) string { return fmt.Sprintf("%dx10", n) }

// BenchmarkView measures one frame of the instances screen at 200×50 over
// 1,000 and 10,000 instances × 10 resources, after one instance changed
// (snapshot taken, row re-rendered): the per-frame cost while reconciling.
func BenchmarkView(b *testing.B) {
	for _, n := range benchSizes {
		for _, scr := range []string{"instances", "instance"} {
			b.Run(sizeName(n)+"/"+scr, func(b *testing.B) { benchView(b, n, scr) })
		}
	}
}

func benchView(b *testing.B, n int, scr string) {
	s := state.NewStore()
	keys := fillStore(s, n, 10)
	m := newModel(&storeBackend{Store: s}, Options{Theme: "dark", ConfigPath: "-", Now: func() time.Time { return fixedNow }})
	m.Update(tea.WindowSizeMsg{Width: 200, Height: 50})
	if scr == "instance" {
		press(m, "j", "enter")
	}
	m.Frame()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		k := keys[(i*7)%40]
		s.UpdateInstance(k, func(in *state.Instance) { in.Message = "changed " + strconv.Itoa(i) })
		m.refresh()
		m.sync()
		if len(m.Frame()) == 0 {
			b.Fatal("empty frame")
		}
	}
}

// BenchmarkChangeToFrame drives the model like Bubble Tea does (commands
// run on goroutines, messages processed one at a time, a frame rendered
// after each) while a writer changes a real state.Store 200 times a
// second. It reports the time from each write to the first frame that
// shows it, at 1,000 and 10,000 instances × 10 resources.
func BenchmarkChangeToFrame(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(sizeName(n), func(b *testing.B) { benchChangeToFrame(b, n) })
	}
}

func benchChangeToFrame(b *testing.B, n int) {
	const rate, seconds = 200, 3
	for range b.N {
		m, s, keys, msgs, run := benchLoop(n, 1024)
		run(m.Init())
		var mu sync.Mutex
		written := map[int]time.Time{}
		done := make(chan struct{})
		go func() {
			defer close(done)
			tick := time.NewTicker(time.Second / rate)
			defer tick.Stop()
			for seq := range rate * seconds {
				<-tick.C
				mu.Lock()
				written[seq] = time.Now()
				mu.Unlock()
				// The 40 first instances are the visible rows.
				s.UpdateInstance(keys[seq%40], func(in *state.Instance) { in.Message = fmt.Sprintf("seq-%06d", seq) })
			}
		}()
		re := regexp.MustCompile(`seq-(\d{6})`)
		seen := map[int]bool{}
		var lat, work []time.Duration
		finish := time.After(seconds*time.Second + 2*time.Second)
	loop:
		for {
			select {
			case msg := <-msgs:
				t0 := time.Now()
				_, cmd := m.Update(msg)
				run(cmd)
				frame := m.View().Content
				now := time.Now()
				work = append(work, now.Sub(t0))
				for _, g := range re.FindAllStringSubmatch(frame, -1) {
					seq, _ := strconv.Atoi(g[1])
					if seen[seq] {
						continue
					}
					seen[seq] = true
					mu.Lock()
					lat = append(lat, now.Sub(written[seq]))
					mu.Unlock()
				}
			case <-finish:
				break loop
			}
		}
		<-done
		if m.feed.unsub != nil {
			m.feed.unsub()
		}
		slices.Sort(lat)
		if len(lat) == 0 {
			b.Fatal("no change reached the screen")
		}
		p := func(q float64) float64 { return float64(lat[int(q*float64(len(lat)-1))].Microseconds()) / 1000 }
		b.ReportMetric(p(0.5), "p50-ms")
		b.ReportMetric(p(0.99), "p99-ms")
		b.ReportMetric(p(1), "max-ms")
		b.ReportMetric(float64(len(lat))/float64(rate*seconds)*100, "%shown")
		// The model's own share: Update plus View per message.
		slices.Sort(work)
		b.ReportMetric(float64(work[int(0.99*float64(len(work)-1))].Microseconds())/1000, "update+view-p99-ms")
	}
}

// BenchmarkMemory reports the live heap with 1,000 and 10,000 instances ×
// 10 resources in a real store, a snapshot, and the model after rendering
// each screen.
func BenchmarkMemory(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(sizeName(n), func(b *testing.B) { benchMemory(b, n) })
	}
}

func benchMemory(b *testing.B, n int) {
	for range b.N {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		s := state.NewStore()
		fillStore(s, n, 10)
		m := newModel(&storeBackend{Store: s}, Options{Theme: "dark", ConfigPath: "-", Now: func() time.Time { return fixedNow }})
		m.Update(tea.WindowSizeMsg{Width: 200, Height: 50})
		m.Frame()
		for i := 0; i < n; i += 45 { // scroll through every row once
			press(m, "pgdown")
			m.Frame()
		}
		press(m, "enter", "y")
		m.Frame()
		press(m, "y", "y")
		m.Frame()
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "heap-MB")
		runtime.KeepAlive(m)
		runtime.KeepAlive(s)
	}
}

// BenchmarkViewOnly is View alone (what Bubble Tea calls per frame) once
// Update has computed the panes: joining their lines.
func BenchmarkViewOnly(b *testing.B) {
	for _, n := range benchSizes {
		for _, scr := range []string{"instances", "instance"} {
			b.Run(sizeName(n)+"/"+scr, func(b *testing.B) { benchViewOnly(b, n, scr) })
		}
	}
}

func benchViewOnly(b *testing.B, n int, scr string) {
	s := state.NewStore()
	fillStore(s, n, 10)
	m := newModel(&storeBackend{Store: s}, Options{Theme: "dark", ConfigPath: "-", Now: func() time.Time { return fixedNow }})
	m.Update(tea.WindowSizeMsg{Width: 200, Height: 50})
	if scr == "instance" {
		press(m, "j", "enter")
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		if len(m.View().Content) == 0 {
			b.Fatal("empty frame")
		}
	}
}

// benchLoop is a model over a store of n instances × 10 resources, at
// 200×50, with the commands it returns run as Bubble Tea would: each in a
// goroutine, their messages sent to msgs.
func benchLoop(n, buffer int) (m *Model, s *state.Store, keys []state.InstanceKey, msgs chan tea.Msg, run func(tea.Cmd)) {
	s = state.NewStore()
	keys = fillStore(s, n, 10)
	m = newModel(&storeBackend{Store: s}, Options{Theme: "dark", ConfigPath: "-"})
	m.Update(tea.WindowSizeMsg{Width: 200, Height: 50})
	msgs = make(chan tea.Msg, buffer)
	return m, s, keys, msgs, cmdrunner.New(context.Background(), msgs)
}
