// Package state is the observable state of a kroscope engine: what every
// instance and each of its resources is doing, plus the engine's own health.
//
// Data flows one way: the engine writes into a Store, and readers (the TUI,
// `kroscope run`, tests) take immutable Snapshots. Every value reachable from a
// Snapshot is read-only: writers replace whole Instance values (copy on
// write) instead of mutating them, so a reader never needs a lock.
package state

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/kroscope/kroscope/engine/packed"
	"github.com/kroscope/kroscope/reconciler/graph/graphview"
)

// InstanceKey identifies one instance across every graph kroscope serves.
type InstanceKey struct {
	// Resource is the instance kind's resource and group, e.g. "webapps.kro.run".
	Resource  string
	Namespace string
	Name      string
}

// String renders the key as "resource/namespace/name" (namespace omitted for
// cluster-scoped instances).
func (k InstanceKey) String() string {
	if k.Namespace == "" {
		return fmt.Sprintf("%s/%s", k.Resource, k.Name)
	}
	return fmt.Sprintf("%s/%s/%s", k.Resource, k.Namespace, k.Name)
}

// Less orders keys by namespace, name, then resource: the table's default order.
func (k InstanceKey) Less(o InstanceKey) bool { return k.Compare(o) < 0 }

// Compare orders keys by namespace, name, then resource: -1, 0 or +1.
func (k InstanceKey) Compare(o InstanceKey) int {
	return cmp.Or(cmp.Compare(k.Namespace, o.Namespace), cmp.Compare(k.Name, o.Name), cmp.Compare(k.Resource, o.Resource))
}

// Resource is one node of an instance's graph as last reconciled.
type Resource struct {
	ID         string
	APIVersion string
	Kind       string
	// Name and Namespace of the rendered object; empty while it cannot be
	// rendered yet (its inputs are pending).
	Name      string
	Namespace string
	External  bool
	// Dependencies are the ids this resource reads, in declaration order.
	Dependencies []string

	// State is one of the reconciler's resource states (SYNCED, PENDING, ...).
	State string
	// Err is the full error text for ERROR/FAILED states.
	Err string
	// WaitingFor says, in words, what holds this resource back: the
	// dependency, or the readyWhen/includeWhen expression and its value.
	WaitingFor string
	// ReadyWhen and IncludeWhen are the expressions as written.
	ReadyWhen   []string
	IncludeWhen []string
	// ReadyChecks judge each readyWhen condition with its operands' values
	// while the resource waits for readiness; nil otherwise.
	ReadyChecks []ReadyCheck

	// Desired is the rendered object kroscope applies; Observed is what the
	// API server returned. Either may be zero. Kept encoded: every child of
	// every instance has them, a screen shows one. Desired may be packed
	// against Observed (see packed.PackAgainst): read both with
	// DesiredObject and ObservedObject.
	Desired  packed.Object
	Observed packed.Object
	// DesiredHash is the reconciler's hash of Desired (its desired-hash
	// annotation): while it and Observed stay the same, the encoded
	// Desired is reused rather than encoded again.
	DesiredHash string

	// FirstApplied is when kroscope first applied (or found) the object in
	// this engine's lifetime; Ready is when it first became ready after that.
	// Both zero when unknown. They drive the rollout timeline.
	FirstApplied time.Time
	Ready        time.Time

	// LastError is the resource's last error, kept after it clears.
	LastError *ErrorMemory
}

// DesiredObject decodes the desired object (nil when there is none).
func (r *Resource) DesiredObject() map[string]any {
	m, err := r.Desired.UnpackAgainst(r.Observed)
	if err != nil {
		return nil
	}
	return m
}

// ObservedObject decodes the observed object (nil when there is none).
func (r *Resource) ObservedObject() map[string]any { return r.Observed.Map() }

// Transition is one change of an instance's state.
type Transition struct {
	At       time.Time
	From     string
	To       string
	Message  string
	Duration time.Duration // the duration of the reconcile that made the change
}

// Instance is one instance of a graph.
type Instance struct {
	Key        InstanceKey
	APIVersion string
	Kind       string
	// Graph is the name of the ResourceGraphDefinition that serves the kind.
	Graph              string
	UID                string
	Generation         int64
	ObservedGeneration int64
	// Serving is the graph's Serving when the last reconcile finished:
	// which definition the instance was last reconciled with (Rolled).
	Serving int64
	Created time.Time
	// Deleting is true once the instance has a deletion timestamp.
	Deleting bool
	// Unserved: its graph stopped serving its kind (see Store.Unserve);
	// the rest is as last seen, and nobody reconciles it now.
	Unserved bool

	// State is the instance state (ACTIVE, IN_PROGRESS, ERROR, FAILED,
	// DELETING, or SUSPENDED while its kro.run/reconcile annotation pauses it).
	// Empty until the first reconcile finishes.
	State string
	// Message is the one line that explains State: the first error, or what
	// the instance waits for.
	Message string
	// Resources in topological order.
	Resources []Resource
	// Layers groups resource ids that can proceed together (roots first).
	Layers [][]string

	Reconciles    int64
	LastReconcile time.Time
	LastDuration  time.Duration
	// History is bounded; oldest first.
	History []Transition
	// LastError is the instance's last error (and the resource it names),
	// kept after it clears.
	LastError *ErrorMemory
	// Log is the instance's own log, oldest first and bounded: each
	// reconcile's decisions and the API calls made for it that failed.
	Log []LogLine

	// Version changes whenever anything in this Instance changes, so views
	// can cache what they rendered for it.
	Version uint64
}

