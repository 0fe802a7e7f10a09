package memcluster

import (
	"encoding/json"
	"fmt"
	"reflect"

	jsonpatch "gopkg.in/evanphx/json-patch.v4"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/structured-merge-diff/v6/fieldpath"
	"sigs.k8s.io/yaml"
)

// restoreField copies field from old into obj (or removes it from obj when
// old has none).
func restoreField(obj, old *unstructured.Unstructured, field string) {
	if v, ok := old.Object[field]; ok {
		obj.Object[field] = runtime.DeepCopyJSONValue(v)
	} else {
		delete(obj.Object, field)
	}
}

// specChanged reports whether anything but metadata and status differs: the
// changes that bump metadata.generation.
func specChanged(old, obj *unstructured.Unstructured) bool {
	strip := func(u *unstructured.Unstructured) map[string]any {
		m := make(map[string]any, len(u.Object))
		for k, v := range u.Object {
			if k != "metadata" && k != "status" {
				m[k] = v
			}
		}
		return m
	}
	return !reflect.DeepEqual(strip(old), strip(obj))
}

// equalObjects compares two objects ignoring managedFields timestamps,
// without copying them (it runs on every write).
func equalObjects(a, b *unstructured.Unstructured) bool {
	if len(a.Object) != len(b.Object) {
		return false
	}
	for k, av := range a.Object {
		bv, ok := b.Object[k]
		if !ok {
			return false
		}
		if k == "metadata" {
			continue
		}
		if !reflect.DeepEqual(av, bv) {
			return false
		}
	}
	am, _ := a.Object["metadata"].(map[string]any)
	bm, _ := b.Object["metadata"].(map[string]any)
	if len(am) != len(bm) {
		return false
	}
	for k, av := range am {
		bv, ok := bm[k]
		if !ok {
			return false
		}
		if k != "managedFields" && !reflect.DeepEqual(av, bv) {
			return false
		}
	}
	af, bf := a.GetManagedFields(), b.GetManagedFields()
	if len(af) != len(bf) {
		return false
	}
	for i := range af {
		af[i].Time, bf[i].Time = nil, nil
		if !reflect.DeepEqual(af[i], bf[i]) {
			return false
		}
	}
	return true
}

// resetFields keeps the other half of a status subresource out of the field
// ownership a write records, as the API server's strategies do.
func resetFields(k *kindInfo, sub string) map[fieldpath.APIVersion]fieldpath.Filter {
	if !k.status {
		return nil
	}
	var set *fieldpath.Set
	if sub == "status" {
		set = fieldpath.NewSet(fieldpath.MakePathOrDie("spec"))
	} else {
		set = fieldpath.NewSet(fieldpath.MakePathOrDie("status"))
	}
	return map[fieldpath.APIVersion]fieldpath.Filter{
		fieldpath.APIVersion(k.gvk.GroupVersion().String()): fieldpath.NewExcludeSetFilter(set),
	}
}

