package engine

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	"github.com/kroscope/kroscope/engine/authority"
	"github.com/kroscope/kroscope/engine/state"
)

// EditableInstance is the instance as `E` opens it in the editor: its
// identity, resourceVersion and spec (what an edit may change), as YAML.
func (e *Engine) EditableInstance(ctx context.Context, key state.InstanceKey) ([]byte, error) {
	if err := e.writable(key); err != nil {
		return nil, err
	}
	_, u, err := cachedInstance(e.table, key)
	if err != nil {
		return nil, err
	}
	md := map[string]any{"name": u.GetName(), "resourceVersion": u.GetResourceVersion()}
	if u.GetNamespace() != "" {
		md["namespace"] = u.GetNamespace()
	}
	doc := map[string]any{"apiVersion": u.GetAPIVersion(), "kind": u.GetKind(), "metadata": md}
	if spec, ok := u.Object["spec"]; ok {
		doc["spec"] = spec
	} else {
		doc["spec"] = map[string]any{}
	}
	return yaml.Marshal(doc)
}

// ApplyInstanceEdit writes an edited spec (a document from
// EditableInstance) as kroscope's field manager. The resourceVersion of the
// document guards against a change made meanwhile (the API server answers
// Conflict), and the API server's validation error comes back as it is,
// for the editor to show. Only the spec is written.
func (e *Engine) ApplyInstanceEdit(ctx context.Context, key state.InstanceKey, doc []byte) error {
	if err := e.writable(key); err != nil {
		return err
	}
	var edited map[string]any
	if err := yaml.Unmarshal(doc, &edited); err != nil {
		return fmt.Errorf("the edited file is not valid YAML: %w", err)
	}
	eu := &unstructured.Unstructured{Object: edited}
	if eu.GetName() != key.Name || eu.GetNamespace() != key.Namespace {
		return fmt.Errorf("the edit renames the instance (%s/%s): only the spec can be edited", eu.GetNamespace(), eu.GetName())
	}
	spec, ok := edited["spec"].(map[string]any)
	if !ok {
		return fmt.Errorf("the edited file has no spec object")
	}
	s, u, err := cachedInstance(e.table, key)
	if err != nil {
		return err
	}
	u.Object["spec"] = spec
	delete(u.Object, "status")
	if rv := eu.GetResourceVersion(); rv != "" {
		u.SetResourceVersion(rv)
	}
	_, err = e.cl.gated().Dynamic().Resource(s.gvr).Namespace(key.Namespace).Update(ctx, u, metav1.UpdateOptions{FieldManager: UserFieldManager})
	e.access.recheckAfterForbidden(ctx, s, err)
	if apierrors.IsConflict(err) {
		return fmt.Errorf("the instance changed since the editor opened it (reopen to see the new version): %w", err)
	}
	return err
}

// writable refuses edits while this process may not write.
func (e *Engine) writable(key state.InstanceKey) error {
	if err := e.access.refuse("editing", key, func(k state.KindAccess) state.Permission { return k.Edit }); err != nil {
		return err
	}
	if a := e.wr.decision().Edit; a.Route == authority.Refused {
		return fmt.Errorf("not editing %s: %s", key, a.Why)
	}
	return nil
}