// ReadyCount returns how many resources are SYNCED or SKIPPED, and the total.
func (i *Instance) ReadyCount() (ready, total int) {
	for _, r := range i.Resources {
		if r.Phase().Ready() {
			ready++
		}
	}
	return ready, len(i.Resources)
}

// Resource returns the resource with the given id, or nil.
func (i *Instance) Resource(id string) *Resource {
	for n := range i.Resources {
		if i.Resources[n].ID == id {
			return &i.Resources[n]
		}
	}
	return nil
}

// Graph is one ResourceGraphDefinition kroscope knows about.
type Graph struct {
	Name string
	// Source is the file it came from, or "cluster".
	Source     string
	APIVersion string
	Kind       string
	// Resource is the instance kind's "plural.group".
	Resource string
	// Err is set when the graph is invalid or its controller failed to start;
	// such a graph is not served, the others keep running.
	Err    string
	Served bool
	// Note says what serving the graph skipped, e.g. the CRD checks a
	// user without cluster rights cannot make; "" when nothing was.
	Note string
	// Template is the built graph's facts (resources in layers, their
	// dependencies and marks, the schema summary); nil until it builds.
	Template *graphview.Summary
	// Definition is the definition as written; nil when it could not be read.
	Definition *GraphDefinition
	// Kro is what kro's controller reports for this graph (its RGD status
	// and GraphRevisions); nil unless kro wrote the RGD's status.
	Kro *KroGraph
	// Status is what the store derives for the graphs screen (DeriveGraph
	// and the instance counts); set in snapshots only.
	Status GraphStatus
	// Serving counts the definitions of this graph the engine has served,
	// 1 for the first: each change of the definition serves a new one and
	// starts a rollout (see Rolled). 0 while not served.
	Serving int64
}

// GraphDefinition is a ResourceGraphDefinition as written.
type GraphDefinition struct {
	// Scope is spec.schema.scope: Namespaced (also when unset) or Cluster.
	Scope string
	// UID of the cluster object, whose Events the graph screen lists; ""
	// for a file.
	UID string
	// YAML is the definition as read (a cluster object's metadata and
	// spec, not its status), every Secret's data and stringData masked.
	YAML string
}

// KroGraph is kro's view of one graph.
type KroGraph struct {
	// State is kro's status.state (Active, Inactive).
	State string
	// Revision is the newest GraphRevision kro verified (the one it serves
	// unless Blocked); LatestRevision the newest it issued. 0 when unknown.
	Revision       int64
	LatestRevision int64
	// Blocked says why kro does not serve the graph's current spec, from
	// its conditions or a failed revision ("KindReady: cannot update CRD
	// ..."); "" when kro reports nothing wrong.
	Blocked string
	// Conditions are kro's status.conditions on the RGD.
	Conditions []Condition
}

// equal compares two views (Conditions by value).
func (k *KroGraph) equal(o *KroGraph) bool {
	return k.State == o.State && k.Revision == o.Revision && k.LatestRevision == o.LatestRevision &&
		k.Blocked == o.Blocked && slices.Equal(k.Conditions, o.Conditions)
}

// Summary is the one line that shows kro's view of a graph, e.g. "kro:
// Active, serving revision 3" or "kro: Inactive, blocked: KindReady: ...".
func (k *KroGraph) Summary() string {
	if k == nil {
		return ""
	}
	var parts []string
	if k.State != "" {
		parts = append(parts, "kro: "+k.State)
	}
	switch {
	case k.Revision > 0 && k.Blocked == "":
		parts = append(parts, fmt.Sprintf("serving revision %d", k.Revision))
	case k.Revision > 0: // compiled, but kro does not serve it yet
		parts = append(parts, fmt.Sprintf("revision %d verified", k.Revision))
	}
	if k.LatestRevision > k.Revision {
		parts = append(parts, fmt.Sprintf("latest %d", k.LatestRevision))
	}
	if k.Blocked != "" {
		parts = append(parts, "blocked: "+k.Blocked)
	}
	return strings.Join(parts, ", ")
}

