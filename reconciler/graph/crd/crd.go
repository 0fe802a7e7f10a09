// Package crd generates the CustomResourceDefinition of a graph's instance
// kind, checks its schema offline with the API server's own schema checks, and says
// whether an existing CRD may be overwritten.
package crd

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kroscope/kroscope/reconciler/metadata"
)

// DefaultGroup is the instance API group when the graph names none.
const DefaultGroup = "kro.run"

// Status fields kroscope writes on every instance; a graph's status
// projections must not define them.
const (
	StatusState      = "state"
	StatusConditions = "conditions"
)

// ReadyCondition is the condition type the default Ready column reads.
const ReadyCondition = "Ready"

// ValidationRule is one spec.schema.validation entry: a CEL rule on the
// instance spec, and the message shown when it fails.
type ValidationRule struct {
	Expression string
	Message    string
}

// Input is what a graph contributes to its instance CRD.
type Input struct {
	// Group defaults to DefaultGroup.
	Group, APIVersion, Kind string
	// Spec is the instance spec schema (from simpleschema); nil is an
	// empty object.
	Spec *apiextensionsv1.JSONSchemaProps
	// Status holds the fields inferred from the status projections (may
	// be nil); state and conditions are added.
	Status *apiextensionsv1.JSONSchemaProps
	// PrinterColumns replace the default State / Ready / Age columns.
	PrinterColumns []apiextensionsv1.CustomResourceColumnDefinition
	// Validation becomes x-kubernetes-validations on the instance spec.
	Validation []ValidationRule
	// GraphName names the ResourceGraphDefinition, for the ownership labels.
	GraphName string
	// ClusterScoped makes the instance kind cluster-scoped (schema.scope:
	// Cluster); the default is namespaced.
	ClusterScoped bool
	// ShortNames and Categories go to the CRD's names, for kubectl.
	ShortNames, Categories []string
	// Labels and Annotations are copied onto the CRD (schema.metadata);
	// the ownership labels kroscope sets win over them.
	Labels, Annotations map[string]string
}

var (
	kindPattern       = regexp.MustCompile(`^[A-Z][a-zA-Z0-9]{0,62}$`)
	apiVersionPattern = regexp.MustCompile(`^v[0-9]+((alpha|beta)[0-9]+)?$`)
)

// New builds the instance CRD: `<plural>.<group>`, namespaced or cluster-scoped, one served
// and stored version with the status subresource. The result passes the API
// server's CRD validation (structural schema, defaults, CEL rules), which
// New runs offline; any problem is returned with the field it concerns.
func New(in Input) (*apiextensionsv1.CustomResourceDefinition, error) {
	group := in.Group
	if group == "" {
		group = DefaultGroup
	}
	errs := checkNames(in, group)
	spec, specErrs := specSchema(in)
	errs = append(errs, specErrs...)
	status, err := statusSchema(in.Status)
	if err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	plural := Plural(in.Kind)
	scope := apiextensionsv1.NamespaceScoped
	if in.ClusterScoped {
		scope = apiextensionsv1.ClusterScoped
	}
	crd := &apiextensionsv1.CustomResourceDefinition{
		TypeMeta:   metav1.TypeMeta{APIVersion: apiextensionsv1.SchemeGroupVersion.String(), Kind: "CustomResourceDefinition"},
		ObjectMeta: objectMeta(in, plural+"."+group),
		Spec: apiextensionsv1.CustomResourceDefinitionSpec{
			Group: group,
			Names: apiextensionsv1.CustomResourceDefinitionNames{
				Kind:       in.Kind,
				ListKind:   in.Kind + "List",
				Plural:     plural,
				Singular:   strings.ToLower(in.Kind),
				ShortNames: slices.Clone(in.ShortNames),
				Categories: slices.Clone(in.Categories),
			},
			Scope:    scope,
			Versions: []apiextensionsv1.CustomResourceDefinitionVersion{version(in, spec, status)},
		},
	}
	if err := Validate(crd); err != nil {
		return nil, err
	}
	return crd, nil
}

// checkNames checks the kind, version, group and graph name the CRD is
// named and labelled with.
func checkNames(in Input, group string) []error {
	var errs []error
	if !kindPattern.MatchString(in.Kind) {
		errs = append(errs, fmt.Errorf("schema.kind %q: must be UpperCamelCase letters and digits, at most 63 characters (like WebApp)", in.Kind))
	}
	if !apiVersionPattern.MatchString(in.APIVersion) {
		errs = append(errs, fmt.Errorf("schema.apiVersion %q: must look like v1, v1alpha1 or v2beta3 (no group)", in.APIVersion))
	}
	if msgs := validation.IsDNS1123Subdomain(group); len(msgs) > 0 || !strings.Contains(group, ".") {
		errs = append(errs, fmt.Errorf("schema.group %q: must be a DNS domain with at least one dot, like kro.run", group))
	}
	if msgs := validation.IsValidLabelValue(in.GraphName); in.GraphName == "" || len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("graph name %q: must be a valid label value (at most 63 characters: letters, digits, '-', '_', '.')", in.GraphName))
	}
	return errs
}

