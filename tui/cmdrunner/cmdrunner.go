// Package cmdrunner runs a Bubble Tea model's commands as the Bubble Tea
// runtime would, for benchmarks that drive a model without a terminal:
// each command in a goroutine of its own, a batch split into its commands,
// every message sent to one channel for the benchmark's loop to Update.
package cmdrunner

import (
	"context"

	tea "charm.land/bubbletea/v2"
)

// New returns a function that runs a command (nil is nothing) and sends
// what it returns to msgs; a send waits until ctx is done.
func New(ctx context.Context, msgs chan<- tea.Msg) func(tea.Cmd) {
	var run func(tea.Cmd)
	run = func(c tea.Cmd) {
		if c == nil {
			return
		}
		go func() {
			switch msg := c().(type) {
			case nil:
			case tea.BatchMsg:
				for _, c := range msg {
					run(c)
				}
			default:
				select {
				case msgs <- msg:
				case <-ctx.Done():
				}
			}
		}()
	}
	return run
}
