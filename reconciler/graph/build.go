package graph

import (
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/google/cel-go/cel"
	"github.com/kroscope/kroscope/reconciler/graph/crd"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation"
	apiservercel "k8s.io/apiserver/pkg/cel"
	celcommon "k8s.io/apiserver/pkg/cel/common"
	"k8s.io/kube-openapi/pkg/validation/spec"
)

// Option configures a Builder.
type Option func(*Builder)

// WithRESTMapper resolves kinds to resources and scope.
func WithRESTMapper(m meta.RESTMapper) Option { return func(b *Builder) { b.mapper = m } }

// Builder builds Graphs; safe for concurrent use.
type Builder struct {
	mapper   meta.RESTMapper
	resolver SchemaResolver
	// celOmit allows omit() in templates (kro's CELOmitFunction gate).
	celOmit bool
	// limits bound every expression's evaluation (see WithLimits).
	limits Limits
}

// NewBuilder returns a Builder. Without a REST mapper it uses compiled-in
// knowledge of core kinds and conventional plurals.
func NewBuilder(opts ...Option) *Builder {
	b := &Builder{}
	for _, o := range opts {
		o(b)
	}
	return b
}

var (
	idPattern      = regexp.MustCompile(`^[a-z][a-zA-Z0-9]*$`)
	kindPattern    = regexp.MustCompile(`^[A-Z][a-zA-Z0-9]{0,62}$`)
	versionPattern = regexp.MustCompile(`^v[0-9]+((alpha|beta)[0-9]+)?$`)
	// A template's apiVersion is [group/]version where the version is any
	// name a CRD may give its versions (a DNS-1035 label: Azure Service
	// Operator serves v1api20200601, for one); only the instance's own
	// version (versionPattern) is held to kro's v1, v1alpha1 form.
	apiVersionPattern  = regexp.MustCompile(`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[a-z]([-a-z0-9]{0,61}[a-z0-9])?$`)
	reservedIDs        = map[string]bool{}
	reservedLabelHints = []string{"kro.run/", "internal.kro.run/"}
)

func init() {
	// The union of kro's old and new reserved words, CEL's keywords and the
	// namespaces of the environment's functions (random.seededString,
	// math.greatest, ...): an id is a CEL variable, so it must not shadow
	// anything.
	for _, w := range strings.Fields(`apiVersion context dependency dependencies externalRef externalReference
		externalRefs externalReferences graph instance kind metadata namespace object resource
		resourcegraphdefinition resourceGraphDefinition resources runtime serviceAccountName schema spec
		status kro variables vars version each item items root self this
		true false null in as break const continue else for function if import let loop package
		return var void while
		random base64 math sets lists strings optional cel`) {
		reservedIDs[w] = true
	}
}

// builder holds the state of one Build.
type build struct {
	// runEnv, when set, is the environment programs are planned in (the
	// one expressions are checked in has typed resources).
	runEnv *cel.Env
	// schemas are the resources' OpenAPI schemas, when a resolver knows them.
	schemas map[string]*spec.Schema
	// valueSchemas are the schemas of the typed single-object resources:
	// their observed objects are read through them at evaluation time.
	valueSchemas map[string]celcommon.Schema
	// objectTypes are the object types declared for schema and the
	// resources, to expand object-typed status fields.
	objectTypes objectTypeIndex
	// cache holds the expressions compiled so far, by source (prefixed
	// with cacheScope).
	cache map[string]cachedCompile
	// cacheScope separates the cache entries of a collection, whose
	// environment also declares its iterators: ${name} means something
	// else there.
	cacheScope string
	// spec is the instance spec schema, nil when the SimpleSchema is bad.
	spec *apiextensionsv1.JSONSchemaProps
	// constantEvals counts the constant forEach dimensions evaluated (see
	// checkConstantSize).
	constantEvals int
	// leftOut are the ids of resources left out for errors of their own:
	// expressions reading them are not told the id is unknown.
	leftOut map[string]bool
	// clusterInstance is set when the instance kind is cluster-scoped:
	// there is then no instance namespace for children to default to.
	clusterInstance bool
	b               *Builder
	rgd             *ResourceGraphDefinition
	name            string
	errs            Errors
}

func (bd *build) errorf(resource, path, fix, format string, args ...any) {
	bd.errs = append(bd.errs, &Error{RGD: bd.name, Resource: resource, Path: path, Message: fmt.Sprintf(format, args...), Fix: fix})
}

