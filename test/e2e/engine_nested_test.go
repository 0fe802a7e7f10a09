package e2e

import (
	"testing"
	"time"

	"github.com/kroscope/kroscope/engine"
	"github.com/kroscope/kroscope/test/graphs"
)

// TestEngineNestedGraphs serves a graph whose resource is an instance of
// another graph (kro's "graphs of graphs", e.g. a tenant made of tenant
// environments): the parent creates the child instance, the child's own
// controller reconciles it, and both reach ACTIVE without fighting over the
// child instance's labels.
func TestEngineNestedGraphs(t *testing.T) {
	rig := newEngRig(t)
	rig.writeFile("child.yaml", nestedChild)
	rig.writeFile("parent.yaml", nestedParent)
	run := rig.start(func(o *engine.Options) { o.RGDPaths = []string{rig.dir} })
	run.graphServed("nestenv.kro.run")
	parent := run.graphServed("nest.kro.run")

	rig.createInstance(parent, "Nest", "acme", map[string]any{"team": "acme"})
	run.allInState("nestenvs.kro.run", 1, "ACTIVE", 2*time.Minute)
	run.allInState("nests.kro.run", 1, "ACTIVE", 2*time.Minute)
}

var nestedChild = graphs.RGD("nestenv.kro.run", "NestEnv", "spec:\n  team: string\nstatus:\n  configName: ${config.metadata.name}",
	graphs.ConfigMap("config", "${schema.spec.team}-env", "team: ${schema.spec.team}"))

var nestedParent = graphs.RGD("nest.kro.run", "Nest", "spec:\n  team: string",
	graphs.Template("env", "kro.run/v1alpha1", "NestEnv", "name: ${schema.metadata.name}-env", "spec:\n  team: ${schema.spec.team}",
		"readyWhen:\n- ${env.status.state == \"ACTIVE\"}"),
	graphs.ConfigMap("note", "${schema.metadata.name}-note", "env: ${env.status.configName}"))