// learnCRDLocked serves the kinds a CustomResourceDefinition defines and
// marks it Established, so waiters see it ready in the write's response.
// A dry run (dry) checks the definition and serves nothing.
func (c *Cluster) learnCRDLocked(obj *unstructured.Unstructured, dry bool) error {
	crd := &apiextensionsv1.CustomResourceDefinition{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.Object, crd); err != nil {
		return apierrors.NewBadRequest(fmt.Sprintf("CustomResourceDefinition %q: %v", obj.GetName(), err))
	}
	names := crd.Spec.Names
	if crd.Spec.Group == "" || names.Plural == "" || names.Kind == "" {
		return apierrors.NewBadRequest(fmt.Sprintf("CustomResourceDefinition %q: spec.group, spec.names.plural and spec.names.kind are required", obj.GetName()))
	}
	if want := names.Plural + "." + crd.Spec.Group; obj.GetName() != want {
		return apierrors.NewBadRequest(fmt.Sprintf("CustomResourceDefinition %q: metadata.name must be %q (spec.names.plural + \".\" + spec.group)", obj.GetName(), want))
	}
	if len(crd.Spec.Versions) == 0 {
		return apierrors.NewBadRequest(fmt.Sprintf("CustomResourceDefinition %q: spec.versions must not be empty", obj.GetName()))
	}
	schemas, err := crSchemas(crd)
	if err != nil {
		return apierrors.NewBadRequest(fmt.Sprintf("CustomResourceDefinition %q: %v", obj.GetName(), err))
	}
	listKind := names.ListKind
	if listKind == "" {
		listKind = names.Kind + "List"
	}
	stored := []string{}
	for _, v := range crd.Spec.Versions {
		if v.Storage {
			stored = append(stored, v.Name)
		}
		if !v.Served || dry {
			continue
		}
		gv := schema.GroupVersion{Group: crd.Spec.Group, Version: v.Name}
		c.addKindLocked(kindInfo{
			gvk:        gv.WithKind(names.Kind),
			gvr:        gv.WithResource(names.Plural),
			listKind:   listKind,
			namespaced: crd.Spec.Scope != apiextensionsv1.ClusterScoped,
			status:     v.Subresources != nil && v.Subresources.Status != nil,
			schema:     schemas[v.Name],
		})
	}
	now := metav1.NewTime(c.now())
	status := map[string]any{
		"acceptedNames": map[string]any{
			"kind": names.Kind, "listKind": listKind, "plural": names.Plural, "singular": names.Singular,
		},
		"storedVersions": toAny(stored),
		"conditions": []any{
			condition("NamesAccepted", "NoConflicts", "no conflicts found", now),
			condition("Established", "InitialNamesAccepted", "the initial names have been accepted", now),
		},
	}
	if old, ok := obj.Object["status"].(map[string]any); ok && reflect.DeepEqual(old["acceptedNames"], status["acceptedNames"]) {
		return nil // already established under these names: leave the status (and its times) alone
	}
	obj.Object["status"] = status
	return nil
}

// crSchemas returns each version's schema as the API server checks writes
// against it.
func crSchemas(crd *apiextensionsv1.CustomResourceDefinition) (map[string]*crSchema, error) {
	out := map[string]*crSchema{}
	for _, v := range crd.Spec.Versions {
		if v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			continue
		}
		internal := &apiextensions.JSONSchemaProps{}
		if err := apiextensionsv1.Convert_v1_JSONSchemaProps_To_apiextensions_JSONSchemaProps(v.Schema.OpenAPIV3Schema, internal, nil); err != nil {
			return nil, fmt.Errorf("version %s: schema: %w", v.Name, err)
		}
		s, err := newCRSchema(internal)
		if err != nil {
			return nil, fmt.Errorf("version %s: %w", v.Name, err)
		}
		out[v.Name] = s
	}
	return out, nil
}

func condition(typ, reason, msg string, at metav1.Time) map[string]any {
	return map[string]any{
		"type": typ, "status": "True", "reason": reason, "message": msg,
		"lastTransitionTime": at.UTC().Format("2006-01-02T15:04:05Z"),
	}
}

func toAny(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// decodeApply reads an apply request body (YAML or JSON).
func decodeApply(data []byte) (*unstructured.Unstructured, error) {
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("decoding apply request: %v", err))
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(js); err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("decoding apply request: %v", err))
	}
	return u, nil
}

// NormalizeNumbers turns integral float64 values into int64, as decoding
// JSON on the API server does, so clients that built objects from YAML
// (float64 numbers) read back what they would from a real cluster. Maps
// and slices are changed in place; the value is returned.
func NormalizeNumbers(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, e := range t {
			t[k] = NormalizeNumbers(e)
		}
	case []any:
		for i, e := range t {
			t[i] = NormalizeNumbers(e)
		}
	case float64:
		if t == float64(int64(t)) {
			return int64(t)
		}
	case int:
		return int64(t)
	case int32:
		return int64(t)
	}
	return v
}

