package memcluster

import (
	"context"
	"encoding/base64"
	"fmt"
	"sync"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel/model"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/listtype"
	schemaobjectmeta "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/objectmeta"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metavalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"k8s.io/apiserver/pkg/cel/common"
	"k8s.io/apiserver/pkg/cel/openapi/resolver"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/openapi"
	"k8s.io/kube-openapi/pkg/validation/spec"

	"github.com/kroscope/kroscope/reconciler/graph/builtinschemas"
)

// crSchema is one served version of a CustomResourceDefinition as the API
// server checks writes against it: the structural schema (pruning,
// defaulting), the OpenAPI validators of the whole object and of its status,
// and the x-kubernetes-validations rules (nil when there are none).
type crSchema struct {
	structural *structuralschema.Structural
	validator  apiservervalidation.SchemaValidator
	status     apiservervalidation.SchemaValidator // nil without a status property
	rules      *cel.Validator
}

// newCRSchema builds what the API server builds from one version's schema.
func newCRSchema(internal *apiextensions.JSONSchemaProps) (*crSchema, error) {
	s, err := structuralschema.NewStructural(internal)
	if err != nil {
		return nil, fmt.Errorf("schema is not structural: %w", err)
	}
	v, _, err := apiservervalidation.NewSchemaValidator(internal)
	if err != nil {
		return nil, err
	}
	cs := &crSchema{structural: s, validator: v, rules: cel.NewValidator(s, true, celconfig.PerCallLimit)}
	if st, ok := internal.Properties["status"]; ok {
		if cs.status, _, err = apiservervalidation.NewSchemaValidator(&st); err != nil {
			return nil, err
		}
	}
	return cs, nil
}

// admit does to a write what the API server does between decoding it and
// storing it: a Secret's stringData is folded into data; a custom resource
// is pruned to its schema and defaulted, then validated (its metadata, its
// schema, its rules) and refused as Invalid with the API server's field
// errors. old is nil on create; sub is the subresource written.
func admit(k *kindInfo, old, obj *unstructured.Unstructured, sub string) error {
	if k.gvk == secretGVK {
		if err := foldStringData(obj); err != nil {
			return err
		}
	}
	s := k.schema
	if s == nil {
		if b := builtinValidators(k.gvk); b != nil {
			dropNulls(obj.Object)
			if old != nil && equalObjects(old, obj) {
				return nil // a no-op write: what was stored passed already
			}
			if errs := b.validate(obj, sub); len(errs) > 0 {
				return apierrors.NewInvalid(k.gvk.GroupKind(), obj.GetName(), errs)
			}
		}
		return nil
	}
	pruning.Prune(obj.Object, s.structural, true)
	structuraldefaulting.PruneNonNullableNullsWithoutDefaults(obj.Object, s.structural)
	structuraldefaulting.Default(obj.Object, s.structural)
	NormalizeNumbers(obj.Object)
	var errs field.ErrorList
	if old == nil {
		errs = s.validateCreate(k, obj)
	} else {
		errs = s.validateUpdate(old, obj, sub)
	}
	if len(errs) > 0 {
		return apierrors.NewInvalid(k.gvk.GroupKind(), obj.GetName(), errs)
	}
	return nil
}

// validateCreate is the API server's validation of a new custom resource.
func (s *crSchema) validateCreate(k *kindInfo, obj *unstructured.Unstructured) field.ErrorList {
	errs := metavalidation.ValidateObjectMetaAccessor(obj, k.namespaced, metavalidation.NameIsDNSSubdomain, field.NewPath("metadata"))
	errs = append(errs, apiservervalidation.ValidateCustomResource(nil, obj.Object, s.validator)...)
	errs = append(errs, schemaobjectmeta.Validate(context.Background(), nil, obj.Object, s.structural, false)...)
	errs = append(errs, listtype.ValidateListSetsAndMaps(nil, s.structural, obj.Object)...)
	return s.checkRules(errs, obj.Object, nil, nil)
}

// validateUpdate is the API server's validation of a changed custom
// resource or of its status. Ratcheting, on by default since Kubernetes
// 1.30, lets a value that was already invalid and did not change through.
func (s *crSchema) validateUpdate(old, obj *unstructured.Unstructured, sub string) field.ErrorList {
	ratchet := common.NewCorrelatedObject(obj.Object, old.Object, &model.Structural{Structural: s.structural})
	errs := metavalidation.ValidateObjectMetaAccessorUpdate(obj, old, field.NewPath("metadata"))
	if sub == "status" {
		if st, ok := obj.Object["status"]; ok && s.status != nil {
			errs = append(errs, apiservervalidation.ValidateCustomResourceUpdate(field.NewPath("status"), st, old.Object["status"], s.status,
				apiservervalidation.WithRatcheting(ratchet.Key("status")))...)
		}
	} else {
		errs = append(errs, apiservervalidation.ValidateCustomResourceUpdate(nil, obj.Object, old.Object, s.validator,
			apiservervalidation.WithRatcheting(ratchet))...)
		errs = append(errs, schemaobjectmeta.Validate(context.Background(), nil, obj.Object, s.structural, false)...)
	}
	if len(listtype.ValidateListSetsAndMaps(nil, s.structural, old.Object)) == 0 {
		errs = append(errs, listtype.ValidateListSetsAndMaps(nil, s.structural, obj.Object)...)
	}
	return s.checkRules(errs, obj.Object, old.Object, ratchet)
}

