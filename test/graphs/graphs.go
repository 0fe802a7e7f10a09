// Package graphs holds ResourceGraphDefinitions shared by end-to-end tests
// and benchmarks, and the builder that writes the lines every graph has
// (RGD, ConfigMap, Resource) so that a test writes only its own.
package graphs

// Chain is three ConfigMaps a → b → c, each named from the previous one: the
// graph of the engine benchmark and of the engine end-to-end tests.
func Chain(name, kind string) string {
	return RGD(name, kind, "spec:\n  value: string | default=one",
		ConfigMap("a", "${schema.metadata.name}-a", "value: ${schema.spec.value}"),
		ConfigMap("b", "${a.metadata.name}-b", "from: ${a.metadata.name}"),
		ConfigMap("c", "${b.metadata.name}-c", "from: ${b.metadata.name}"))
}
