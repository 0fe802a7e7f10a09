// Package graph turns a ResourceGraphDefinition (kro.run/v1alpha1) into a
// validated, ordered Graph: the instance CRD to serve, resource templates
// whose ${...} CEL expressions are compiled, their dependencies, topological
// order and layers. It also evaluates those expressions for the reconciler.
//
// A Graph is immutable once built and safe for concurrent use; every
// reconcile evaluates it against fresh variables.
package graph

import (
	"slices"
	"sync"

	"github.com/google/cel-go/cel"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	celcommon "k8s.io/apiserver/pkg/cel/common"
)

// API group, version and kinds of the graph definitions kroscope reads.
const (
	Group            = "kro.run"
	Version          = "v1alpha1"
	Kind             = "ResourceGraphDefinition"
	LegacyKind       = "ResourceGroup"
	ResourcePlural   = "resourcegraphdefinitions"
	SchemaIdentifier = "schema" // the CEL variable holding the instance
)

// GroupVersionResource of ResourceGraphDefinitions in a cluster.
var GroupVersionResource = schema.GroupVersionResource{Group: Group, Version: Version, Resource: ResourcePlural}

// ResourceGraphDefinition is the parsed source object.
type ResourceGraphDefinition struct {
	Name string
	// Source names where it was read: a file path (with document index for
	// multi-document files, "file.yaml#2"), or "cluster".
	Source string
	// Generation of the cluster object (0 for files).
	Generation int64
	// UID of the cluster object ("" for files): kro's graph id.
	UID types.UID
	// OldKind is set when it was written as kind ResourceGroup, kro's name
	// before v0.2: kroscope reads it, a cluster running kro refuses it.
	OldKind bool
	Spec    Spec
	// Object is the definition as read (read-only): what the graphs
	// screen shows as its YAML.
	Object map[string]any
}

// Spec is spec of a ResourceGraphDefinition.
type Spec struct {
	Schema    Schema
	Resources []ResourceSpec
	// DefaultServiceAccounts maps a namespace to the ServiceAccount whose
	// identity reconciles instances there; the key "*" is the fallback.
	DefaultServiceAccounts map[string]string
}

// Schema is spec.schema.
type Schema struct {
	APIVersion string
	Kind       string
	Group      string // defaults to kro.run
	// Spec, Status and Types are SimpleSchema maps as written.
	Spec                     map[string]any
	Status                   map[string]any
	Types                    map[string]any
	AdditionalPrinterColumns []apiextensionsv1.CustomResourceColumnDefinition
	// Validation rules become x-kubernetes-validations on the instance spec.
	// A kroscope extension: kro removed it in v0.7.0.
	Validation []Validation
	// Scope of the instance kind: ScopeNamespaced (the default, also for
	// "") or ScopeCluster.
	Scope string
	// ShortNames and Categories are copied onto the instance CRD's names.
	ShortNames []string
	Categories []string
	// Metadata holds labels and annotations copied onto the instance CRD.
	Metadata CRDMetadata
}

// Instance scopes spec.schema.scope accepts (kro's CRD defaults it to
// Namespaced).
const (
	ScopeNamespaced = "Namespaced"
	ScopeCluster    = "Cluster"
)

// CRDMetadata is spec.schema.metadata.
type CRDMetadata struct {
	Labels      map[string]string
	Annotations map[string]string
}

// Validation is one spec.schema.validation entry.
type Validation struct {
	Expression string
	Message    string
}

// ResourceSpec is one spec.resources[] entry as written.
type ResourceSpec struct {
	ID          string
	Template    map[string]any
	ExternalRef *ExternalRef
	ReadyWhen   []string
	IncludeWhen []string
	// ForEach makes the resource a collection: one object per element of
	// the cartesian product of the dimensions.
	ForEach []ForEachSpec
}

// ForEachSpec is one forEach entry as written: {Name: "${Expression}"}.
type ForEachSpec struct {
	Name       string
	Expression string
}

// ExternalRef names an object kroscope reads but never writes.
type ExternalRef struct {
	APIVersion string
	Kind       string
	Name       string
	Namespace  string
	// Selector, when set instead of Name, makes the ref an external
	// collection: every object of the kind whose labels match (a
	// LabelSelector as written: matchLabels and/or matchExpressions, whose
	// values may hold ${...}).
	Selector map[string]any
}

// Graph is a built, validated graph.
type Graph struct {
	// Name of the ResourceGraphDefinition; Source as in ResourceGraphDefinition.
	Name   string
	Source string
	// Generation of the definition it was built from.
	Generation int64
	// UID of the definition object ("" for files).
	UID      types.UID
	Instance Instance
	// Resources by id.
	Resources map[string]*Resource
	// TopologicalOrder lists ids so that each comes after what it depends
	// on; declaration order breaks ties (Kahn's algorithm, as kro does).
	TopologicalOrder []string
	// Layers groups ids that can proceed together: layer 0 has no
	// dependencies, layer n depends only on layers < n.
	Layers [][]string
	// Status are the instance status projections.
	Status []*Field
	// Conditions are status.conditions' entries: each returns a condition
	// or a list of them (see EvalConditions).
	Conditions []*Expression
	// DefaultServiceAccounts as in Spec.
	DefaultServiceAccounts map[string]string

	// statusTypes are the CEL types of the status fields, by Field.Path.
	statusTypes map[string]*cel.Type
}