// Build validates rgd and builds its Graph. On failure the error is Errors,
// listing every problem found.
func (b *Builder) Build(rgd *ResourceGraphDefinition) (*Graph, error) {
	if rgd == nil {
		return nil, Errors{{RGD: "<nil>", Message: "no definition"}}
	}
	bd := &build{b: b, rgd: rgd, name: rgd.Name, leftOut: map[string]bool{}}
	if bd.name == "" {
		bd.name = rgd.Source
		bd.errorf("", "metadata.name", "give the definition a name", "metadata.name is empty")
	}
	if bd.tooManyExpressions() {
		return nil, bd.errs
	}
	g := &Graph{
		Name:                   rgd.Name,
		Source:                 rgd.Source,
		Generation:             rgd.Generation,
		UID:                    rgd.UID,
		Resources:              map[string]*Resource{},
		DefaultServiceAccounts: rgd.Spec.DefaultServiceAccounts,
	}
	bd.instance(g)
	schemaType := bd.schemaType()
	order, collections := bd.resources(g)
	env, ok := bd.envs(schemaType, order, collections)
	if !ok {
		return nil, bd.errs
	}
	for _, r := range order {
		bd.expressions(env, r)
		bd.checkTemplate(r)
	}
	bd.status(env, g)
	bd.omitIdentity(g, order)
	bd.validations(schemaType)
	bd.selfInstances(g, order)
	// Cycles are reported even beside other errors: every problem found is
	// worth one run of `kroscope validate`.
	bd.dag(g, order)
	if len(bd.errs) == 0 {
		bd.crd(g)
	}
	if len(bd.errs) > 0 {
		return nil, bd.errs
	}
	g.markSensitive()
	return g, nil
}

// resources builds each resource. Those whose id is valid and unique are
// returned in order (and become CEL variables); the others are reported and
// left out so their expressions are not blamed for the id. collections are
// the ids of forEach resources.
func (bd *build) resources(g *Graph) (order []*Resource, collections map[string]bool) {
	collections = map[string]bool{}
	for i := range bd.rgd.Spec.Resources {
		r := bd.resource(i)
		if r == nil {
			if id := bd.rgd.Spec.Resources[i].ID; idPattern.MatchString(id) {
				bd.leftOut[id] = true
			}
			continue
		}
		if _, dup := g.Resources[r.ID]; dup {
			bd.errorf(r.ID, fmt.Sprintf("spec.resources[%d].id", i), "give every resource its own id",
				"duplicate resource id %q", r.ID)
			continue
		}
		g.Resources[r.ID] = r
		order = append(order, r)
		if r.IsList() {
			collections[r.ID] = true
		}
	}
	bd.iteratorCollisions(order)
	return order, collections
}

// envs returns the environment expressions are checked in, and keeps the
// one they run in (bd.runEnv) when the two differ; false after reporting
// an error.
func (bd *build) envs(schemaType *apiservercel.DeclType, order []*Resource, collections map[string]bool) (*cel.Env, bool) {
	ids := make([]string, 0, len(order))
	for _, r := range order {
		ids = append(ids, r.ID)
	}
	env, err := graphEnv(schemaType, ids, nil, collections)
	if err != nil {
		bd.errorf("", "", "", "%v", err)
		return nil, false
	}
	types := bd.resourceTypes(order)
	bd.objectTypes = indexObjectTypes(schemaType)
	for _, t := range types {
		for n, d := range indexObjectTypes(t) {
			bd.objectTypes[n] = d
		}
	}
	if len(types) == 0 {
		return env, true
	}
	// Check against the kinds' schemas, but evaluate with resources as
	// dyn: observed objects are plain JSON (timestamps are strings, for
	// one), which the typed declarations would not accept.
	checkEnv, err := graphEnv(schemaType, ids, types, collections)
	if err != nil {
		bd.errorf("", "", "", "%v", err)
		return nil, false
	}
	bd.runEnv = env
	return checkEnv, true
}

// instance validates spec.schema's identity and fills Graph.Instance.
func (bd *build) instance(g *Graph) {
	s := bd.rgd.Spec.Schema
	if s.Kind == "" {
		bd.errorf("", "spec.schema.kind", "set the instance kind, e.g. kind: WebApp", "kind is empty")
	} else if !kindPattern.MatchString(s.Kind) {
		bd.errorf("", "spec.schema.kind", "use UpperCamelCase letters and digits, at most 63", "kind %q is not UpperCamelCase", s.Kind)
	}
	if s.APIVersion == "" {
		bd.errorf("", "spec.schema.apiVersion", "set a version such as v1alpha1", "apiVersion is empty")
	} else if !versionPattern.MatchString(s.APIVersion) {
		bd.errorf("", "spec.schema.apiVersion", "use a version such as v1, v1alpha1 or v2beta3 (no group)", "apiVersion %q is not a valid version", s.APIVersion)
	}
	group := s.Group
	if group == "" {
		group = Group
	}
	if msgs := validation.IsDNS1123Subdomain(group); len(msgs) > 0 {
		bd.errorf("", "spec.schema.group", "use a DNS subdomain such as example.com", "group %q is invalid: %s", group, strings.Join(msgs, "; "))
	}
	gvk := schema.GroupVersionKind{Group: group, Version: s.APIVersion, Kind: s.Kind}
	bd.clusterInstance = s.Scope == ScopeCluster
	g.Instance = Instance{
		GVK:        gvk,
		GVR:        gvk.GroupVersion().WithResource(crd.Plural(s.Kind)),
		Singular:   strings.ToLower(s.Kind),
		Namespaced: s.Scope != ScopeCluster,
	}
}

