// Package memcluster is an in-memory Kubernetes API good enough for kroscope's
// real engine and reconciler: a dynamic client, a metadata-only client and a
// RESTMapper over one object store that keeps the API server's rules the
// reconciler relies on — resourceVersion on every write, generation bumped on
// spec changes, a status subresource, finalizers holding deletion,
// server-side apply with managedFields, watches that resume from a
// resourceVersion, and CRDs that become Established and teach it new kinds.
//
// client-go's fake dynamic client drops apply options (field manager, force)
// and cannot list kinds it was not told about at construction, so the cluster
// implements the client interfaces itself over its own store, and uses
// apimachinery's managedfields for apply exactly as the API server does.
package memcluster

import (
	"errors"
	"fmt"
	"math/rand"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/google/uuid"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/managedfields"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/kroscope/kroscope/reconciler/client"
)

// Options configure a Cluster.
type Options struct {
	// FailRate is the fraction (0..1) of child writes made through ClientSet
	// that fail with an injected 500 or conflict, so errors show in the UI.
	// Writes to CRDs, graphs, instances, leases and events never fail.
	FailRate float64
	// Seed seeds the failure injection; 0 means the current time.
	Seed int64
	// Namespaces are created at start; "default" always is.
	Namespaces []string
	// EventLog bounds how many past watch events are kept so watches can
	// resume from an older resourceVersion (default 50000).
	EventLog int
	// StableUIDs derives each object's UID from its resource, namespace,
	// name and how many objects had that name before it, instead of a
	// random one: a run that makes the same objects makes the same UIDs
	// (render's output is reproducible, owner references included).
	StableUIDs bool
	// EventLogBytes bounds the encoded size of the objects the logged
	// events hold (default 16 MiB). A watch from an older resourceVersion
	// is answered 410 Gone and its client relists, as from a real API
	// server whose watch cache and etcd history have moved on. Without it,
	// the log held every superseded version of a rollout's objects: at
	// 1,000 fanout instances 50,000 versions, four times the store.
	EventLogBytes int
}

// Cluster is the in-memory API server. It is safe for concurrent use.
type Cluster struct {
	mu      sync.Mutex
	rv      int64
	kinds   map[schema.GroupVersionResource]*kindInfo
	objects map[schema.GroupVersionResource]map[types.NamespacedName]*stored

	// events is the log of past watch events, oldest first; logFloor is the
	// resourceVersion at or below which history has been dropped.
	events        []event
	eventCap      int
	eventCapBytes int
	logBytes      int // encoded bytes of the logged events' objects
	logFloor      int64
	watchers      map[*watcher]struct{}

	mapper        *restMapper
	typeConverter managedfields.TypeConverter
	managers      map[managerKey]*managedfields.FieldManager

	failRate float64
	rndMu    sync.Mutex
	rnd      *rand.Rand

	writes map[string]int64 // by field manager, for tests and figures
	// made counts the objects created at each name, for StableUIDs (nil
	// without it).
	made map[string]int
	now  func() time.Time
}

type managerKey struct {
	gvk         schema.GroupVersionKind
	subresource string
}

// New returns a cluster serving the built-in kinds.
func New(opts Options) *Cluster {
	seed := opts.Seed
	if seed == 0 {
		seed = time.Now().UnixNano()
	}
	capacity := opts.EventLog
	if capacity <= 0 {
		capacity = 50000
	}
	capBytes := opts.EventLogBytes
	if capBytes <= 0 {
		capBytes = 16 << 20
	}
	c := &Cluster{
		kinds:         map[schema.GroupVersionResource]*kindInfo{},
		objects:       map[schema.GroupVersionResource]map[types.NamespacedName]*stored{},
		eventCap:      capacity,
		eventCapBytes: capBytes,
		watchers:      map[*watcher]struct{}{},
		mapper:        newRESTMapper(),
		typeConverter: managedfields.NewDeducedTypeConverter(),
		managers:      map[managerKey]*managedfields.FieldManager{},
		failRate:      opts.FailRate,
		rnd:           rand.New(rand.NewSource(seed)),
		writes:        map[string]int64{},
		now:           time.Now,
	}
	if opts.StableUIDs {
		c.made = map[string]int{}
	}
	for _, k := range builtinKinds {
		c.addKindLocked(k)
	}
	for _, ns := range append([]string{"default", "kube-system"}, opts.Namespaces...) {
		obj := &unstructured.Unstructured{}
		obj.SetAPIVersion("v1")
		obj.SetKind("Namespace")
		obj.SetName(ns)
		_, err := c.create(nsGVR, "", obj, metav1.CreateOptions{FieldManager: "demo-cluster"}, "")
		if err != nil && !apierrors.IsAlreadyExists(err) {
			panic(fmt.Sprintf("demo cluster: creating namespace %q: %v", ns, err)) // cannot happen: fresh store
		}
	}
	return c
}

