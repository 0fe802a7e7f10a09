package tui

import (
	"strings"
	"testing"
)

// g shows every dependency (a fan-in's other parent too) layer by layer,
// and the cursor and inspector keep working; g again goes back to the tree
// on the same node.
func TestLayeredViewNamesEveryParent(t *testing.T) {
	tm, _ := flowOver(t, only(fixture(), "shop"), Options{}, 220, 40)
	send(tm, "enter", "g", "end")
	var out string
	eventually(t, "the layered view", func() bool { out = tmFrame(t, tm); return strings.Contains(out, "GRAPH by layer") })
	for _, want := range []string{"3 └─ ⊘ ingress  Ingress shop  ← service, config", "1 └─ ✓ deployment  Deployment shop  ← config, secret", "0 ├─ ✓ config"} {
		if !strings.Contains(out, want) {
			t.Fatalf("layered view lacks %q:\n%s", want, out)
		}
	}
	if got := selectedNode(out); !strings.Contains(got, "ingress") || !strings.Contains(out, "ingress  networking.k8s.io/v1 Ingress") {
		t.Fatalf("cursor or inspector not on the last node (%q):\n%s", got, out)
	}
	send(tm, "g")
	eventually(t, "the tree again", func() bool { out = tmFrame(t, tm); return strings.Contains(out, "GRAPH 5/5") })
	if got := selectedNode(out); !strings.Contains(got, "ingress") {
		t.Fatalf("the tree lost the cursor: %q", got)
	}
	finalFrame(t, tm)
}
