package graph

import (
	"container/heap"

	"strings"
)

// dag checks for cycles and fills TopologicalOrder and Layers. order is
// the resources in declaration order.
func (bd *build) dag(g *Graph, order []*Resource) {
	if cycle := findCycle(g, order); cycle != nil {
		bd.errorf(cycle[0], "spec.resources", "remove one of these references so the resources can be ordered",
			"dependency cycle: %s", strings.Join(cycle, " -> "))
		return
	}
	g.TopologicalOrder = topoOrder(g, order)
	g.Layers = layers(g)
}

// findCycle returns one cycle as a -> b -> ... -> a (a depends on b), or
// nil. The search starts from resources in declaration order so the
// reported cycle is deterministic.
func findCycle(g *Graph, order []*Resource) []string {
	const (
		unvisited = iota
		onStack
		done
	)
	state := map[string]int{}
	var stack []string
	var found []string
	var visit func(id string) bool
	visit = func(id string) bool {
		state[id] = onStack
		stack = append(stack, id)
		for _, dep := range g.Resources[id].Dependencies {
			switch state[dep] {
			case onStack:
				for i, s := range stack {
					if s == dep {
						found = append(append([]string{}, stack[i:]...), dep)
						return true
					}
				}
			case unvisited:
				if visit(dep) {
					return true
				}
			}
		}
		stack = stack[:len(stack)-1]
		state[id] = done
		return false
	}
	for _, r := range order {
		if state[r.ID] == unvisited && visit(r.ID) {
			return found
		}
	}
	return nil
}

// topoOrder is Kahn's algorithm taking, among the ready resources, the one
// declared first: the order kro reports.
func topoOrder(g *Graph, order []*Resource) []string {
	indeg := map[string]int{}
	dependents := map[string][]string{}
	for _, r := range order {
		indeg[r.ID] = len(r.Dependencies)
		for _, d := range r.Dependencies {
			dependents[d] = append(dependents[d], r.ID)
		}
	}
	h := &indexHeap{g: g}
	for _, r := range order {
		if indeg[r.ID] == 0 {
			heap.Push(h, r.ID)
		}
	}
	out := make([]string, 0, len(order))
	for h.Len() > 0 {
		id := heap.Pop(h).(string)
		out = append(out, id)
		for _, d := range dependents[id] {
			if indeg[d]--; indeg[d] == 0 {
				heap.Push(h, d)
			}
		}
	}
	return out
}

type indexHeap struct {
	g   *Graph
	ids []string
}

func (h *indexHeap) Len() int { return len(h.ids) }
func (h *indexHeap) Less(i, j int) bool {
	return h.g.Resources[h.ids[i]].Index < h.g.Resources[h.ids[j]].Index
}
func (h *indexHeap) Swap(i, j int) { h.ids[i], h.ids[j] = h.ids[j], h.ids[i] }
func (h *indexHeap) Push(x any)    { h.ids = append(h.ids, x.(string)) }
func (h *indexHeap) Pop() any {
	x := h.ids[len(h.ids)-1]
	h.ids = h.ids[:len(h.ids)-1]
	return x
}

// layers puts each resource one layer after its deepest dependency;
// within a layer, topological order is kept.
func layers(g *Graph) [][]string {
	depth := map[string]int{}
	var out [][]string
	for _, id := range g.TopologicalOrder {
		d := 0
		for _, dep := range g.Resources[id].Dependencies {
			if depth[dep]+1 > d {
				d = depth[dep] + 1
			}
		}
		depth[id] = d
		for len(out) <= d {
			out = append(out, nil)
		}
		out[d] = append(out[d], id)
	}
	return out
}

// Dependents returns the ids that depend directly on id, in topological order.
func (g *Graph) Dependents(id string) []string {
	var out []string
	for _, other := range g.TopologicalOrder {
		for _, d := range g.Resources[other].Dependencies {
			if d == id {
				out = append(out, other)
				break
			}
		}
	}
	return out
}
