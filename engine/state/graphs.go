package state

import "github.com/kroscope/kroscope/reconciler/graph"

// Graph states, kro's words for an RGD's status.state.
const (
	GraphActive   = "Active"
	GraphInactive = "Inactive"
)

// Who a graph's state is from.
const (
	ByKroscope = "kroscope"
	ByKro      = "kro"
)

// GraphStatus is what the graphs screen shows of one graph, derived by
// the store from the graph's facts, the mode and the instances.
type GraphStatus struct {
	// State is Active or Inactive; By says whose view it is: kroscope's,
	// or kro's while this process observes a cluster kro serves.
	State, By string
	// Reason says why the graph is not served; "" when it is.
	Reason string
	// Scope is the instance kind's: Namespaced or Cluster.
	Scope string
	// Conditions are the RGD's conditions in the same view as State.
	Conditions []Condition
	// Instances counts the graph's instances by state ("" not reconciled
	// yet); Total is their sum.
	Instances map[string]int
	Total     int
	// Rollout is how far the definition served now has reached.
	Rollout Rollout
}

// DeriveGraph decides a graph's state, reason, scope and conditions from
// its facts: kro's view while this process does not reconcile and kro
// reports one, kroscope's otherwise (own: the conditions kroscope writes,
// or would write, on the RGD). Instance counts are added by the store.
func DeriveGraph(g *Graph, own []Condition, reconciling bool) GraphStatus {
	st := GraphStatus{Scope: graphScope(g)}
	if k := g.Kro; k != nil && !reconciling {
		st.State, st.By, st.Conditions = k.State, ByKro, k.Conditions
		if k.State != GraphActive {
			st.Reason = k.Blocked
			if st.Reason == "" {
				st.Reason = "kro reports the graph " + orWord(k.State, "without a state")
			}
		}
		return st
	}
	st.By, st.Conditions = ByKroscope, own
	switch {
	case g.Served:
		st.State = GraphActive
	case g.Err != "":
		st.State, st.Reason = GraphInactive, g.Err
	default:
		st.State, st.Reason = GraphInactive, "starting: building the graph and its instance CRD"
	}
	return st
}

func orWord(s, empty string) string {
	if s == "" {
		return empty
	}
	return s
}

// graphScope is the instance kind's scope: the built graph's, else the
// definition's as written, else "" (the definition could not be read).
func graphScope(g *Graph) string {
	switch {
	case g.Template != nil:
		return g.Template.Scope
	case g.Definition != nil && g.Definition.Scope == graph.ScopeCluster:
		return graph.ScopeCluster
	case g.Definition != nil:
		return graph.ScopeNamespaced
	}
	return ""
}

// SetGraphConditions records the conditions kroscope writes (or would
// write) on a graph's RGD; kept apart from SetGraph, as SetKro is.
func (s *Store) SetGraphConditions(name string, cs []Condition) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.conds[name] = cs
	s.changed()
}

// deriveGraphs fills each graph's Status in a snapshot being built (mu
// held). It runs on every snapshot: the instances are counted with a scan
// of the few graphs and states instead of two map lookups per instance.
func (s *Store) deriveGraphs(snap *Snapshot) {
	type count struct {
		state string
		n     int
	}
	counts := make([][]count, len(snap.Graphs))
	for i := range snap.Graphs {
		g := &snap.Graphs[i]
		g.Status = DeriveGraph(g, s.conds[g.Name], s.mode.Reconciling)
		g.Status.Rollout.Serving = g.Serving
	}
	last := -1
	for _, in := range snap.Instances {
		if last < 0 || snap.Graphs[last].Resource != in.Key.Resource {
			last = -1
			for i := range snap.Graphs {
				if snap.Graphs[i].Resource != "" && snap.Graphs[i].Resource == in.Key.Resource {
					last = i
					break
				}
			}
			if last < 0 {
				continue
			}
		}
		addRolled(&snap.Graphs[last].Status.Rollout, in, snap.Graphs[last].Serving)
		cs := counts[last]
		j := 0
		for j < len(cs) && cs[j].state != in.State {
			j++
		}
		if j == len(cs) {
			cs = append(cs, count{state: in.State})
		}
		cs[j].n++
		counts[last] = cs
	}
	for i := range snap.Graphs {
		st := &snap.Graphs[i].Status
		st.Instances = make(map[string]int, len(counts[i]))
		for _, c := range counts[i] {
			st.Instances[c.state] = c.n
			st.Total += c.n
		}
	}
}
