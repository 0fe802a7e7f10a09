package reconciler

import (
	"context"
	"fmt"
	"sync"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kroscope/kroscope/reconciler/client"
	"github.com/kroscope/kroscope/reconciler/metadata"
)

// reach is how a part of the run acts on the cluster: in the reconcile's
// context, through the client chosen for the instance, noting errors
// where the run counts them (errs), and writing only when the run may
// (observe false).
type reach struct {
	ctx     context.Context
	objs    *client.Objects
	errs    noter
	observe bool
}

// noter is where a part notes the errors of its requests (outcome.note
// counts 403s for the impersonation metric).
type noter interface{ note(err error) }

// instance is the instance being reconciled, as last read or written, and
// the identity derived from it, which does not change within a run. It is
// replaced only between the layers (a layer's resources read it
// concurrently).
type instance struct {
	u   *unstructured.Unstructured
	gvr schema.GroupVersionResource
	io  reach
	// once computes asetID, the instance's ApplySet ID (applySetID).
	once   sync.Once
	asetID string
}

func (in *instance) get() *unstructured.Unstructured  { return in.u }
func (in *instance) set(u *unstructured.Unstructured) { in.u = u }
func (in *instance) uid() types.UID                   { return in.u.GetUID() }

// resource is the instance's resource, for writes to it.
func (in *instance) resource() schema.GroupVersionResource { return in.gvr }

func (in *instance) ref() metadata.InstanceRef {
	gvk := in.u.GroupVersionKind()
	return metadata.InstanceRef{UID: in.u.GetUID(), Name: in.u.GetName(), Namespace: in.u.GetNamespace(),
		Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind}
}

// applySetID is the instance's ApplySet id.
func (in *instance) applySetID() string {
	// The instance's identity does not change within a run: hashed once.
	in.once.Do(func() {
		gvk := in.u.GroupVersionKind()
		in.asetID = metadata.ApplySetID(in.u.GetName(), in.u.GetNamespace(), gvk.Kind, gvk.Group)
	})
	return in.asetID
}

// reconciledBefore reports whether a status was ever written for the
// instance (by kroscope or kro).
func (in *instance) reconciledBefore() bool {
	st, _ := in.u.Object["status"].(map[string]any)
	s, _ := st["state"].(string)
	return s != ""
}

// patch sends a JSON merge patch of metadata guarded by the instance's
// resourceVersion (a concurrent change is a conflict, retried).
func (in *instance) patch(md map[string]any) error {
	body, err := client.EncodeJSON(map[string]any{"metadata": md})
	if err != nil {
		return err
	}
	out, err := in.io.objs.Patch(in.io.ctx, in.gvr, in.u.GetNamespace(), in.u.GetName(), body, in.u.GetResourceVersion())
	if err != nil {
		return fmt.Errorf("patching instance %s: %w", objectName(in.u), err)
	}
	in.u = out
	return nil
}

// schemaVar is the instance as expressions see it: without status.
// Only what expressions see is copied: the status (often most of an
// instance) and managedFields are left out before copying, not after.
func schemaVar(inst *unstructured.Unstructured) map[string]any {
	obj := make(map[string]any, len(inst.Object))
	for k, v := range inst.Object {
		switch k {
		case "status":
			continue
		case "metadata":
			if md, ok := v.(map[string]any); ok {
				cp := make(map[string]any, len(md))
				for mk, mv := range md {
					if mk != "managedFields" {
						cp[mk] = runtime.DeepCopyJSONValue(mv)
					}
				}
				obj[k] = cp
				continue
			}
		}
		obj[k] = runtime.DeepCopyJSONValue(v)
	}
	return obj
}