var nsGVR = schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}

// ClientSet returns the client set the engine and reconciler use. Its
// dynamic client injects failures at Options.FailRate.
func (c *Cluster) ClientSet() *client.Set {
	var dyn = c.Dynamic()
	if c.failRate > 0 {
		dyn = &faultyDynamic{inner: dyn, c: c}
	}
	return client.NewSetFromClients(client.Clients{
		Dynamic:    dyn,
		Metadata:   c.Metadata(),
		Kubernetes: c.kubernetes(),
		Discovery:  c.Discovery(),
		Mapper:     c.mapper,
		Impersonate: func(user string) (*client.Set, error) {
			// The demo has no RBAC: every identity may do everything, so
			// an impersonated set is the same clients under another name.
			return client.NewSetFromClients(client.Clients{
				Dynamic: dyn, Metadata: c.Metadata(), Kubernetes: c.kubernetes(), Discovery: c.Discovery(), Mapper: c.mapper,
			}), nil
		},
	})
}

// RESTMapper returns the cluster's mapper; it knows every CRD written so far.
func (c *Cluster) RESTMapper() *restMapper { return c.mapper }

// Writes returns how many writes each field manager made (create, update,
// patch, apply and delete requests that succeeded).
func (c *Cluster) Writes() map[string]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]int64, len(c.writes))
	for k, v := range c.writes {
		out[k] = v
	}
	return out
}

// ResourceVersion returns the cluster's current resourceVersion.
func (c *Cluster) ResourceVersion() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.rv
}

func (c *Cluster) addKindLocked(k kindInfo) {
	kk := k
	c.kinds[k.gvr] = &kk
	c.mapper.add(k)
}

// kind returns the served kind for gvr or a NotFound like the API server's
// for an unknown resource.
func (c *Cluster) kindLocked(gvr schema.GroupVersionResource) (*kindInfo, error) {
	k, ok := c.kinds[gvr]
	if !ok {
		return nil, apierrors.NewNotFound(gvr.GroupResource(), "")
	}
	return k, nil
}

func (c *Cluster) scopeLocked(k *kindInfo, ns string) (string, error) {
	if !k.namespaced {
		return "", nil
	}
	if ns == "" {
		return "", apierrors.NewBadRequest(fmt.Sprintf("%s is namespaced: a namespace is required", k.gvr.GroupResource()))
	}
	return ns, nil
}

// get decodes outside the lock: stored versions never change, and the
// lock is the one every write waits on.
func (c *Cluster) get(gvr schema.GroupVersionResource, ns, name string) (*unstructured.Unstructured, error) {
	c.mu.Lock()
	k, err := c.kindLocked(gvr)
	if err == nil {
		ns, err = c.scopeLocked(k, ns)
	}
	var s *stored
	if err == nil {
		s = c.objects[gvr][types.NamespacedName{Namespace: ns, Name: name}]
	}
	c.mu.Unlock()
	if err != nil {
		return nil, err
	}
	if s == nil {
		return nil, apierrors.NewNotFound(gvr.GroupResource(), name)
	}
	return s.decode()
}