// Watch is the health of one informer.
type Watch struct {
	// Name is what is watched, e.g. "webapps.kro.run" or "deployments.apps (metadata)".
	Name    string
	Synced  bool
	Healthy bool
	// Err is the last watch error while unhealthy.
	Err   string
	Since time.Time // when Healthy last changed
	// Forbidden: the API server refuses this user the list or watch (403).
	// It is not a broken watch but missing access, shown as "no access:
	// <Resource> in <Namespace>"; the informer keeps retrying quietly and
	// the watch turns healthy once access is granted.
	Forbidden bool
	// Resource ("plural.group") and Namespace ("" all namespaces) are what
	// the watch lists, for that note.
	Resource  string
	Namespace string
}

// NoAccess is the note of a forbidden watch: "configmaps in team-a".
func (w Watch) NoAccess() string {
	ns := w.Namespace
	if ns == "" {
		ns = "all namespaces"
	}
	return w.Resource + " in " + ns
}

// Engine holds the engine's own counters.
type Engine struct {
	Workers int
	// BusyWorkers is the most workers reconciling at once since the
	// previous figures (half a second before): a reconcile of a few
	// milliseconds between two figures still counts.
	BusyWorkers         int
	QueueDepth          int
	Reconciles          int64
	ReconcilesPerSecond float64
	APIErrors           int64
	// HeapInUse and RSS are the process's memory in bytes (RSS 0 where
	// the system does not tell), for the UI's debug header.
	HeapInUse, RSS uint64
}

// Busy reports whether the engine reconciled or had work queued since the
// previous figures: the header's "reconciling" rather than "idle".
func (e Engine) Busy() bool { return e.QueueDepth > 0 || e.BusyWorkers > 0 }

// Cluster says where kroscope is connected.
type Cluster struct {
	Context   string
	Server    string
	Namespace string // "" means all namespaces
	Demo      bool
	// Source says where the connection came from, for messages about it:
	// "kubeconfig /home/me/.kube/config, context kind-kind".
	Source string
}

// Mode says whether this process writes.
type Mode struct {
	// Reconciling is true when this process holds the lease (or needs none)
	// and may write; false while observing.
	Reconciling bool
	// Forced is true when observing was asked for (--observe).
	Forced bool
	// Identity is this process's lease identity; Holder the lease holder's.
	Identity string
	Holder   string
	// Kro, when set, says that kro's own controller is reconciling this
	// cluster and how that was seen (its lease, Deployment or writes):
	// kroscope observes instead of fighting it. TakeOver is --take-over.
	Kro      string
	TakeOver bool
	// Attached: another kroscope holds the Lease (or kro reconciles, or
	// this user may not take the Lease, so whoever reconciles is
	// elsewhere) and this process forwards the user's requeue and delete
	// to the cluster (--attach); Holder is "" when it may not read it. HolderExpired: the followed holder stopped renewing the
	// Lease (it went away; a standby should take over within its duration).
	Attached      bool
	HolderExpired bool
	// RequeueNote says what a requeue does here when it is not a local
	// reconcile ("" while this process reconciles), for the flash.
	RequeueNote string
	// Writer, when set, says that another kroscope (another Lease) writes
	// these instances, naming it: this one observes.
	Writer string
	// Ask, when set, is the question the TUI asks before it becomes the
	// cluster's writer with the user's credentials (Engine.Consent).
	Ask string
}

// Startup reports progress before the engine is ready.
type Startup struct {
	Done  bool
	Phase string // e.g. "syncing watches"
	Step  int
	Total int
}

// Fatal is an error that stops the engine before or while it runs (no
// kubeconfig, server unreachable, forbidden, no graphs), with what to do.
type Fatal struct {
	Title string
	Cause string
	Hint  string
}

// LogLine is one line of the engine's log.
type LogLine struct {
	At      time.Time
	Level   string // "info", "error", "debug"
	Message string
	// KV holds the structured key/value pairs, rendered "k=v".
	KV string
}

// Snapshot is an immutable view of the whole state at one Version.
type Snapshot struct {
	Version uint64
	Cluster Cluster
	Mode    Mode
	Engine  Engine
	Startup Startup
	Fatal   *Fatal
	// Capabilities are what this user may do with each instance kind.
	Capabilities Capabilities
	Watches      []Watch
	Graphs       []Graph
	Instances    []*Instance // sorted by key
	Logs         []LogLine   // bounded; oldest first
}

// Instance returns the instance with the given key, or nil.
func (s *Snapshot) Instance(k InstanceKey) *Instance {
	// The store keeps Instances in key order: a binary search finds one
	// among 10,000 at once (the open instance's screen looks it up on
	// every frame). A snapshot built by hand may be unordered: scan then.
	i := sort.Search(len(s.Instances), func(i int) bool { return !s.Instances[i].Key.Less(k) })
	if i < len(s.Instances) && s.Instances[i].Key == k {
		return s.Instances[i]
	}
	for _, in := range s.Instances {
		if in.Key == k {
			return in
		}
	}
	return nil
}