// resource checks the shape of one spec.resources entry and returns its
// node, or nil when it is too broken to use (the problems are recorded).
func (bd *build) resource(i int) *Resource {
	rs := bd.rgd.Spec.Resources[i]
	path := fmt.Sprintf("spec.resources[%d]", i)
	ok := bd.checkID(rs.ID, path+".id")
	label := rs.ID
	if label == "" {
		label = fmt.Sprintf("#%d", i)
	}
	r := &Resource{ID: rs.ID, Index: i}
	switch {
	case rs.Template != nil && rs.ExternalRef != nil:
		bd.errorf(label, path, "keep either template (kroscope creates it) or externalRef (kroscope reads it)", "template and externalRef are both set")
		return nil
	case rs.Template == nil && rs.ExternalRef == nil:
		bd.errorf(label, path, "add a template or an externalRef", "neither template nor externalRef is set")
		return nil
	case rs.ExternalRef != nil:
		path += ".externalRef"
		if !bd.externalTemplate(label, path, rs.ExternalRef, r) {
			return nil
		}
	default:
		r.Template = rs.Template
		path += ".template"
	}
	ok = bd.identity(label, path, r) && ok
	ok = bd.dimensions(label, i, r) && ok
	if !ok {
		return nil
	}
	return r
}

// checkID checks a resource id: lowerCamelCase, not a reserved word or CEL
// type name, and short enough for a label value.
func (bd *build) checkID(id, path string) bool {
	switch {
	case id == "":
		bd.errorf("", path, "give the resource a lowerCamelCase id", "id is empty")
	case !idPattern.MatchString(id):
		bd.errorf(id, path, "use lowerCamelCase letters and digits, e.g. "+lowerCamel(id), "id %q is not lowerCamelCase", id)
	case reservedIDs[id]:
		bd.errorf(id, path, "choose another id, e.g. "+id+"Resource", "id %q is a reserved word", id)
	case celTypeNames[id]:
		bd.errorf(id, path, "choose another id, e.g. "+id+"Value", "id %q is the name of a CEL type: as a variable it would shadow the type in every expression", id)
	case len(id) > validation.LabelValueMaxLength:
		bd.errorf(id, path, "shorten it", "id is %d characters long: it becomes the %s label, whose values have at most %d", len(id), nodeIDLabel, validation.LabelValueMaxLength)
	default:
		return true
	}
	return false
}

// externalTemplate makes r's template from an externalRef (one object by
// name, or every object matching a selector); false after reporting an
// error. path is the externalRef's.
func (bd *build) externalTemplate(label, path string, er *ExternalRef, r *Resource) bool {
	r.External = true
	md := map[string]any{"name": er.Name}
	if er.Selector != nil {
		r.ExternalCollection = true
		md = map[string]any{"selector": er.Selector}
		if er.Name != "" {
			bd.errorf(label, path+".metadata", "keep either name (one object) or selector (every matching object)", "metadata.name and metadata.selector are both set")
			return false
		}
		if !bd.checkSelector(label, path+".metadata.selector", er.Selector) {
			return false
		}
	}
	if er.Namespace != "" {
		md["namespace"] = er.Namespace
	}
	r.Template = map[string]any{"apiVersion": er.APIVersion, "kind": er.Kind, "metadata": md}
	return true
}

// identity checks apiVersion, kind and metadata.name of a template and
// resolves its GVR and scope.
func (bd *build) identity(label, path string, r *Resource) bool {
	apiVersion, okVersion := bd.typeField(label, path, r.Template, "apiVersion", apiVersionPattern,
		"set apiVersion, e.g. apps/v1", "write group/version or version, e.g. apps/v1 or v1; expressions are not allowed here")
	kind, okKind := bd.typeField(label, path, r.Template, "kind", kindPattern,
		"set kind, e.g. Deployment", "kinds are UpperCamelCase, e.g. ConfigMap; expressions are not allowed here")
	md, isMap := r.Template["metadata"].(map[string]any)
	if !isMap {
		bd.errorf(label, path+".metadata", "add metadata with a name", "metadata is missing or not an object")
		return false
	}
	okMeta := bd.templateMetadata(label, path, kind, r, md)
	if !okVersion || !okKind || !okMeta {
		return false
	}
	gv, err := schema.ParseGroupVersion(apiVersion)
	if err != nil {
		bd.errorf(label, path+".apiVersion", "", "%v", err)
		return false
	}
	r.GVK = gv.WithKind(kind)
	r.GVR, r.Namespaced = bd.b.resolve(r.GVK)
	return bd.namespaceFits(label, path, kind, r, md)
}