func (c *Cluster) list(gvr schema.GroupVersionResource, ns string, opts metav1.ListOptions) (*unstructured.UnstructuredList, error) {
	sel, err := parseSelectors(opts)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	k, err := c.kindLocked(gvr)
	if err != nil {
		c.mu.Unlock()
		return nil, err
	}
	if !k.namespaced {
		ns = ""
	}
	list := &unstructured.UnstructuredList{}
	list.SetAPIVersion(k.gvk.GroupVersion().String())
	list.SetKind(k.listKind)
	list.SetResourceVersion(strconv.FormatInt(c.rv, 10))
	var found []*stored
	for key, s := range c.objects[gvr] {
		if ns != "" && key.Namespace != ns {
			continue
		}
		if sel.matches(&s.objMeta) {
			found = append(found, s)
		}
	}
	// The versions found are immutable: sort and decode them unlocked.
	c.mu.Unlock()
	sort.Slice(found, func(i, j int) bool {
		a, b := found[i], found[j]
		if a.namespace != b.namespace {
			return a.namespace < b.namespace
		}
		return a.name < b.name
	})
	list.Items = make([]unstructured.Unstructured, 0, len(found))
	for _, s := range found {
		obj, err := s.decode()
		if err != nil {
			return nil, err
		}
		list.Items = append(list.Items, *obj)
	}
	return list, nil
}

// create stores a new object (or, for subresource "status", is refused as on
// a real server).
func (c *Cluster) create(gvr schema.GroupVersionResource, ns string, obj *unstructured.Unstructured, opts metav1.CreateOptions, sub string) (*unstructured.Unstructured, error) {
	if sub != "" {
		return nil, apierrors.NewMethodNotSupported(gvr.GroupResource(), "create "+sub)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	k, obj, dry, err := c.requestLocked(gvr, ns, obj, opts.DryRun)
	if err != nil {
		return nil, err
	}
	if obj.GetName() == "" && obj.GetGenerateName() != "" {
		obj.SetName(obj.GetGenerateName() + uuid.NewString()[:5])
	}
	if obj.GetResourceVersion() != "" {
		return nil, apierrors.NewBadRequest("resourceVersion should not be set on objects to be created")
	}
	mgr, err := c.managerLocked(k, "")
	if err != nil {
		return nil, err
	}
	live := &unstructured.Unstructured{}
	live.SetGroupVersionKind(k.gvk)
	merged, err := mgr.Update(live, obj, managerName(opts.FieldManager))
	if err != nil {
		return nil, err
	}
	out, err := c.insertLocked(k, merged.(*unstructured.Unstructured), dry)
	if err != nil {
		return nil, err
	}
	c.countLocked(managerName(opts.FieldManager), dry)
	return out, nil
}

// requestLocked is what a create and an update start with: the kind
// served at gvr, the caller's obj copied and checked against it (its
// apiVersion, kind and namespace filled in), and whether it is a dry run.
func (c *Cluster) requestLocked(gvr schema.GroupVersionResource, ns string, obj *unstructured.Unstructured, dryRun []string) (*kindInfo, *unstructured.Unstructured, bool, error) {
	dry, err := isDryRun(dryRun)
	if err != nil {
		return nil, nil, false, err
	}
	k, err := c.kindLocked(gvr)
	if err != nil {
		return nil, nil, false, err
	}
	obj = obj.DeepCopy()
	if err := c.checkTypeLocked(k, obj, ns); err != nil {
		return nil, nil, false, err
	}
	return k, obj, dry, nil
}

// update replaces an object (main resource or status subresource).
func (c *Cluster) update(gvr schema.GroupVersionResource, ns string, obj *unstructured.Unstructured, opts metav1.UpdateOptions, sub string) (*unstructured.Unstructured, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	k, obj, dry, err := c.requestLocked(gvr, ns, obj, opts.DryRun)
	if err != nil {
		return nil, err
	}
	old, ok, err := c.lookupLocked(k, key(obj))
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, apierrors.NewNotFound(gvr.GroupResource(), obj.GetName())
	}
	if rv := obj.GetResourceVersion(); rv != "" && rv != old.GetResourceVersion() {
		return nil, conflict(gvr, obj.GetName())
	}
	return c.writeLocked(k, old, obj, opts.FieldManager, sub, dry)
}