// specSchema is the instance spec schema with the graph's validation rules.
func specSchema(in Input) (*apiextensionsv1.JSONSchemaProps, []error) {
	var errs []error
	spec := &apiextensionsv1.JSONSchemaProps{Type: "object"}
	if in.Spec != nil {
		spec = in.Spec.DeepCopy()
	}
	if spec.Type != "object" {
		errs = append(errs, fmt.Errorf("spec schema: must be an object, not %q", spec.Type))
	}
	for i, v := range in.Validation {
		if strings.TrimSpace(v.Expression) == "" {
			errs = append(errs, fmt.Errorf("schema.validation[%d]: empty expression", i))
			continue
		}
		spec.XValidations = append(spec.XValidations, apiextensionsv1.ValidationRule{Rule: v.Expression, Message: v.Message})
	}
	return spec, errs
}

// objectMeta is the CRD's name, the graph's labels and annotations, and the
// ownership labels, which win over the graph's.
func objectMeta(in Input, name string) metav1.ObjectMeta {
	labels := map[string]string{}
	maps.Copy(labels, in.Labels)
	maps.Copy(labels, Labels(in.GraphName))
	var annotations map[string]string
	if len(in.Annotations) > 0 {
		annotations = maps.Clone(in.Annotations)
	}
	return metav1.ObjectMeta{Name: name, Labels: labels, Annotations: annotations}
}

// version is the one served and stored version, with the status
// subresource and the printer columns.
func version(in Input, spec, status *apiextensionsv1.JSONSchemaProps) apiextensionsv1.CustomResourceDefinitionVersion {
	// As in kro, an empty list means the defaults too.
	columns := in.PrinterColumns
	if len(columns) == 0 {
		columns = DefaultPrinterColumns()
	}
	root := props("apiVersion", "string", "kind", "string", "metadata", "object")
	root["spec"], root["status"] = *spec, *status
	return apiextensionsv1.CustomResourceDefinitionVersion{
		Name:    in.APIVersion,
		Served:  true,
		Storage: true,
		// kro's root requires nothing, not even spec when spec has
		// required fields: kroscope's CRD must equal kro's, or taking
		// over kro's CRD would be a breaking change.
		Schema: &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: &apiextensionsv1.JSONSchemaProps{
			Type: "object", Properties: root,
		}},
		Subresources:             &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
		AdditionalPrinterColumns: columns,
	}
}

// statusSchema adds state and conditions to the inferred status fields.
func statusSchema(inferred *apiextensionsv1.JSONSchemaProps) (*apiextensionsv1.JSONSchemaProps, error) {
	s := &apiextensionsv1.JSONSchemaProps{Type: "object"}
	if inferred != nil {
		s = inferred.DeepCopy()
	}
	if s.Type != "object" {
		return nil, fmt.Errorf("status schema: must be an object, not %q", s.Type)
	}
	if s.Properties == nil {
		s.Properties = map[string]apiextensionsv1.JSONSchemaProps{}
	}
	// kro silently keeps a user's state/conditions, whose values kroscope
	// would then overwrite; naming the clash is clearer.
	for _, reserved := range []string{StatusState, StatusConditions} {
		if _, ok := s.Properties[reserved]; ok {
			return nil, fmt.Errorf("status.%s: reserved for the instance %s kroscope writes; rename the field", reserved, reserved)
		}
	}
	s.Properties[StatusState] = apiextensionsv1.JSONSchemaProps{Type: "string"}
	s.Properties[StatusConditions] = apiextensionsv1.JSONSchemaProps{
		Type: "array",
		Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{
			Type: "object",
			Properties: props("type", "string", "status", "string", "reason", "string", "message", "string",
				"lastTransitionTime", "string", "observedGeneration", "integer"),
		}},
	}
	return s, nil
}

// props are properties of plain types, given as name, type pairs.
func props(nameType ...string) map[string]apiextensionsv1.JSONSchemaProps {
	m := make(map[string]apiextensionsv1.JSONSchemaProps, len(nameType)/2)
	for i := 0; i+1 < len(nameType); i += 2 {
		m[nameType[i]] = apiextensionsv1.JSONSchemaProps{Type: nameType[i+1]}
	}
	return m
}