// typeField checks apiVersion or kind: a literal string matching pattern.
func (bd *build) typeField(label, path string, tmpl map[string]any, field string, pattern *regexp.Regexp, fixMissing, fixInvalid string) (string, bool) {
	v, isStr := tmpl[field].(string)
	switch {
	case tmpl[field] == nil || v == "":
		bd.errorf(label, path+"."+field, fixMissing, "%s is missing", field)
	case !isStr:
		bd.errorf(label, path+"."+field, "", "%s must be a string", field)
	case !pattern.MatchString(v):
		bd.errorf(label, path+"."+field, fixInvalid, "%s %q is invalid", field, v)
	default:
		return v, true
	}
	return v, false
}

// templateMetadata checks a template's name (not needed by an external
// collection, which selects) and that its labels and annotations use no
// prefix kroscope reserves.
func (bd *build) templateMetadata(label, path, kind string, r *Resource, md map[string]any) bool {
	ok := true
	if name, _ := md["name"].(string); name == "" && !r.ExternalCollection {
		fix := "set metadata.name, e.g. ${schema.metadata.name}-" + strings.ToLower(kind)
		if r.External {
			fix = "set metadata.name (one object) or metadata.selector (every object with matching labels)"
		}
		bd.errorf(label, path+".metadata.name", fix, "metadata.name is missing or not a string")
		ok = false
	}
	for _, key := range []string{"labels", "annotations"} {
		m, _ := md[key].(map[string]any)
		for _, k := range sortedKeys(m) {
			for _, prefix := range reservedLabelHints {
				if strings.HasPrefix(k, prefix) {
					bd.errorf(label, formatPath(path, "metadata", key, k), "remove it: kroscope sets "+prefix+" "+key+" itself", "%s %q uses the reserved prefix %s", strings.TrimSuffix(key, "s"), k, prefix)
					ok = false
					break
				}
			}
		}
	}
	return ok
}

// namespaceFits checks metadata.namespace against the resolved scope.
func (bd *build) namespaceFits(label, path, kind string, r *Resource, md map[string]any) bool {
	if _, set := md["namespace"]; set && !r.Namespaced {
		bd.errorf(label, path+".metadata.namespace", "remove it: "+kind+" is cluster-scoped", "metadata.namespace is set on a cluster-scoped kind")
		return false
	}
	// A cluster-scoped instance has no namespace to put a namespaced child
	// in; an external collection without one lists every namespace.
	if bd.clusterInstance && r.Namespaced && !r.ExternalCollection {
		if ns, _ := md["namespace"].(string); strings.TrimSpace(ns) == "" {
			bd.errorf(label, path+".metadata.namespace", "set metadata.namespace, e.g. ${schema.spec.namespace} or default",
				"%s is namespaced and must set metadata.namespace when the instance kind is cluster-scoped (schema.scope: Cluster)", kind)
			return false
		}
	}
	return true
}

// resolve maps a kind to its resource and scope: the REST mapper when
// given and it knows the kind, otherwise core knowledge and kro's plural
// rule (flect), which unlike apimachinery's guess knows irregular nouns.
func (b *Builder) resolve(gvk schema.GroupVersionKind) (schema.GroupVersionResource, bool) {
	if b.mapper != nil {
		if m, err := b.mapper.RESTMapping(gvk.GroupKind(), gvk.Version); err == nil {
			return m.Resource, m.Scope.Name() == meta.RESTScopeNameNamespace
		}
	}
	return gvk.GroupVersion().WithResource(crd.Plural(gvk.Kind)), !clusterScoped[gvk.GroupKind()]
}

// clusterScoped lists the built-in cluster-scoped kinds.
var clusterScoped = map[schema.GroupKind]bool{}

func init() {
	for _, gk := range []string{
		"Namespace", "Node", "PersistentVolume", "ComponentStatus",
		"ClusterRole.rbac.authorization.k8s.io", "ClusterRoleBinding.rbac.authorization.k8s.io",
		"StorageClass.storage.k8s.io", "CSIDriver.storage.k8s.io", "CSINode.storage.k8s.io",
		"VolumeAttachment.storage.k8s.io", "PriorityClass.scheduling.k8s.io",
		"CustomResourceDefinition.apiextensions.k8s.io", "APIService.apiregistration.k8s.io",
		"ValidatingWebhookConfiguration.admissionregistration.k8s.io",
		"MutatingWebhookConfiguration.admissionregistration.k8s.io",
		"ValidatingAdmissionPolicy.admissionregistration.k8s.io",
		"ValidatingAdmissionPolicyBinding.admissionregistration.k8s.io",
		"IngressClass.networking.k8s.io", "RuntimeClass.node.k8s.io",
		"CertificateSigningRequest.certificates.k8s.io", "FlowSchema.flowcontrol.apiserver.k8s.io",
		"PriorityLevelConfiguration.flowcontrol.apiserver.k8s.io",
		"ResourceGraphDefinition.kro.run",
	} {
		clusterScoped[schema.ParseGroupKind(gk)] = true
	}
}

