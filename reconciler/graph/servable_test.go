package graph

import (
	"strings"
	"testing"
)

// TestServable: the one decision validate and the engine share. A graph
// that does not build, or whose constants make an expression too costly for
// any instance, is not servable; one costly only for large inputs is,
// with a warning; a raised cost limit serves the costly one.
func TestServable(t *testing.T) {
	const (
		cheap    = "${schema.spec.groups.map(g, g.name).join(',')}"
		large    = "${schema.spec.groups.map(g, g.name + ': ' + g.members.map(m, m.name).join(', ')).join(';')}"
		constant = "${lists.range(1000000).map(i, lists.range(1000).map(j, i * j)).size() > 0 ? 'y' : 'n'}"
	)
	for _, c := range []struct {
		name     string
		expr     string
		limits   Limits
		wantErr  string
		wantWarn string
	}{
		{name: "cheap", expr: cheap},
		{name: "large inputs only", expr: large, wantWarn: "when its inputs have 1000 elements"},
		{name: "costly for any instance", expr: constant, wantErr: "exceeds the limit of 1000000 even with inputs of one element"},
		{name: "costly, raised limit", expr: constant, limits: Limits{Cost: 1 << 50}},
		{name: "does not build", expr: "${nothere.x}", wantErr: `unknown identifier "nothere"`},
	} {
		rgds, err := Parse([]byte(costGraph(map[string]string{"x": c.expr})), "costs.yaml")
		if err != nil {
			t.Fatal(err)
		}
		g, warns, err := NewBuilder(WithLimits(c.limits)).Servable(rgds[0])
		switch {
		case c.wantErr == "" && (err != nil || g == nil):
			t.Errorf("%s: not servable: %v", c.name, err)
		case c.wantErr != "" && (err == nil || g != nil || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("%s: graph %v, err %v; want no graph and an error containing %q", c.name, g != nil, err, c.wantErr)
		}
		if (c.wantWarn == "") != (len(warns) == 0) || !strings.Contains(warns.Error(), c.wantWarn) {
			t.Errorf("%s: warnings %v, want %q", c.name, warns, c.wantWarn)
		}
	}
}