// writeLocked stores obj over old as an update by fieldManager, recording
// managed fields the way the API server does (update and patch share it).
func (c *Cluster) writeLocked(k *kindInfo, old, obj *unstructured.Unstructured, fieldManager, sub string, dry bool) (*unstructured.Unstructured, error) {
	mgr, err := c.managerLocked(k, sub)
	if err != nil {
		return nil, err
	}
	merged, err := mgr.Update(old.DeepCopy(), obj, managerName(fieldManager))
	if err != nil {
		return nil, err
	}
	out, err := c.replaceLocked(k, old, merged.(*unstructured.Unstructured), sub, dry)
	if err != nil {
		return nil, err
	}
	c.countLocked(managerName(fieldManager), dry)
	return out, nil
}

// apply is server-side apply of applied (main resource or status).
func (c *Cluster) apply(gvr schema.GroupVersionResource, ns, name string, applied *unstructured.Unstructured, opts metav1.PatchOptions, sub string) (*unstructured.Unstructured, error) {
	if opts.FieldManager == "" {
		return nil, apierrors.NewBadRequest("PatchOptions.fieldManager is required for apply requests")
	}
	dry, err := isDryRun(opts.DryRun)
	if err != nil {
		return nil, err
	}
	if applied.GetName() == "" {
		applied.SetName(name)
	}
	if applied.GetName() != name {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the name of the object (%s) does not match the name on the URL (%s)", applied.GetName(), name))
	}
	force := opts.Force != nil && *opts.Force
	return c.modify(gvr, ns, name, sub, func(k *kindInfo, mgr *managedfields.FieldManager, cur *stored) (func() (*unstructured.Unstructured, error), error) {
		a := applied.DeepCopy() // a retry starts from the request again
		if err := c.checkTypeLocked(k, a, ns); err != nil {
			return nil, err
		}
		live := &unstructured.Unstructured{}
		live.SetGroupVersionKind(k.gvk)
		var old *unstructured.Unstructured
		if cur != nil {
			var err error
			if old, err = cur.decode(); err != nil {
				return nil, err
			}
			live = old.DeepCopy() // the field manager may not change old: replaceLocked compares with it
			// A resourceVersion in the applied object is a precondition, as
			// on a real server (client.Objects.Create relies on it: a create
			// that finds the name taken must be refused, not applied).
			if rv := a.GetResourceVersion(); rv != "" && rv != old.GetResourceVersion() {
				return nil, apierrors.NewConflict(gvr.GroupResource(), name,
					errors.New("the object has been modified; please apply your changes to the latest version and try again"))
			}
		} else if sub != "" {
			return nil, apierrors.NewNotFound(gvr.GroupResource(), name)
		}
		merged, err := mgr.Apply(live, a, opts.FieldManager, force)
		if err != nil {
			return nil, err
		}
		return func() (*unstructured.Unstructured, error) {
			var out *unstructured.Unstructured
			var err error
			if old != nil {
				out, err = c.replaceLocked(k, old, merged.(*unstructured.Unstructured), sub, dry)
			} else {
				out, err = c.insertLocked(k, merged.(*unstructured.Unstructured), dry)
			}
			if err == nil {
				c.countLocked(opts.FieldManager, dry)
			}
			return out, err
		}, nil
	})
}