// expressions compiles the template fields, includeWhen and readyWhen of r
// and records its dependencies.
func (bd *build) expressions(env *cel.Env, r *Resource) {
	var iters map[string]bool // a collection's iterators and each
	if r.IsList() {
		scoped, leave := bd.enterCollection(env, r)
		defer leave()
		if scoped == nil {
			return
		}
		env, iters = scoped, iteratorNames(r)
	}
	deps := map[string]bool{}
	bd.templateFields(env, r, iters, deps)
	if r.IsCollection() {
		bd.compileDimensions(env, r, deps)
		bd.checkUniqueIdentity(r)
	}
	bd.includeWhen(env, r, iters, deps)
	bd.readyWhen(env, r)
	for _, rs := range bd.rgd.Spec.Resources {
		if deps[rs.ID] {
			r.Dependencies = append(r.Dependencies, rs.ID)
		}
	}
}

// templateFields compiles every template string that holds expressions
// into r.Fields, adding the ids they read to deps.
func (bd *build) templateFields(env *cel.Env, r *Resource, iters, deps map[string]bool) {
	base := templateBase(r)
	walkStrings(r.Template, nil, func(segs []any, s string) {
		if strings.Contains(s, "${") && len(segs) > 0 {
			if _, isKey := segs[len(segs)-1].(keyMarker); isKey {
				bd.errorf(r.ID, formatPath(base, segs[:len(segs)-1]...), "write the key literally", "expressions are not allowed in map keys")
				return
			}
		}
		f := bd.field(env, r.ID, base, segs, s)
		if f == nil {
			return
		}
		if f.Path == "apiVersion" || f.Path == "kind" {
			bd.errorf(r.ID, formatPath(base, segs...), "write it literally: the kind must be known before rendering", "%s must not hold expressions", f.Path)
			return
		}
		if bd.fieldExpressions(r, f, formatPath(base, segs...), iters, deps) {
			r.Fields = append(r.Fields, f)
		}
	})
}

// fieldExpressions checks the expressions of one template field (omit()
// only as the whole value, no each) and adds what they read to deps; false
// after reporting an error that leaves the field out.
func (bd *build) fieldExpressions(r *Resource, f *Field, path string, iters, deps map[string]bool) bool {
	for _, e := range f.Expressions {
		if !bd.checkOmit(r.ID, path, e, !r.External) {
			return false
		}
		if e.usesOmit && !f.Standalone {
			bd.errorf(r.ID, path, "write ${...} as the whole value, e.g. ${cond ? value : omit()}",
				"${%s}: omit() must be the whole field value, not part of a string", e.Source)
			return false
		}
		if e.usesOmit {
			r.usesOmit = true
		}
		bd.collectDeps(r, e, path, "read other resources or schema; a resource cannot depend on itself", deps)
		bd.forbidRefs(r, e, path, map[string]bool{EachIdentifier: iters != nil},
			"use the iterator names in templates", "each is the item readyWhen checks, not a template value")
	}
	return true
}

// includeWhen compiles r's includeWhen conditions, adding the ids they
// read to deps; they decide for the whole collection, so they read no
// iterator.
func (bd *build) includeWhen(env *cel.Env, r *Resource, iters, deps map[string]bool) {
	for i, src := range bd.rgd.Spec.Resources[r.Index].IncludeWhen {
		path := fmt.Sprintf("spec.resources[%d].includeWhen[%d]", r.Index, i)
		e := bd.condition(env, r.ID, path, src)
		if e == nil {
			continue
		}
		bd.collectDeps(r, e, path, "includeWhen decides whether the resource exists, so it cannot read it; use schema or other resources", deps)
		bd.forbidRefs(r, e, path, iters, "read schema or other resources",
			"includeWhen decides for the whole collection, not per item")
		r.IncludeWhen = append(r.IncludeWhen, e)
	}
}

// readyWhen compiles r's readyWhen conditions, which read only r itself
// (each, for a collection's items).
func (bd *build) readyWhen(env *cel.Env, r *Resource) {
	self, fix := r.ID, "readyWhen may read only "+r.ID+", e.g. ${"+r.ID+".status...}"
	if r.IsList() {
		self, fix = EachIdentifier, "a collection's readyWhen may read only each (one item), e.g. ${each.status...}; every item must satisfy it"
	}
	for i, src := range bd.rgd.Spec.Resources[r.Index].ReadyWhen {
		path := fmt.Sprintf("spec.resources[%d].readyWhen[%d]", r.Index, i)
		e := bd.condition(env, r.ID, path, src)
		if e == nil {
			continue
		}
		for _, ref := range e.References {
			if ref != self {
				bd.errorf(r.ID, path, fix, "${%s} reads %s", e.Source, ref)
			}
		}
		r.ReadyWhen = append(r.ReadyWhen, e)
	}
}

