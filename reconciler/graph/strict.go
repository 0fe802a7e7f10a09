package graph

import (
	"fmt"
	"strings"
)

// nodeIDLabel (metadata.NodeIDLabel) is the label every child carries with its resource id, so an
// id must be a valid label value.
const nodeIDLabel = "kro.run/node-id"

// celTypeNames are CEL's type names: an id with one of these names would
// shadow the type (int(x), string(x), type(x) ...), and the checker's
// complaint would land on whichever expression uses the type.
var celTypeNames = map[string]bool{
	"bool": true, "bytes": true, "double": true, "duration": true, "dyn": true, "int": true,
	"list": true, "map": true, "null_type": true, "string": true, "timestamp": true, "type": true, "uint": true,
}

// checkAPIVersion rejects a definition whose apiVersion is in kro's group
// but not the version kro serves (kro.run/v1, or a stray space): kro would
// never see it, so it must not be served here either.
func checkAPIVersion(obj map[string]any, src string) error {
	apiVersion, _ := obj["apiVersion"].(string)
	if apiVersion == Group+"/"+Version {
		return nil
	}
	name := src
	if md, ok := obj["metadata"].(map[string]any); ok {
		if n, ok := md["name"].(string); ok && n != "" {
			name = fmt.Sprintf("%s (%s)", n, src)
		}
	}
	fix := "write apiVersion: " + Group + "/" + Version
	if strings.TrimSpace(apiVersion) == Group+"/"+Version {
		fix = "remove the spaces around it"
	}
	return Errors{{RGD: name, Path: "apiVersion", Message: fmt.Sprintf("unknown apiVersion %q for a %s: kro serves only %s/%s", apiVersion, Kind, Group, Version), Fix: fix}}
}

// selfInstances rejects a resource that is an instance of the graph's own
// kind: each instance would create another, without end.
func (bd *build) selfInstances(g *Graph, order []*Resource) {
	want := g.Instance.GVK.GroupKind()
	if want.Kind == "" {
		return
	}
	for _, r := range order {
		if r.GVK.GroupKind() == want {
			bd.errorf(r.ID, templateBase(r)+".kind", "a graph cannot contain an instance of its own kind",
				"%s is this graph's own instance kind: every instance would create another one, without end", want)
		}
	}
}
