package graph

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
	apiservercel "k8s.io/apiserver/pkg/cel"
	"k8s.io/apiserver/pkg/cel/common"
	"k8s.io/apiserver/pkg/cel/openapi"
	"k8s.io/apiserver/pkg/cel/openapi/resolver"
	"k8s.io/client-go/discovery"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// SchemaResolver returns the OpenAPI schema of a kind, for type checking;
// nil result means unknown (expressions reading it are typed dyn). It is
// satisfied by the resolvers of k8s.io/apiserver/pkg/cel/openapi/resolver.
type SchemaResolver interface {
	ResolveSchema(gvk schema.GroupVersionKind) (*spec.Schema, error)
}

// NewDiscoverySchemaResolver reads schemas from the API server's OpenAPI v3
// documents (core kinds and every installed CRD).
func NewDiscoverySchemaResolver(d discovery.DiscoveryInterface) SchemaResolver {
	return &resolver.ClientDiscoveryResolver{Discovery: d}
}

// WithSchemaResolver types each resource's CEL variable from its kind's
// OpenAPI schema, so reading a field the kind does not have is a build
// error. Kinds the resolver does not know stay dyn.
func WithSchemaResolver(r SchemaResolver) Option { return func(b *Builder) { b.resolver = r } }

// resourceTypes resolves the CEL type of every resource; unknown kinds are
// left out (dyn).
func (bd *build) resourceTypes(order []*Resource) map[string]*apiservercel.DeclType {
	if bd.b.resolver == nil {
		return nil
	}
	byGVK := map[schema.GroupVersionKind]*spec.Schema{}
	out := map[string]*apiservercel.DeclType{}
	for _, r := range order {
		s, seen := byGVK[r.GVK]
		if !seen {
			var err error
			s, err = bd.b.resolver.ResolveSchema(r.GVK)
			if err != nil {
				s = nil
			}
			byGVK[r.GVK] = s
		}
		if s == nil {
			continue
		}
		if bd.schemas == nil {
			bd.schemas = map[string]*spec.Schema{}
		}
		bd.schemas[r.ID] = s
		// Not a resource root: expressions may read all of metadata.
		t := common.SchemaDeclType(&openapi.Schema{Schema: s}, false)
		if t == nil {
			continue
		}
		out[r.ID] = t.MaybeAssignTypeName("@" + r.ID)
	}
	return out
}
