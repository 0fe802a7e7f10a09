package tui

import "github.com/kroscope/kroscope/engine/mask"

// maskSecrets returns a copy of v in which every Secret's data and
// stringData values are replaced by mask (see mask.Secrets).
func maskSecrets(v any, m string, secret bool) any { return mask.Secrets(v, m, secret) }

// lastApplied is kubectl's last-applied-configuration annotation.
const lastApplied = mask.LastApplied
