package e2e

import (
	"testing"
	"time"

	"github.com/kroscope/kroscope/engine"
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

const nestedChild = `apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata:
  name: nestenv.kro.run
spec:
  schema:
    apiVersion: v1alpha1
    kind: NestEnv
    spec:
      team: string
    status:
      configName: ${config.metadata.name}
  resources:
  - id: config
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata:
        name: ${schema.spec.team}-env
      data:
        team: ${schema.spec.team}
`

const nestedParent = `apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata:
  name: nest.kro.run
spec:
  schema:
    apiVersion: v1alpha1
    kind: Nest
    spec:
      team: string
  resources:
  - id: env
    readyWhen:
    - ${env.status.state == "ACTIVE"}
    template:
      apiVersion: kro.run/v1alpha1
      kind: NestEnv
      metadata:
        name: ${schema.metadata.name}-env
      spec:
        team: ${schema.spec.team}
  - id: note
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata:
        name: ${schema.metadata.name}-note
      data:
        env: ${env.status.configName}
`