// field scans and compiles one string leaf; nil when it holds no
// expression or is broken (recorded).
func (bd *build) field(env *cel.Env, resource, base string, segs []any, s string) *Field {
	path := formatPath(base, segs...)
	parts, err := Scan(s)
	if err != nil {
		fix := ""
		if strings.Contains(err.Error(), "nested") {
			fix = `a literal "${" is written ${"${"}`
		}
		bd.errorf(resource, path, fix, "%v", err)
		return nil
	}
	if !hasExpr(parts) {
		return nil
	}
	f := &Field{Path: formatPath("", segs...), Segments: plainSegments(segs), Raw: s, Standalone: isStandalone(parts)}
	ok := true
	for _, p := range parts {
		if !p.Expr {
			continue
		}
		c, err := bd.compile(env, p.Text)
		if err != nil {
			bd.errorf(resource, path, "", "${%s}: %v", p.Text, err)
			ok = false
			continue
		}
		f.Expressions = append(f.Expressions, c.expr)
		if f.Standalone {
			f.out = c.out
		}
	}
	if !ok {
		return nil
	}
	return f
}

// condition compiles a readyWhen/includeWhen entry: a standalone boolean.
func (bd *build) condition(env *cel.Env, resource, path, src string) *Expression {
	parts, err := Scan(src)
	if err != nil {
		bd.errorf(resource, path, "", "%v", err)
		return nil
	}
	if !isStandalone(parts) {
		bd.errorf(resource, path, "write exactly one ${...} with nothing around it (a YAML | block adds a newline; use |-)",
			"%q is not a standalone expression", src)
		return nil
	}
	c, err := bd.compile(env, parts[0].Text)
	if err != nil {
		bd.errorf(resource, path, "", "${%s}: %v", parts[0].Text, err)
		return nil
	}
	if !bd.checkOmit(resource, path, c.expr, false) {
		return nil
	}
	if !isBoolish(c.out) {
		bd.errorf(resource, path, "make it return a boolean, e.g. compare with ==", "${%s} returns %s, not bool", parts[0].Text, c.out.String())
		return nil
	}
	return c.expr
}

// status compiles the instance status projections.
func (bd *build) status(env *cel.Env, g *Graph) {
	g.statusTypes = map[string]*cel.Type{}
	if raw, ok := bd.rgd.Spec.Schema.Status[StatusConditionsKey]; ok {
		bd.conditions(env, g, raw)
	}
	walkStatus(bd.rgd.Spec.Schema.Status, nil, func(segs []any, v any) {
		if len(segs) == 0 || segs[0] == StatusConditionsKey {
			return
		}
		if _, isKey := segs[len(segs)-1].(keyMarker); isKey {
			return
		}
		if f, out := bd.statusField(env, segs, v); f != nil {
			g.statusTypes[f.Path] = out
			g.Status = append(g.Status, f)
		}
	})
}

// statusField compiles one status field, which must hold expressions that
// read a resource or schema; out is its type (string unless standalone).
// nil after reporting an error.
func (bd *build) statusField(env *cel.Env, segs []any, v any) (f *Field, out *cel.Type) {
	path := formatPath("spec.schema.status", segs...)
	s, isStr := v.(string)
	if !isStr {
		bd.errorf("", path, "write a ${...} expression", "status field is a %s, not an expression", typeName(v))
		return nil, nil
	}
	parts, err := Scan(s)
	if err != nil {
		bd.errorf("", path, "", "%v", err)
		return nil, nil
	}
	if !hasExpr(parts) {
		bd.errorf("", path, "write a ${...} expression that reads resources or schema", "status field %q holds no expression", s)
		return nil, nil
	}
	f = &Field{Path: formatPath("", segs...), Segments: plainSegments(segs), Raw: s, Standalone: isStandalone(parts)}
	out = cel.StringType
	for _, p := range parts {
		if !p.Expr {
			continue
		}
		c, err := bd.compile(env, p.Text)
		if err != nil {
			bd.errorf("", path, "", "${%s}: %v", p.Text, err)
			return nil, nil
		}
		if !bd.checkOmit("", path, c.expr, false) {
			return nil, nil
		}
		if f.Standalone {
			out = c.out
		}
		f.Expressions = append(f.Expressions, c.expr)
	}
	if !readsAnything(f.Expressions) {
		// kro v0.9.4 refuses it: a constant has no place in status.
		bd.errorf("", path, "read a resource or schema, e.g. ${deployment.status.availableReplicas}",
			"instance status field must refer to a resource or schema: %q reads neither", s)
		return nil, nil
	}
	return f, out
}

// readsAnything reports whether any of exprs reads a resource or schema.
func readsAnything(exprs []*Expression) bool {
	for _, e := range exprs {
		if len(e.References) > 0 {
			return true
		}
	}
	return false
}

