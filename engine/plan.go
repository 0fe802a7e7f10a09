package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/kroscope/kroscope/plan"
	"github.com/kroscope/kroscope/reconciler/graph"
)

// Plan plans the graphs in the files (see package plan) over the
// instances this engine serves (its namespace), or the --rgd files it
// serves when paths is empty: what applying them would
// do, as dry runs through the caller's own connection, never through the
// write gate, since a plan writes nothing. The TUI's :plan asks it.
func (e *Engine) Plan(ctx context.Context, paths ...string) ([]*plan.Plan, error) {
	if len(paths) == 0 {
		paths = e.o.RGDPaths
	}
	if len(paths) == 0 {
		return nil, errors.New("name the graph file to plan (:plan FILE): this kroscope serves the cluster's graphs")
	}
	loader := graph.Loader{MaxFileSize: e.o.MaxFileSize}
	b := graph.NewBuilder(append(GraphOptions(e.cl.own(), e.cl.schemaResolver(), e.o.CELOmit), graph.WithLimits(e.o.CELLimits))...)
	rgds, err := loader.Load(paths...)
	var out []*plan.Plan
	errs := []error{err}
	for _, rgd := range rgds {
		g, _, err := b.Servable(rgd)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", rgd.Source, err))
			continue
		}
		p, err := plan.Graph(ctx, g, plan.Options{Set: e.cl.own(), Namespace: e.o.Namespace})
		if err != nil {
			errs = append(errs, fmt.Errorf("planning %s: %w", g.Name, err))
			continue
		}
		out = append(out, p)
	}
	if len(rgds) == 0 && err == nil {
		errs = append(errs, fmt.Errorf("no ResourceGraphDefinition in %v", paths))
	}
	return out, errors.Join(errs...)
}