// checkRules adds the x-kubernetes-validations rules' errors to errs, unless
// errs already holds an error that makes the rules meaningless (a wrong
// type, a missing field): then, as the API server does, one error says the
// rules were not checked.
func (s *crSchema) checkRules(errs field.ErrorList, obj, old any, ratchet *common.CorrelatedObject) field.ErrorList {
	if s.rules == nil {
		return errs
	}
	for _, e := range errs {
		switch e.Type {
		case field.ErrorTypeNotSupported, field.ErrorTypeRequired, field.ErrorTypeTooLong, field.ErrorTypeTooMany, field.ErrorTypeTypeInvalid:
			return append(errs, field.Invalid(nil, nil, "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"))
		}
	}
	var opts []cel.Option
	if ratchet != nil {
		opts = append(opts, cel.WithRatcheting(ratchet))
	}
	ruleErrs, _ := s.rules.Validate(context.Background(), nil, s.structural, obj, old, celconfig.RuntimeCELCostBudget, opts...)
	return append(errs, ruleErrs...)
}

// foldStringData moves a Secret's stringData into data, base64-encoded, as
// the API server does when it decodes a Secret: stringData is write-only
// and wins over data for the same key.
func foldStringData(obj *unstructured.Unstructured) error {
	sd, ok := obj.Object["stringData"].(map[string]any)
	delete(obj.Object, "stringData")
	if !ok || len(sd) == 0 {
		return nil
	}
	data, _ := obj.Object["data"].(map[string]any)
	if data == nil {
		data = map[string]any{}
	}
	for k, v := range sd {
		s, ok := v.(string)
		if !ok {
			return apierrors.NewBadRequest(fmt.Sprintf("Secret %q: stringData.%s is a %T, not a string", obj.GetName(), k, v))
		}
		data[k] = base64.StdEncoding.EncodeToString([]byte(s))
	}
	obj.Object["data"] = data
	return nil
}

// builtinSchema is a built-in kind's OpenAPI validators: of the whole
// object, and of its status for status writes (which change nothing else).
type builtinSchema struct {
	object, status apiservervalidation.SchemaValidator
}

// builtinSchemas are the built-in kinds' validators, made on first use
// from the schemas kroscope embeds.
var builtinSchemas sync.Map // schema.GroupVersionKind → *builtinSchema (nil: none)

// builtinValidators returns a built-in kind's validators, or nil when the
// kind has no schema here (CRDs and kro's graphs are not checked here).
// Secrets are not checked either: kube-openapi's format errors quote the
// value (a data value that is not base64), and a Secret's values reach no
// message.
func builtinValidators(gvk schema.GroupVersionKind) *builtinSchema {
	if v, ok := builtinSchemas.Load(gvk); ok {
		return v.(*builtinSchema)
	}
	var b *builtinSchema
	if gvk.Group != "apiextensions.k8s.io" && gvk.Group != "kro.run" && gvk != secretGVK {
		r := &resolver.ClientDiscoveryResolver{Discovery: builtinDiscovery{}}
		if s, err := r.ResolveSchema(gvk); err == nil {
			dropIntOrStringFormat(s, 0)
			b = &builtinSchema{object: apiservervalidation.NewSchemaValidatorFromOpenAPI(s)}
			if st, ok := s.Properties["status"]; ok {
				b.status = apiservervalidation.NewSchemaValidatorFromOpenAPI(&st)
			}
		}
	}
	builtinSchemas.Store(gvk, b)
	return b
}

// validate checks a write of a built-in kind: a status write only its
// status (the rest is the stored object's), any other the whole object.
func (b *builtinSchema) validate(obj *unstructured.Unstructured, sub string) field.ErrorList {
	if sub != "status" {
		return apiservervalidation.ValidateCustomResource(nil, obj.Object, b.object)
	}
	if st, ok := obj.Object["status"]; ok && b.status != nil {
		return apiservervalidation.ValidateCustomResource(field.NewPath("status"), st, b.status)
	}
	return nil
}

// builtinDiscovery serves only the embedded OpenAPI documents.
type builtinDiscovery struct{ discovery.DiscoveryInterface }

func (builtinDiscovery) OpenAPIV3() openapi.Client { return builtinschemas.Client() }

// dropNulls removes null fields, as decoding a built-in kind into its Go
// type does (a null is the field's zero value, which is not written back).
func dropNulls(m map[string]any) {
	for k, v := range m {
		switch v := v.(type) {
		case nil:
			delete(m, k)
		case map[string]any:
			dropNulls(v)
		case []any:
			for _, e := range v {
				if em, ok := e.(map[string]any); ok {
					dropNulls(em)
				}
			}
		}
	}
}

// dropIntOrStringFormat removes the format "int-or-string" the published
// schemas give IntOrString fields beside their oneOf [integer, string]:
// kube-openapi's validator knows no such format and would refuse both.
// The resolved schemas are trees (their $refs inlined) of bounded depth.
func dropIntOrStringFormat(s *spec.Schema, depth int) {
	if s == nil || depth > 64 {
		return
	}
	if s.Format == "int-or-string" {
		s.Format = ""
	}
	for k, p := range s.Properties {
		dropIntOrStringFormat(&p, depth+1)
		s.Properties[k] = p
	}
	if s.Items != nil {
		dropIntOrStringFormat(s.Items.Schema, depth+1)
	}
	if s.AdditionalProperties != nil {
		dropIntOrStringFormat(s.AdditionalProperties.Schema, depth+1)
	}
	for _, l := range [][]spec.Schema{s.AllOf, s.OneOf, s.AnyOf} {
		for i := range l {
			dropIntOrStringFormat(&l[i], depth+1)
		}
	}
}
