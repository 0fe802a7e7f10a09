package tui

import (
	"slices"
	"strings"
	"testing"
)

// TestRemovingAnActionRemovesItEverywhere: the screens' declarations are
// the only list of keys. Taking "sort" out of its table takes it out of dispatch,
// the footer, the help and the config file's names at once.
func TestRemovingAnActionRemovesItEverywhere(t *testing.T) {
	present := func(t *testing.T, want bool) {
		t.Helper()
		m, _ := newTestModel(t, fixture(), Options{}, 160, 48)
		if got := strings.Contains(plain(m.Frame()), "s sort"); got != want {
			t.Errorf("footer shows \"s sort\" = %v, want %v", got, want)
		}
		press(m, "s")
		if got := sortKey(listOf(m).table.sortBy) == sortState; got != want {
			t.Errorf("s sorted = %v, want %v", got, want)
		}
		press(m, "?")
		if got := strings.Contains(plain(m.Frame()), "sort by the next column"); got != want {
			t.Errorf("help lists sort = %v, want %v", got, want)
		}
		if got := slices.Contains(ActionNames(), "sort"); got != want {
			t.Errorf("config names include sort = %v, want %v", got, want)
		}
		_, probs := parseConfig("c.yaml", []byte("keys:\n  sort: [\"o\"]\n"))
		if got := len(probs) == 0; got != want {
			t.Errorf("config accepts keys.sort = %v, want %v (%v)", got, want, probs)
		}
	}
	t.Run("with", func(t *testing.T) { present(t, true) })
	withheld = map[string]bool{"sort": true}
	t.Cleanup(func() { withheld = nil })
	t.Run("without", func(t *testing.T) { present(t, false) })
}

// Actions that share a name share their keys: a shared name is offered
// only through share (its keys are the shared table's), any other name
// has the same keys wherever it is offered; and no two actions of one
// screen may share a key.
func TestActionsAgree(t *testing.T) {
	defaults := map[string][]string{}
	for _, ks := range keysets() {
		for _, a := range ks.acts {
			if sk, ok := shared[a.name]; ok && !slices.Equal(sk, a.keys) {
				t.Errorf("%s screen: action %s has keys %v, the shared declaration %v", ks.name, a.name, a.keys, sk)
			}
			if d, ok := defaults[a.name]; ok && !slices.Equal(d, a.keys) {
				t.Errorf("action %s: defaults %v on the %s screen, %v elsewhere", a.name, a.keys, ks.name, d)
			}
			defaults[a.name] = a.keys
			for _, k := range a.keys {
				if n, err := normaliseKey(k); err != nil || n != k {
					t.Errorf("action %s: default key %q is not normalised (%q, %v)", a.name, k, n, err)
				}
			}
		}
		owner := map[string]string{}
		for _, a := range ks.acts {
			for _, k := range a.keys {
				if o, dup := owner[k]; dup && o != a.name {
					t.Errorf("%s screen: %q is bound to both %s and %s", ks.name, k, o, a.name)
				}
				owner[k] = a.name
			}
		}
	}
}

func TestConfigReportsKeyConflicts(t *testing.T) {
	c, probs := parseConfig("c.yaml", []byte("keys:\n  requeue: [\"j\"]\n  delete: [\"ctrl+x\"]\n"))
	if len(probs) != 1 || !strings.Contains(probs[0].String(), `c.yaml:2: keys.requeue: "j" is also down's key`) {
		t.Fatalf("problems = %v", probs)
	}
	if _, kept := c.Keys["requeue"]; kept || c.Keys["delete"][0] != "ctrl+x" {
		t.Fatalf("keys = %v: the conflicting entry must be dropped, the other kept", c.Keys)
	}
}