// patch applies a JSON merge patch or JSON patch to the stored object.
func (c *Cluster) patch(gvr schema.GroupVersionResource, ns, name string, pt types.PatchType, data []byte, opts metav1.PatchOptions, sub string) (*unstructured.Unstructured, error) {
	if pt == types.ApplyPatchType || pt == types.ApplyCBORPatchType {
		applied, err := decodeApply(data)
		if err != nil {
			return nil, err
		}
		return c.apply(gvr, ns, name, applied, opts, sub)
	}
	dry, err := isDryRun(opts.DryRun)
	if err != nil {
		return nil, err
	}
	return c.modify(gvr, ns, name, sub, func(k *kindInfo, mgr *managedfields.FieldManager, cur *stored) (func() (*unstructured.Unstructured, error), error) {
		if _, err := c.scopeLocked(k, ns); err != nil {
			return nil, err
		}
		if cur == nil {
			return nil, apierrors.NewNotFound(gvr.GroupResource(), name)
		}
		old, err := cur.decode()
		if err != nil {
			return nil, err
		}
		patched, err := applyPatch(old, pt, data)
		if err != nil {
			return nil, err
		}
		if rv := patched.GetResourceVersion(); rv != old.GetResourceVersion() {
			// A resourceVersion in the patch is a precondition.
			return nil, conflict(gvr, name)
		}
		if patched.GetName() != name || patched.GetNamespace() != old.GetNamespace() {
			return nil, apierrors.NewBadRequest("a patch may not change the name or namespace")
		}
		merged, err := mgr.Update(old.DeepCopy(), patched, managerName(opts.FieldManager))
		if err != nil {
			return nil, err
		}
		return func() (*unstructured.Unstructured, error) {
			out, err := c.replaceLocked(k, old, merged.(*unstructured.Unstructured), sub, dry)
			if err == nil {
				c.countLocked(managerName(opts.FieldManager), dry)
			}
			return out, err
		}, nil
	})
}

// modify is a write whose costly part — decoding the stored version,
// patching, the field manager's merge — runs outside the lock every request
// shares: compute gets the version stored at ns/name (nil if none) and
// returns the commit, which runs under the lock only if that version is
// still the current one; otherwise compute runs again on the new one (the
// API server's optimistic concurrency over etcd, done for the client). With
// the merge under the lock, the engine's workers and the simulator queued
// on it and kept both cores switching between them, which starved the UI.
func (c *Cluster) modify(gvr schema.GroupVersionResource, ns, name, sub string,
	compute func(k *kindInfo, mgr *managedfields.FieldManager, cur *stored) (commit func() (*unstructured.Unstructured, error), err error),
) (*unstructured.Unstructured, error) {
	for {
		c.mu.Lock()
		k, err := c.kindLocked(gvr)
		var mgr *managedfields.FieldManager
		if err == nil {
			mgr, err = c.managerLocked(k, sub)
		}
		if err != nil {
			c.mu.Unlock()
			return nil, err
		}
		at := types.NamespacedName{Name: name}
		if k.namespaced {
			at.Namespace = ns
		}
		cur := c.objects[gvr][at]
		c.mu.Unlock()
		commit, err := compute(k, mgr, cur)
		if err != nil {
			return nil, err
		}
		c.mu.Lock()
		if c.kinds[gvr] != k || c.objects[gvr][at] != cur {
			c.mu.Unlock()
			continue // changed meanwhile: compute again on what is stored now
		}
		out, err := commit()
		c.mu.Unlock()
		return out, err
	}
}

// delete removes an object, or marks it deleting while finalizers remain.
func (c *Cluster) delete(gvr schema.GroupVersionResource, ns, name string, opts metav1.DeleteOptions) error {
	dry, err := isDryRun(opts.DryRun)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	k, err := c.kindLocked(gvr)
	if err != nil {
		return err
	}
	if ns, err = c.scopeLocked(k, ns); err != nil {
		return err
	}
	old, ok, err := c.lookupLocked(k, types.NamespacedName{Namespace: ns, Name: name})
	if err != nil {
		return err
	}
	if !ok {
		return apierrors.NewNotFound(gvr.GroupResource(), name)
	}
	if p := opts.Preconditions; p != nil {
		if p.UID != nil && *p.UID != old.GetUID() {
			return apierrors.NewConflict(gvr.GroupResource(), name, fmt.Errorf("precondition failed: UID in precondition: %s, UID in object meta: %s", *p.UID, old.GetUID()))
		}
		if p.ResourceVersion != nil && *p.ResourceVersion != old.GetResourceVersion() {
			return apierrors.NewConflict(gvr.GroupResource(), name, fmt.Errorf("precondition failed: ResourceVersion in precondition: %s, ResourceVersion in object meta: %s", *p.ResourceVersion, old.GetResourceVersion()))
		}
	}
	if dry {
		return nil // checked as the delete would be; nothing removed or marked
	}
	if len(old.GetFinalizers()) == 0 {
		if err := c.removeLocked(k, old); err != nil {
			return err
		}
		c.writes["delete"]++
		return nil
	}
	c.writes["delete"]++
	if old.GetDeletionTimestamp() != nil {
		return nil // already deleting: nothing changes
	}
	obj := old // a decoded copy: ours to change
	now := metav1.NewTime(c.now())
	obj.SetDeletionTimestamp(&now)
	zero := int64(0)
	obj.SetDeletionGracePeriodSeconds(&zero)
	obj.SetGeneration(obj.GetGeneration() + 1)
	return c.storeLocked(k, obj)
}

