// Package graphs holds ResourceGraphDefinitions shared by end-to-end tests
// and benchmarks.
package graphs

// Chain is three ConfigMaps a → b → c, each named from the previous one: the
// graph of the engine benchmark and of the engine end-to-end tests.
func Chain(name, kind string) string {
	return `apiVersion: kro.run/v1alpha1
kind: ResourceGraphDefinition
metadata:
  name: ` + name + `
spec:
  schema:
    apiVersion: v1alpha1
    kind: ` + kind + `
    spec:
      value: string | default=one
  resources:
  - id: a
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata:
        name: ${schema.metadata.name}-a
      data:
        value: ${schema.spec.value}
  - id: b
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata:
        name: ${a.metadata.name}-b
      data:
        from: ${a.metadata.name}
  - id: c
    template:
      apiVersion: v1
      kind: ConfigMap
      metadata:
        name: ${b.metadata.name}-c
      data:
        from: ${b.metadata.name}
`
}
