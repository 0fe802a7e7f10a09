package graph

// CONTRACT SKELETON: the graph helper replaces these bodies with the real
// implementation (and may move them to other files). Signatures are fixed.

import (
	"errors"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

var errTODO = errors.New("graph: not implemented yet")

// Vars are the values expressions read: "schema" → the instance object
// (apiVersion, kind, metadata, spec; status removed), and each resource id →
// its observed object. All values are JSON-like Go values.
type Vars map[string]any

// ErrDataPending marks an evaluation that read a field, key or index that is
// not there yet (no such key/field/attribute, index out of bounds) or a
// resource not yet observed: the caller waits instead of failing.
var ErrDataPending = errors.New("data pending")

// IsDataPending reports whether err (or anything it wraps) is ErrDataPending.
func IsDataPending(err error) bool { return errors.Is(err, ErrDataPending) }

// EvalError is a CEL evaluation failure that is not data-pending; it names
// the resource (or "status"), the field path and the expression.
type EvalError struct {
	Resource   string
	Path       string
	Expression string
	Err        error
}

func (e *EvalError) Error() string {
	return "resource " + e.Resource + " field " + e.Path + ": evaluating ${" + e.Expression + "}: " + e.Err.Error()
}
func (e *EvalError) Unwrap() error { return e.Err }

// Eval evaluates the expression against vars and returns a JSON-like Go value
// (map[string]any, []any, int64, float64, string, bool, nil).
func (e *Expression) Eval(vars Vars) (any, error) { return nil, errTODO }

// Render returns the desired object: a deep copy of the template with every
// expression substituted. Errors are *EvalError; data-pending ones wrap
// ErrDataPending.
func (r *Resource) Render(vars Vars) (*unstructured.Unstructured, error) { return nil, errTODO }

// IsIncluded evaluates includeWhen (all must be true; none means true).
func (r *Resource) IsIncluded(vars Vars) (bool, error) { return false, errTODO }

// IsReady evaluates readyWhen against the observed object (all must be true;
// none means ready once observed). When not ready, reason says which
// expression is false (or pending) and its value.
func (r *Resource) IsReady(observed map[string]any) (ready bool, reason string, err error) {
	return false, "", errTODO
}

// RenderStatus evaluates the status projections. Fields whose inputs are
// pending are omitted; other failures are returned (joined *EvalErrors)
// together with the fields that did resolve.
func (g *Graph) RenderStatus(vars Vars) (map[string]any, error) { return nil, errTODO }

// Error is one validation problem.
type Error struct {
	RGD      string // definition name (or source when unnamed)
	Resource string // resource id, "" for schema-level problems
	Path     string // field path, e.g. spec.resources[2].template.spec.replicas
	Message  string
	Fix      string // how to fix it, when known
}

func (e *Error) Error() string {
	s := e.RGD
	if e.Resource != "" {
		s += ": resource " + e.Resource
	}
	if e.Path != "" {
		s += ": " + e.Path
	}
	s += ": " + e.Message
	if e.Fix != "" {
		s += " (" + e.Fix + ")"
	}
	return s
}

// Errors is every problem found in one definition.
type Errors []*Error

func (es Errors) Error() string {
	s := ""
	for i, e := range es {
		if i > 0 {
			s += "\n"
		}
		s += e.Error()
	}
	return s
}

// Unwrap lets errors.As find each *Error.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// LoadFiles reads definitions from YAML files and directories (recursively,
// *.yaml and *.yml; multi-document). Documents of other kinds are skipped.
// An unreadable or malformed file is an error naming it.
func LoadFiles(paths ...string) ([]*ResourceGraphDefinition, error) { return nil, errTODO }

// Parse reads every definition in one (multi-document) YAML source.
func Parse(data []byte, source string) ([]*ResourceGraphDefinition, error) { return nil, errTODO }

// FromUnstructured reads a definition fetched from a cluster.
func FromUnstructured(u *unstructured.Unstructured) (*ResourceGraphDefinition, error) {
	return nil, errTODO
}

// SchemaResolver returns the OpenAPI schema of a kind, for type checking;
// nil result means unknown (expressions reading it are typed dyn).
type SchemaResolver interface{}

// Option configures a Builder.
type Option func(*Builder)

// WithRESTMapper resolves kinds to resources and scope.
func WithRESTMapper(m meta.RESTMapper) Option { return func(b *Builder) {} }

// Builder builds Graphs; safe for concurrent use.
type Builder struct{}

// NewBuilder returns a Builder. Without a REST mapper it uses compiled-in
// knowledge of core kinds and conventional plurals.
func NewBuilder(opts ...Option) *Builder { return &Builder{} }

// Build validates rgd and builds its Graph. On failure the error is Errors,
// listing every problem found.
func (b *Builder) Build(rgd *ResourceGraphDefinition) (*Graph, error) { return nil, errTODO }