// validations compiles spec.schema.validation rules against the instance
// spec (as self), so a broken rule is reported here rather than by the API
// server when the CRD is written.
func (bd *build) validations(schemaType *apiservercel.DeclType) {
	for i, v := range bd.rgd.Spec.Schema.Validation {
		path := fmt.Sprintf("spec.schema.validation[%d].expression", i)
		if strings.TrimSpace(v.Expression) == "" {
			bd.errorf("", path, "", "expression is empty")
			continue
		}
		var selfType *apiservercel.DeclType
		if schemaType != nil {
			if f, ok := schemaType.Fields["spec"]; ok {
				selfType = f.Type
			}
		}
		env, err := selfEnv(selfType)
		if err != nil {
			bd.errorf("", path, "", "%v", err)
			continue
		}
		c, err := compile(env, v.Expression)
		if err != nil {
			bd.errorf("", path, "", "%v", err)
			continue
		}
		if !isBoolish(c.out) {
			bd.errorf("", path, "make the rule return a boolean", "rule returns %s, not bool", c.out.String())
		}
	}
}

// keyMarker marks, in a walk path, that the visited string is a map key.
type keyMarker string

// walkStrings calls visit for every string value and every map key (with a
// trailing keyMarker segment) under v.
func walkStrings(v any, segs []any, visit func(segs []any, s string)) {
	switch val := v.(type) {
	case string:
		visit(segs, val)
	case map[string]any:
		for _, k := range sortedKeys(val) {
			p := append(append([]any{}, segs...), k)
			if strings.Contains(k, "${") {
				visit(append(p, keyMarker(k)), k)
			}
			walkStrings(val[k], p, visit)
		}
	case []any:
		for i, e := range val {
			walkStrings(e, append(append([]any{}, segs...), i), visit)
		}
	}
}

// walkStatus calls visit for every leaf (neither map nor list) under v,
// with list indexes as int segments.
func walkStatus(v any, segs []any, visit func(segs []any, v any)) {
	switch val := v.(type) {
	case map[string]any:
		for _, k := range sortedKeys(val) {
			walkStatus(val[k], append(append([]any{}, segs...), k), visit)
		}
	case []any:
		if len(val) == 0 {
			visit(segs, val)
		}
		for i, el := range val {
			walkStatus(el, append(append([]any{}, segs...), i), visit)
		}
	default:
		visit(segs, v)
	}
}

func plainSegments(segs []any) []any {
	out := make([]any, 0, len(segs))
	for _, s := range segs {
		if _, ok := s.(keyMarker); !ok {
			out = append(out, s)
		}
	}
	return out
}

var simpleKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// formatPath renders segments as a.b[0]["k.e.y"] under base.
func formatPath(base string, segs ...any) string {
	var b strings.Builder
	b.WriteString(base)
	for _, s := range segs {
		switch v := s.(type) {
		case int:
			fmt.Fprintf(&b, "[%d]", v)
		case keyMarker:
		case string:
			if simpleKey.MatchString(v) {
				if b.Len() > 0 {
					b.WriteByte('.')
				}
				b.WriteString(v)
			} else {
				fmt.Fprintf(&b, "[%q]", v)
			}
		}
	}
	return b.String()
}

func joinPath(base, key string) string { return formatPath(base, key) }

func lowerCamel(s string) string {
	var b strings.Builder
	up := false
	for i, r := range s {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9' && i > 0:
			if up {
				b.WriteString(strings.ToUpper(string(r)))
				up = false
			} else {
				b.WriteRune(r)
			}
		case r >= 'A' && r <= 'Z':
			if b.Len() == 0 {
				b.WriteString(strings.ToLower(string(r)))
			} else {
				b.WriteRune(r)
			}
			up = false
		default:
			up = b.Len() > 0
		}
	}
	if b.Len() == 0 {
		return "myResource"
	}
	return b.String()
}

// templateBase is the path of r's template (or externalRef) in the RGD.
func templateBase(r *Resource) string {
	if r.External {
		return fmt.Sprintf("spec.resources[%d].externalRef", r.Index)
	}
	return fmt.Sprintf("spec.resources[%d].template", r.Index)
}

// compile compiles src in env; when resources are typed for checking, the
// program is planned later in the run-time environment.
// Graphs repeat expressions (${schema.spec.name} in names and labels), so
// each distinct source is compiled once per build and the immutable
// Expression shared.
func (bd *build) compile(env *cel.Env, src string) (*compiled, error) {
	key := bd.cacheScope + src
	if c, ok := bd.cache[key]; ok {
		return c.c, c.err
	}
	c, err := compile(env, src)
	err = bd.explainLeftOut(err)
	if err == nil {
		c.expr.limits = bd.b.limits
		for _, ref := range c.expr.References {
			if vs := bd.valueSchemas[ref]; vs != nil {
				if c.expr.valueSchemas == nil {
					c.expr.valueSchemas = map[string]celcommon.Schema{}
				}
				c.expr.valueSchemas[ref] = vs
			}
		}
	}
	if err == nil && bd.runEnv != nil {
		c.expr.env, c.expr.ast = bd.runEnv, nil
	}
	if bd.cache == nil {
		bd.cache = map[string]cachedCompile{}
	}
	bd.cache[key] = cachedCompile{c, err}
	return c, err
}

