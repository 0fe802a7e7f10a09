package graph

import (
	"github.com/google/cel-go/cel"
	"github.com/google/cel-go/common/types"
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
		t := declTypeOf(s)
		if t == nil {
			continue
		}
		out[r.ID] = t.MaybeAssignTypeName("@" + r.ID)
		if !r.IsList() {
			if bd.valueSchemas == nil {
				bd.valueSchemas = map[string]common.Schema{}
			}
			bd.valueSchemas[r.ID] = memoized(&openapi.Schema{Schema: s})
		}
	}
	return out
}

// declTypeOf is the CEL type of a kind's schema; nil (the kind stays dyn)
// when the schema cannot be converted: the converter panics on some shapes
// (additionalProperties: true without a schema), and a kind kroscope cannot
// type must not stop the graph.
func declTypeOf(s *spec.Schema) (t *apiservercel.DeclType) {
	defer func() {
		if recover() != nil {
			t = nil
		}
	}()
	// Not a resource root: expressions may read all of metadata.
	t = common.SchemaDeclType(&openapi.Schema{Schema: s}, false)
	markPreserveUnknown(t, s, 0)
	return t
}

// preserveUnknownKey marks an object type whose schema keeps unknown
// fields: expressions may read fields it does not declare, typed dyn, as
// kro allows (a CRD's free-form spec, say).
const preserveUnknownKey = "x-kubernetes-preserve-unknown-fields"

// markPreserveUnknown walks t beside the schema it was made from and marks
// the object types whose schema keeps unknown fields.
func markPreserveUnknown(t *apiservercel.DeclType, s *spec.Schema, depth int) {
	if t == nil || s == nil || depth > maxTypeDepth {
		return
	}
	switch {
	case t.IsObject():
		if v, _ := s.Extensions[preserveUnknownKey].(bool); v {
			if t.Metadata == nil {
				t.Metadata = map[string]string{}
			}
			t.Metadata[preserveUnknownKey] = "true"
		}
		for name, prop := range s.Properties {
			escaped, ok := apiservercel.Escape(name)
			if f := t.Fields[escaped]; ok && f != nil {
				prop := prop
				markPreserveUnknown(f.Type, &prop, depth+1)
			}
		}
	case t.IsList():
		if s.Items != nil {
			markPreserveUnknown(t.ElemType, s.Items.Schema, depth+1)
		}
	case t.IsMap():
		if s.AdditionalProperties != nil {
			markPreserveUnknown(t.ElemType, s.AdditionalProperties.Schema, depth+1)
		}
	}
}

// lenientFields is the type provider of the checking environment: fields
// an object type declares have their types; any field of an object whose
// schema keeps unknown fields is dyn.
type lenientFields struct {
	*apiservercel.DeclTypeProvider
}

func (p lenientFields) FindStructFieldType(typeName, fieldName string) (*types.FieldType, bool) {
	if f, ok := p.DeclTypeProvider.FindStructFieldType(typeName, fieldName); ok {
		return f, true
	}
	if d, ok := p.FindDeclType(typeName); ok && d.Metadata[preserveUnknownKey] == "true" {
		return &types.FieldType{Type: cel.DynType}, true
	}
	return nil, false
}