// insertLocked stores a new object with the metadata the API server sets
// (dry: only returns it, as a dry run's answer, with no resourceVersion).
func (c *Cluster) insertLocked(k *kindInfo, obj *unstructured.Unstructured, dry bool) (*unstructured.Unstructured, error) {
	if obj.GetName() == "" {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("%s: metadata.name is required", k.gvk.Kind))
	}
	if _, exists := c.objects[k.gvr][key(obj)]; exists {
		return nil, apierrors.NewAlreadyExists(k.gvr.GroupResource(), obj.GetName())
	}
	if k.namespaced {
		if _, ok := c.objects[nsGVR][types.NamespacedName{Name: obj.GetNamespace()}]; !ok {
			return nil, apierrors.NewNotFound(nsGVR.GroupResource(), obj.GetNamespace())
		}
	}
	obj.SetUID(c.newUIDLocked(k, obj))
	obj.SetCreationTimestamp(metav1.NewTime(c.now()))
	obj.SetDeletionTimestamp(nil)
	obj.SetGeneration(1)
	if err := admit(k, nil, obj, ""); err != nil {
		return nil, err
	}
	if k.gvr == crdGVR {
		if err := c.learnCRDLocked(obj, dry); err != nil {
			return nil, err
		}
	}
	if dry {
		return obj, nil
	}
	if err := c.storeLocked(k, obj); err != nil {
		return nil, err
	}
	return obj, nil // stored encoded: obj is the caller's
}

// newUIDLocked is a new object's UID: random, or with StableUIDs derived
// from where it is and how many objects were made there before.
func (c *Cluster) newUIDLocked(k *kindInfo, obj *unstructured.Unstructured) types.UID {
	if c.made == nil {
		return types.UID(uuid.NewString())
	}
	at := k.gvr.String() + "/" + obj.GetNamespace() + "/" + obj.GetName()
	c.made[at]++
	return types.UID(uuid.NewSHA1(uuid.NameSpaceURL, []byte(at+"#"+strconv.Itoa(c.made[at]))).String())
}

