package main

import (
	"github.com/kroscope/kroscope/engine"
	"github.com/kroscope/kroscope/tui"
)

// The TUI finds the engine's plan and apply actions by type assertion:
// these fail to compile when a signature drifts, instead of the actions
// going missing at run time.
var (
	_ tui.PlanRunner   = (*engine.Engine)(nil)
	_ tui.GraphApplier = (*engine.Engine)(nil)
)