// DefaultPrinterColumns are State, Ready and Age, worded as kro words them
// so that `kubectl get -o wide` and `kubectl explain` read the same.
func DefaultPrinterColumns() []apiextensionsv1.CustomResourceColumnDefinition {
	return []apiextensionsv1.CustomResourceColumnDefinition{
		{Name: "State", Type: "string", JSONPath: ".status.state", Description: "The state of a ResourceGraphDefinition instance"},
		{Name: "Ready", Type: "string", JSONPath: `.status.conditions[?(@.type=="` + ReadyCondition + `")].status`, Description: "Whether a ResourceGraphDefinition instance is ready"},
		{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp", Description: "Age of the resource"},
	}
}

// Labels returns the labels that mark a CRD as generated by kroscope from
// the named graph.
func Labels(graphName string) map[string]string {
	return map[string]string{
		metadata.ManagedByLabel: metadata.ManagedByValue,
		metadata.OwnedLabel:     "true",
		metadata.GraphNameLabel: graphName,
	}
}

// Validate runs the API server's checks of a CRD's schema and printer
// columns offline (check.go), so a bad schema (not structural, a default
// that does not fit, a pattern or CEL rule that does not compile, a rule
// over the cost budget, a bad printer column) is reported before any
// cluster is involved. Schema paths are shown as instance field paths.
func Validate(crd *apiextensionsv1.CustomResourceDefinition) error {
	// Compiling CEL rules makes validation cost milliseconds per rule;
	// graphs are rebuilt with unchanged schemas often, so results are
	// remembered by content.
	raw, err := json.Marshal(crd)
	if err != nil {
		return fmt.Errorf("CRD %s: %w", crd.Name, err)
	}
	key := sha256.Sum256(raw)
	if err, ok := validated.get(key); ok {
		return err
	}
	err = validate(crd)
	validated.put(key, err)
	return err
}

func validate(crd *apiextensionsv1.CustomResourceDefinition) error {
	c := crd.DeepCopy()
	apiextensionsv1.SetObjectDefaults_CustomResourceDefinition(c)
	// The API server records the storage version on create.
	for _, v := range c.Spec.Versions {
		if v.Storage {
			c.Status.StoredVersions = []string{v.Name}
		}
	}
	var internal apiextensions.CustomResourceDefinition
	if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(c, &internal, nil); err != nil {
		return fmt.Errorf("CRD %s: %w", crd.Name, err)
	}
	fieldErrs := checkCRDNames(internal.Spec.Names, field.NewPath("spec", "names"))
	for i, v := range internal.Spec.Versions {
		p := field.NewPath("spec", "versions").Index(i)
		if v.Schema != nil {
			fieldErrs = append(fieldErrs, checkSchema(v.Schema.OpenAPIV3Schema, p.Child("schema", "openAPIV3Schema"))...)
		}
		fieldErrs = append(fieldErrs, checkColumns(v.AdditionalPrinterColumns, p.Child("additionalPrinterColumns"))...)
	}
	if internal.Spec.Validation != nil {
		fieldErrs = append(fieldErrs, checkSchema(internal.Spec.Validation.OpenAPIV3Schema, field.NewPath("spec", "validation", "openAPIV3Schema"))...)
	}
	fieldErrs = append(fieldErrs, checkColumns(internal.Spec.AdditionalPrinterColumns, field.NewPath("spec", "additionalPrinterColumns"))...)
	if len(fieldErrs) == 0 {
		return nil
	}
	errs := make([]error, len(fieldErrs))
	for i, e := range fieldErrs {
		body := e.ErrorBody()
		switch e.BadValue.(type) {
		case string, bool, int, int64, float64, nil:
		default: // a Go struct dump says nothing the path does not
			body = e.Type.String() + ": " + e.Detail
		}
		errs[i] = fmt.Errorf("CRD %s: %s: %s", crd.Name, readablePath(e.Field), body)
	}
	return errors.Join(errs...)
}

// validationCache remembers Validate's results for the last CRDs seen.
type validationCache struct {
	mu      sync.Mutex
	results map[[sha256.Size]byte]error
}

// maxCachedValidations bounds the cache; it is emptied when full, which is
// simpler than LRU and fine for the few graphs a process serves.
const maxCachedValidations = 256

var validated = &validationCache{results: map[[sha256.Size]byte]error{}}

func (c *validationCache) get(k [sha256.Size]byte) (error, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	err, ok := c.results[k]
	return err, ok
}

func (c *validationCache) put(k [sha256.Size]byte, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.results) >= maxCachedValidations {
		clear(c.results)
	}
	c.results[k] = err
}

var propertiesSegment = regexp.MustCompile(`\.properties\[([^\]]+)\]`)

// readablePath turns
// spec.validation.openAPIV3Schema.properties[spec].properties[name].pattern
// into spec.name.pattern. (The internal CRD the validation sees keeps a
// single version's schema in spec.validation.)
func readablePath(p string) string {
	for _, root := range []string{"spec.validation.openAPIV3Schema", "spec.versions[0].schema.openAPIV3Schema"} {
		if rest, ok := strings.CutPrefix(p, root); ok {
			rest = strings.TrimPrefix(propertiesSegment.ReplaceAllString(rest, ".$1"), ".")
			if rest == "" {
				return "schema"
			}
			return rest
		}
	}
	return p
}
