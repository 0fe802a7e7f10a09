package plan

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/client-go/dynamic"

	"github.com/kroscope/kroscope/reconciler/graph/crd/compat"
)

var crdGVR = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// compareCRD says what replacing the served CRD with want means under
// kro's compatibility rules (crdcompat, the rules the engine applies).
// served is false when the cluster does not serve the kind yet.
func compareCRD(ctx context.Context, dyn dynamic.Interface, want *apiextensionsv1.CustomResourceDefinition) (s *Schema, served bool, err error) {
	s = &Schema{CRD: want.Name}
	cur, err := dyn.Resource(crdGVR).Get(ctx, want.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		s.New = true
		return s, false, nil
	case apierrors.IsForbidden(err):
		// Not allowed to read CRDs: the kind may still be served; its
		// instances are listed, the compatibility is not checked.
		return nil, true, nil
	case err != nil:
		return nil, false, fmt.Errorf("reading CRD %s: %w", want.Name, err)
	}
	var old apiextensionsv1.CustomResourceDefinition
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(cur.Object, &old); err != nil {
		return nil, false, fmt.Errorf("reading CRD %s: %w", want.Name, err)
	}
	for _, c := range compat.Breaking(&old, want) {
		s.Breaking = append(s.Breaking, c.String())
	}
	return s, true, nil
}

// instanceSchema is the new CRD's schema, as the API server uses it to
// default and validate instances.
type instanceSchema struct {
	structural *structuralschema.Structural
	validator  apiservervalidation.SchemaValidator
}

func newInstanceSchema(crd *apiextensionsv1.CustomResourceDefinition) (*instanceSchema, error) {
	if len(crd.Spec.Versions) == 0 || crd.Spec.Versions[0].Schema == nil || crd.Spec.Versions[0].Schema.OpenAPIV3Schema == nil {
		return nil, fmt.Errorf("CRD %s has no schema", crd.Name)
	}
	internal := &apiextensions.JSONSchemaProps{}
	if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(crd.Spec.Versions[0].Schema.OpenAPIV3Schema, internal, nil); err != nil {
		return nil, fmt.Errorf("CRD %s: schema: %w", crd.Name, err)
	}
	st, err := structuralschema.NewStructural(internal)
	if err != nil {
		return nil, fmt.Errorf("CRD %s: schema is not structural: %w", crd.Name, err)
	}
	v, _, err := apiservervalidation.NewSchemaValidator(internal)
	if err != nil {
		return nil, fmt.Errorf("CRD %s: schema: %w", crd.Name, err)
	}
	return &instanceSchema{structural: st, validator: v}, nil
}

// apply returns obj as the API server would serve it under the new
// schema (its defaults filled in), and what the new schema refuses in it
// ("" when valid).
func (s *instanceSchema) apply(obj map[string]any) (map[string]any, string) {
	out := runtime.DeepCopyJSON(obj)
	structuraldefaulting.Default(out, s.structural)
	out = jsonNumbers(out)
	errs := apiservervalidation.ValidateCustomResource(nil, out, s.validator)
	if len(errs) == 0 {
		return out, ""
	}
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	return out, strings.Join(msgs, "; ")
}

// jsonNumbers gives obj the number types a client reads from JSON (int64
// for whole numbers): defaults arrive as float64.
func jsonNumbers(obj map[string]any) map[string]any {
	b, err := json.Marshal(obj)
	if err != nil {
		return obj
	}
	var out map[string]any
	if err := utiljson.Unmarshal(b, &out); err != nil {
		return obj
	}
	return out
}