// replaceLocked stores an updated object, keeping what the request may not
// change (identity, the other half of a status subresource) and bumping the
// generation on spec changes (dry: only returns it, as a dry run's answer,
// with the stored resourceVersion).
func (c *Cluster) replaceLocked(k *kindInfo, old, obj *unstructured.Unstructured, sub string, dry bool) (*unstructured.Unstructured, error) {
	switch sub {
	case "":
		if k.status {
			restoreField(obj, old, "status")
		}
	case "status":
		if !k.status {
			return nil, apierrors.NewNotFound(k.gvr.GroupResource(), old.GetName()+"/status")
		}
		status, hasStatus := obj.Object["status"]
		managed := obj.GetManagedFields()
		obj = old.DeepCopy()
		obj.SetManagedFields(managed)
		if hasStatus {
			obj.Object["status"] = status
		} else {
			delete(obj.Object, "status")
		}
	default:
		return nil, apierrors.NewNotFound(k.gvr.GroupResource(), old.GetName()+"/"+sub)
	}
	// Identity and server-owned metadata never come from the request.
	obj.SetName(old.GetName())
	obj.SetNamespace(old.GetNamespace())
	obj.SetUID(old.GetUID())
	obj.SetCreationTimestamp(old.GetCreationTimestamp())
	obj.SetDeletionTimestamp(old.GetDeletionTimestamp())
	obj.SetDeletionGracePeriodSeconds(old.GetDeletionGracePeriodSeconds())
	obj.SetGeneration(old.GetGeneration())
	obj.SetResourceVersion(old.GetResourceVersion())
	if old.GetDeletionTimestamp() != nil && len(obj.GetFinalizers()) > len(old.GetFinalizers()) {
		return nil, apierrors.NewForbidden(k.gvr.GroupResource(), old.GetName(), fmt.Errorf("no new finalizers can be added if the object is being deleted"))
	}
	if err := admit(k, old, obj, sub); err != nil {
		return nil, err
	}
	if specChanged(old, obj) {
		obj.SetGeneration(old.GetGeneration() + 1)
	}
	if k.gvr == crdGVR && sub == "" {
		if err := c.learnCRDLocked(obj, dry); err != nil {
			return nil, err
		}
	}
	if equalObjects(old, obj) {
		// A no-op write changes nothing, not even the resourceVersion, and
		// sends no event: as on a real server.
		return old, nil
	}
	if dry {
		return obj, nil
	}
	if obj.GetDeletionTimestamp() != nil && len(obj.GetFinalizers()) == 0 {
		if err := c.removeLocked(k, old); err != nil {
			return nil, err
		}
		obj.SetResourceVersion(strconv.FormatInt(c.rv, 10))
		return obj, nil
	}
	if err := c.storeLocked(k, obj); err != nil {
		return nil, err
	}
	return obj, nil
}

// storeLocked writes obj with a new resourceVersion and tells the watchers
// (MODIFIED when it replaces a stored version, else ADDED). obj stays the
// caller's: the store keeps it encoded.
func (c *Cluster) storeLocked(k *kindInfo, obj *unstructured.Unstructured) error {
	prev := c.objects[k.gvr][key(obj)]
	obj.SetResourceVersion(strconv.FormatInt(c.rv+1, 10))
	s, err := encode(obj, prev)
	if err != nil {
		obj.SetResourceVersion("")
		return err
	}
	c.rv++
	if c.objects[k.gvr] == nil {
		c.objects[k.gvr] = map[types.NamespacedName]*stored{}
	}
	c.objects[k.gvr][key(obj)] = s
	e := event{rv: c.rv, gvr: k.gvr, typ: watch.Added, obj: s}
	if prev != nil {
		e.typ, e.old = watch.Modified, prev.metaCopy()
	}
	c.recordLocked(e)
	return nil
}

// removeLocked deletes obj (a decoded copy of the stored version, which it
// changes) for good, then garbage-collects objects whose every owner
// reference pointed at it (background propagation).
func (c *Cluster) removeLocked(k *kindInfo, obj *unstructured.Unstructured) error {
	prev := c.objects[k.gvr][key(obj)]
	if prev == nil {
		return apierrors.NewNotFound(k.gvr.GroupResource(), obj.GetName()) // cannot happen: callers decoded it from the store
	}
	obj.SetResourceVersion(strconv.FormatInt(c.rv+1, 10))
	gone, err := encode(obj, prev)
	if err != nil {
		return err
	}
	delete(c.objects[k.gvr], key(obj))
	c.rv++
	c.recordLocked(event{rv: c.rv, gvr: k.gvr, typ: watch.Deleted, obj: gone, old: prev.metaCopy()})
	c.collectOrphansLocked(prev.uid)
	return nil
}