// explainLeftOut rewrites a compile error's "unknown identifier" for the
// resources left out for errors of their own: their ids are not unknown,
// and what to fix is the resource.
func (bd *build) explainLeftOut(err error) error {
	if err == nil || len(bd.leftOut) == 0 {
		return err
	}
	msg := err.Error()
	for id := range bd.leftOut {
		msg = strings.ReplaceAll(msg, unknownIdentifier(id), leftOutResource(id))
	}
	return errors.New(msg)
}

type cachedCompile struct {
	c   *compiled
	err error
}

// collectDeps adds the resources e reads to deps; reading r itself is an
// error at path, with fix as the advice.
func (bd *build) collectDeps(r *Resource, e *Expression, path, fix string, deps map[string]bool) {
	for _, ref := range e.References {
		if ref == r.ID {
			bd.errorf(r.ID, path, fix, "${%s} refers to the resource itself", e.Source)
		} else if ref != SchemaIdentifier {
			deps[ref] = true
		}
	}
}

// checkSelector checks an external collection's selector as written: a
// LabelSelector whose matchLabels values and matchExpressions values may
// hold ${...}, but whose keys and operators are literal.
func (bd *build) checkSelector(label, path string, sel map[string]any) bool {
	ok := true
	for _, k := range sortedKeys(sel) {
		if k != "matchLabels" && k != "matchExpressions" {
			bd.errorf(label, formatPath(path, k), "allowed fields: matchLabels, matchExpressions", "unknown field %q", k)
			ok = false
		}
	}
	if v, set := sel["matchLabels"]; set && v != nil {
		ok = bd.checkMatchLabels(label, path+".matchLabels", v) && ok
	}
	if v, set := sel["matchExpressions"]; set && v != nil {
		list, isList := v.([]any)
		if !isList {
			bd.errorf(label, path+".matchExpressions", "write a list of {key, operator, values}", "matchExpressions must be a list, got %s", typeName(v))
			return false
		}
		for i, e := range list {
			ok = bd.checkMatchExpression(label, fmt.Sprintf("%s.matchExpressions[%d]", path, i), e) && ok
		}
	}
	return ok
}

// checkMatchLabels: a map of label keys to string values.
func (bd *build) checkMatchLabels(label, path string, v any) bool {
	ok := true
	m, isMap := v.(map[string]any)
	if !isMap {
		bd.errorf(label, path, "write a map of label: value", "matchLabels must be an object, got %s", typeName(v))
		ok = false
	}
	for _, k := range sortedKeys(m) {
		if _, isStr := m[k].(string); !isStr {
			bd.errorf(label, formatPath(path, k), "quote the value", "label value must be a string, got %s", typeName(m[k]))
			ok = false
		}
	}
	return ok
}

// checkMatchExpression: {key, operator, values} with a literal key and
// operator, and values as the operator needs them.
func (bd *build) checkMatchExpression(label, p string, e any) bool {
	m, isMap := e.(map[string]any)
	if !isMap {
		bd.errorf(label, p, "write {key, operator, values}", "must be an object, got %s", typeName(e))
		return false
	}
	ok := true
	for _, k := range sortedKeys(m) {
		if k != "key" && k != "operator" && k != "values" {
			bd.errorf(label, formatPath(p, k), "allowed fields: key, operator, values", "unknown field %q", k)
			ok = false
		}
	}
	key, _ := m["key"].(string)
	switch {
	case key == "":
		bd.errorf(label, p+".key", "set the label key", "key is missing or not a string")
		ok = false
	case strings.Contains(key, "${"):
		bd.errorf(label, p+".key", "write the key literally", "expressions are not allowed in a selector key")
		ok = false
	}
	return bd.checkOperator(label, p, m) && ok
}

// checkOperator: In and NotIn need string values, Exists and DoesNotExist
// take none.
func (bd *build) checkOperator(label, p string, m map[string]any) bool {
	op, _ := m["operator"].(string)
	ok := true
	switch op {
	case "In", "NotIn":
		vals, isList := m["values"].([]any)
		if !isList || len(vals) == 0 {
			bd.errorf(label, p+".values", "list at least one value", "operator %s needs a non-empty values list", op)
			ok = false
		}
		for j, val := range vals {
			if _, isStr := val.(string); !isStr {
				bd.errorf(label, fmt.Sprintf("%s.values[%d]", p, j), "quote the value", "value must be a string, got %s", typeName(val))
				ok = false
			}
		}
	case "Exists", "DoesNotExist":
		if vals, _ := m["values"].([]any); len(vals) > 0 {
			bd.errorf(label, p+".values", "remove values", "operator %s takes no values", op)
			ok = false
		}
	default:
		bd.errorf(label, p+".operator", "use In, NotIn, Exists or DoesNotExist", "operator %q is not a label selector operator", op)
		ok = false
	}
	return ok
}
