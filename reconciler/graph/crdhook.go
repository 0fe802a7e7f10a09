package graph

// crd builds Graph.Instance.CRD.
// TODO(graph): call crd.New(crd.Input{...}) from reconciler/graph/crd once
// that package lands, passing the status schema inferred by statusSchema.
func (bd *build) crd(g *Graph) {}