// applyPatch returns old with a JSON merge patch or JSON patch applied; old
// does not change.
func applyPatch(old *unstructured.Unstructured, pt types.PatchType, data []byte) (*unstructured.Unstructured, error) {
	if pt == types.MergePatchType {
		// Merged into a copy of the decoded object: encoding the whole
		// object to JSON to merge and parsing it back cost more than the
		// rest of a status write (the reconciler's and the simulator's).
		var patch any
		if err := json.Unmarshal(data, &patch); err != nil {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("decoding merge patch for %s %q: %v", old.GetKind(), old.GetName(), err))
		}
		pm, ok := patch.(map[string]any)
		if !ok {
			return nil, apierrors.NewBadRequest(fmt.Sprintf("merge patch for %s %q is not a JSON object", old.GetKind(), old.GetName()))
		}
		NormalizeNumbers(pm)
		return &unstructured.Unstructured{Object: mergePatch(old.DeepCopy().Object, pm)}, nil
	}
	oldJSON, err := json.Marshal(old.Object)
	if err != nil {
		return nil, err
	}
	var out []byte
	switch pt {
	case types.JSONPatchType:
		var p jsonpatch.Patch
		p, err = jsonpatch.DecodePatch(data)
		if err == nil {
			out, err = p.Apply(oldJSON)
		}
	case types.StrategicMergePatchType:
		// Strategic merge needs the Go types; like the API server does for
		// custom resources, the demo cluster refuses it.
		return nil, unsupportedPatch(pt)
	default:
		return nil, unsupportedPatch(pt)
	}
	if err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("applying %s patch to %s %q: %v", pt, old.GetKind(), old.GetName(), err))
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(out); err != nil {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("patched %s %q: %v", old.GetKind(), old.GetName(), err))
	}
	return u, nil
}

// unstructuredConverter is the object converter, defaulter and creater the
// field manager needs. The demo cluster serves each kind in one version and
// stores unstructured objects, so conversion is the identity.
type unstructuredConverter struct{}

func (unstructuredConverter) Convert(in, out, _ any) error {
	src, ok1 := in.(*unstructured.Unstructured)
	dst, ok2 := out.(*unstructured.Unstructured)
	if !ok1 || !ok2 {
		return fmt.Errorf("demo cluster converts only unstructured objects, not %T to %T", in, out)
	}
	dst.Object = runtime.DeepCopyJSON(src.Object)
	return nil
}

func (unstructuredConverter) ConvertToVersion(in runtime.Object, gv runtime.GroupVersioner) (runtime.Object, error) {
	u, ok := in.(*unstructured.Unstructured)
	if !ok {
		return nil, fmt.Errorf("demo cluster converts only unstructured objects, not %T", in)
	}
	if target, ok := gv.KindForGroupVersionKinds([]schema.GroupVersionKind{u.GroupVersionKind()}); ok && !target.Empty() && target != u.GroupVersionKind() {
		return nil, fmt.Errorf("demo cluster serves %s in one version only, cannot convert to %s", u.GroupVersionKind(), target)
	}
	return u, nil
}

func (unstructuredConverter) ConvertFieldLabel(_ schema.GroupVersionKind, label, value string) (string, string, error) {
	return label, value, nil
}

func (unstructuredConverter) Default(runtime.Object) {}

func (unstructuredConverter) New(gvk schema.GroupVersionKind) (runtime.Object, error) {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(gvk)
	return u, nil
}

func unsupportedPatch(pt types.PatchType) error {
	return &apierrors.StatusError{ErrStatus: metav1.Status{
		Status:  metav1.StatusFailure,
		Code:    415,
		Reason:  metav1.StatusReasonUnsupportedMediaType,
		Message: fmt.Sprintf("the demo cluster does not support patch type %q; use merge, JSON patch or apply", pt),
	}}
}

// mergePatch applies an RFC 7386 JSON merge patch to target (which it
// changes) and returns it: null removes a field, an object merges into the
// field (an object replacing anything else), any other value replaces it.
func mergePatch(target, patch map[string]any) map[string]any {
	for k, pv := range patch {
		switch pv := pv.(type) {
		case nil:
			delete(target, k)
		case map[string]any:
			tm, ok := target[k].(map[string]any)
			if !ok {
				tm = map[string]any{}
			}
			target[k] = mergePatch(tm, pv)
		default:
			target[k] = pv
		}
	}
	return target
}
