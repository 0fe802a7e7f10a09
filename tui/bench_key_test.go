package tui

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/kroscope/kroscope/engine/state"
)

// keyAt is a key press waiting in the program's message queue, stamped with
// when it was typed.
type keyAt struct {
	key tea.KeyPressMsg
	at  time.Time
}

// benchKeys is what a user types while instances roll out: moving, paging,
// jumping to the ends, and typing a filter (which refilters every row).
var benchKeys = []string{"j", "j", "j", "pgdown", "k", "pgup", "G", "g", "/", "t", "e", "a", "m", "enter", "j", "esc", "s", "s", "j", "N"}

// BenchmarkKeyToFrame drives the model like Bubble Tea does (one message
// queue, commands on goroutines, a frame rendered after each message) while
// instances all over the list change 200 times a second, as during a
// rollout, and a key is typed every 20 ms. It reports the time from each key
// press to the frame drawn after it: what the user waits for, queueing
// behind the refreshes included. Targets: p99 ≤ 50 ms at 1,000 instances,
// ≤ 100 ms at 10,000.
func BenchmarkKeyToFrame(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(sizeName(n), func(b *testing.B) { benchKeyToFrame(b, n) })
	}
}

func benchKeyToFrame(b *testing.B, n int) {
	const rate, seconds, keyEvery = 200, 4, 20 * time.Millisecond
	for range b.N {
		m, s, keys, msgs, run := benchLoop(n, 4096)
		run(m.Init())
		m.View()
		stop := make(chan struct{})
		writerDone := make(chan struct{})
		go func() { // the rollout: changes anywhere in the list
			defer close(writerDone)
			rnd := rand.New(rand.NewSource(1))
			tick := time.NewTicker(time.Second / rate)
			defer tick.Stop()
			for seq := 0; ; seq++ {
				select {
				case <-stop:
					return
				case <-tick.C:
				}
				st := benchStates[seq%len(benchStates)]
				s.UpdateInstance(keys[rnd.Intn(len(keys))], func(in *state.Instance) {
					in.State, in.Message = st, fmt.Sprintf("rolling out, step %d", seq)
				})
			}
		}()
		typistDone := make(chan struct{})
		go func() {
			defer close(typistDone)
			tick := time.NewTicker(keyEvery)
			defer tick.Stop()
			for i := 0; i < int(seconds*time.Second/keyEvery); i++ {
				<-tick.C
				msgs <- keyAt{key: keyMsg(benchKeys[i%len(benchKeys)]), at: time.Now()}
			}
		}()
		var lat []time.Duration
		finish := time.After(seconds*time.Second + time.Second)
	loop:
		for {
			select {
			case msg := <-msgs:
				k, isKey := msg.(keyAt)
				if isKey {
					msg = k.key
				}
				_, cmd := m.Update(msg)
				run(cmd)
				_ = m.View()
				if isKey {
					lat = append(lat, time.Since(k.at))
				}
			case <-finish:
				break loop
			}
		}
		close(stop)
		<-writerDone
		<-typistDone
		if m.feed.unsub != nil {
			m.feed.unsub()
		}
		if len(lat) == 0 {
			b.Fatal("no key reached the screen")
		}
		slices.Sort(lat)
		p := func(q float64) float64 { return float64(lat[int(q*float64(len(lat)-1))].Microseconds()) / 1000 }
		b.ReportMetric(p(0.5), "p50-ms")
		b.ReportMetric(p(0.99), "p99-ms")
		b.ReportMetric(p(1), "max-ms")
	}
}