// collectOrphansLocked deletes (or marks deleting, while finalizers remain)
// the objects whose only owner was uid. It reads owners from the stored
// metadata, so only the orphans are decoded.
func (c *Cluster) collectOrphansLocked(uid types.UID) {
	type orphan struct {
		k *kindInfo
		s *stored
	}
	var orphans []orphan
	for gvr, objs := range c.objects {
		for _, s := range objs {
			if len(s.owners) == 0 {
				continue
			}
			owned, alive := false, false
			for _, o := range s.owners {
				if o == uid {
					owned = true
				} else {
					alive = true
				}
			}
			if owned && !alive {
				orphans = append(orphans, orphan{c.kinds[gvr], s})
			}
		}
	}
	for _, o := range orphans {
		obj, err := o.s.decode()
		if err != nil {
			continue // cannot happen: the cluster encoded it; leave it rather than fail the owner's delete
		}
		if len(obj.GetFinalizers()) > 0 {
			if obj.GetDeletionTimestamp() == nil {
				now := metav1.NewTime(c.now())
				obj.SetDeletionTimestamp(&now)
				_ = c.storeLocked(o.k, obj) // an encoding error leaves the orphan as it was
			}
			continue
		}
		_ = c.removeLocked(o.k, obj)
	}
}

// checkTypeLocked verifies the object's apiVersion, kind and namespace
// against the resource it is written to, filling in what is missing.
func (c *Cluster) checkTypeLocked(k *kindInfo, obj *unstructured.Unstructured, ns string) error {
	NormalizeNumbers(obj.Object)
	if obj.GetAPIVersion() == "" && obj.GetKind() == "" {
		obj.SetGroupVersionKind(k.gvk)
	}
	if obj.GroupVersionKind() != k.gvk {
		return apierrors.NewBadRequest(fmt.Sprintf("%s %q: apiVersion/kind %s %s does not match resource %s (want %s %s)",
			k.gvk.Kind, obj.GetName(), obj.GetAPIVersion(), obj.GetKind(), k.gvr.String(), k.gvk.GroupVersion().String(), k.gvk.Kind))
	}
	if !k.namespaced {
		if obj.GetNamespace() != "" {
			return apierrors.NewBadRequest(fmt.Sprintf("%s %q is cluster-scoped: metadata.namespace must be empty", k.gvk.Kind, obj.GetName()))
		}
		return nil
	}
	if obj.GetNamespace() == "" {
		obj.SetNamespace(ns)
	}
	if ns == "" || obj.GetNamespace() != ns {
		return apierrors.NewBadRequest(fmt.Sprintf("%s %q: the namespace of the object (%q) does not match the namespace of the request (%q)", k.gvk.Kind, obj.GetName(), obj.GetNamespace(), ns))
	}
	return nil
}

func (c *Cluster) managerLocked(k *kindInfo, sub string) (*managedfields.FieldManager, error) {
	mk := managerKey{gvk: k.gvk, subresource: sub}
	if m, ok := c.managers[mk]; ok {
		return m, nil
	}
	m, err := managedfields.NewDefaultCRDFieldManager(c.typeConverter, unstructuredConverter{}, unstructuredConverter{}, unstructuredConverter{},
		k.gvk, k.gvk.GroupVersion(), sub, resetFields(k, sub))
	if err != nil {
		return nil, fmt.Errorf("field manager for %s: %w", k.gvk, err)
	}
	c.managers[mk] = m
	return m, nil
}

// isDryRun reads a write's dryRun option as the API server does: "All" or
// nothing.
func isDryRun(values []string) (bool, error) {
	switch {
	case len(values) == 0:
		return false, nil
	case len(values) == 1 && values[0] == metav1.DryRunAll:
		return true, nil
	}
	return false, apierrors.NewBadRequest(fmt.Sprintf("dryRun: unsupported value %q: supported values: %q", values, metav1.DryRunAll))
}

// countLocked counts a write that succeeded; a dry run wrote nothing.
func (c *Cluster) countLocked(manager string, dry bool) {
	if !dry {
		c.writes[manager]++
	}
}

func managerName(m string) string {
	if m == "" {
		return "demo-client"
	}
	return m
}

func key(obj *unstructured.Unstructured) types.NamespacedName {
	return types.NamespacedName{Namespace: obj.GetNamespace(), Name: obj.GetName()}
}

func conflict(gvr schema.GroupVersionResource, name string) error {
	return apierrors.NewConflict(gvr.GroupResource(), name,
		fmt.Errorf("the object has been modified; please apply your changes to the latest version and try again"))
}