// ReverseTopologicalOrder is TopologicalOrder reversed: the deletion order.
func (g *Graph) ReverseTopologicalOrder() []string {
	out := make([]string, len(g.TopologicalOrder))
	for i, id := range g.TopologicalOrder {
		out[len(out)-1-i] = id
	}
	return out
}

// Instance describes the kind the graph serves.
type Instance struct {
	GVK        schema.GroupVersionKind
	GVR        schema.GroupVersionResource
	Singular   string
	Namespaced bool
	// CRD is the generated CustomResourceDefinition.
	CRD *apiextensionsv1.CustomResourceDefinition
}

// RequiredSpecFields lists the fields the instance's spec requires, sorted
// (none without a CRD schema).
func (i *Instance) RequiredSpecFields() []string {
	if i == nil || i.CRD == nil || len(i.CRD.Spec.Versions) == 0 || i.CRD.Spec.Versions[0].Schema == nil ||
		i.CRD.Spec.Versions[0].Schema.OpenAPIV3Schema == nil {
		return nil
	}
	out := slices.Clone(i.CRD.Spec.Versions[0].Schema.OpenAPIV3Schema.Properties["spec"].Required)
	slices.Sort(out)
	return out
}

// Resource is one node of the graph.
type Resource struct {
	ID string
	// Index is the position in spec.resources.
	Index int
	GVK   schema.GroupVersionKind
	// GVR comes from the REST mapper when one was given to the builder,
	// otherwise from the kind's conventional plural.
	GVR        schema.GroupVersionResource
	Namespaced bool
	// External is true for an externalRef: read, never written.
	External bool
	// ExternalCollection is true for an externalRef with a selector: every
	// matching object is read (never written), other expressions see the id
	// as a list of them, and readyWhen reads each. The template's
	// metadata.selector holds the selector.
	ExternalCollection bool
	// Template is the object as written (for External, a synthesized
	// {apiVersion, kind, metadata: {name, namespace}}). Read-only.
	Template map[string]any
	// Fields are the template's fields that hold ${...} expressions.
	Fields []*Field
	// Dependencies are the resource ids this one reads (in templates and
	// includeWhen), in declaration order; never "schema".
	Dependencies []string
	ReadyWhen    []*Expression
	IncludeWhen  []*Expression
	// ForEach are the dimensions of a collection, in declaration order;
	// empty for a single object. A collection's readyWhen reads `each`
	// (one item), and other expressions see its id as a list of the
	// observed items.
	ForEach []Dimension

	// usesOmit is true when a template field may yield omit(): rendering
	// then removes the fields and list elements that hold it.
	usesOmit bool
}

// IsCollection reports whether the resource is a forEach collection.
func (r *Resource) IsCollection() bool { return len(r.ForEach) > 0 }

// IsList reports whether other expressions see the id as a list and
// readyWhen reads each: a forEach collection or an external collection.
func (r *Resource) IsList() bool { return r.IsCollection() || r.ExternalCollection }

// Dimension is one forEach iterator: Name is bound, item by item, to each
// element of the list Expression returns.
type Dimension struct {
	Name       string
	Expression *Expression
}

// EachIdentifier is the variable a collection's readyWhen reads: one item.
const EachIdentifier = "each"

// Field is one templated value: a string that is either exactly one ${...}
// (Standalone: the value takes the expression's type) or text mixed with
// expressions (a string).
type Field struct {
	// Path from the template (or status) root, e.g. `spec.replicas` or
	// `metadata.labels["app.kubernetes.io/name"]` or `spec.ports[0].port`.
	Path string
	// Segments is Path split into map keys (string) and list indexes (int).
	Segments []any
	// Raw is the original string.
	Raw         string
	Standalone  bool
	Expressions []*Expression

	// out is the CEL type of a standalone expression.
	out *cel.Type
}

// Expression is one compiled CEL expression.
type Expression struct {
	// Source is the CEL text without the ${ } delimiters.
	Source string
	// References are the top-level identifiers it reads (resource ids and
	// "schema"), sorted and unique.
	References []string
	// usesOmit is true when it calls omit().
	usesOmit bool

	// The program is planned on first use: planning costs more than
	// checking and most graphs are built far more often than every
	// expression is evaluated.
	env *cel.Env
	ast *cel.Ast
	// limits bound every evaluation (DefaultLimits when zero).
	// sensitive: it reads a Secret's value (see markSensitive).
	sensitive bool
	limits    Limits
	// valueSchemas type the resources it reads, as the checker saw them:
	// a Secret's data is bytes, a date-time a timestamp (kro reads observed
	// objects the same way).
	valueSchemas map[string]celcommon.Schema
	planOnce     sync.Once
	program      cel.Program
	planErr      error
}
