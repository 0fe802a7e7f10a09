// Package reconciler reconciles instances of a ResourceGraphDefinition: for
// one instance it renders every resource of the graph, applies them in
// dependency order, waits for readiness, writes status, and on deletion
// removes the children in reverse order.
//
// Each Reconcile builds a fresh runtime for the instance: nothing is carried
// between reconciles but what is stored in the API server.
package reconciler

import (
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kroscope/kroscope/reconciler/graph"
)

// Instance states.
const (
	InstanceStateInProgress = "IN_PROGRESS"
	InstanceStateFailed     = "FAILED"
	InstanceStateActive     = "ACTIVE"
	InstanceStateDeleting   = "DELETING"
	InstanceStateError      = "ERROR"
	// InstanceStateSuspended is kroscope's state for an instance paused by
	// the kro.run/reconcile annotation. It is not written to the instance:
	// the status keeps the state it had, with ResourcesReady
	// False/ReconciliationSuspended.
	InstanceStateSuspended = "SUSPENDED"
)

// Resource states.
const (
	ResourceStatePending                    = "PENDING"
	ResourceStateInProgress                 = "IN_PROGRESS"
	ResourceStateSkipped                    = "SKIPPED"
	ResourceStateCreated                    = "CREATED"
	ResourceStateUpdating                   = "UPDATING"
	ResourceStateSynced                     = "SYNCED"
	ResourceStateWaitingForReadiness        = "WAITING_FOR_READINESS"
	ResourceStateWaitingForExternalResource = "WAITING_FOR_EXTERNAL_RESOURCE"
	ResourceStateError                      = "ERROR"
	ResourceStateFailed                     = "FAILED"
	ResourceStatePendingDeletion            = "PENDING_DELETION"
	ResourceStateDeleting                   = "DELETING"
	ResourceStateDeleted                    = "DELETED"
)

const (
	// MetricImpersonationTotal is the total number of impersonation requests
	// made by the controller
	MetricImpersonationTotal = "controller_impersonation_total"
	// MetricImpersonationErrors is the total number of errors encountered
	// while making impersonation requests
	MetricImpersonationErrors = "controller_impersonation_errors_total"
	// MetricImpersonationDuration tracks the duration of impersonation operations
	MetricImpersonationDuration = "controller_impersonation_duration_seconds"
)

// Deletion policies for ReconcileConfig.DeletionPolicy.
const (
	DeletionPolicyDelete = "Delete"
	DeletionPolicyOrphan = "Orphan"
)

// InstanceState tracks the overall state of resources being managed
type InstanceState struct {
	// Current state of the instance
	State string
	// Map of resource IDs to their current states
	ResourceStates map[string]*ResourceState
	// Any error encountered during reconciliation
	ReconcileErr error
}

// ResourceState represents the state and any associated error of a resource
// being managed by the controller.
type ResourceState struct {
	// State represents the current state of the resource
	State string
	// Err captures any error associated with the current state
	Err error
}

// ReconcileConfig holds configuration parameters for the reconciliation
// process.
type ReconcileConfig struct {
	// DefaultRequeueDuration is the default duration to wait before requeueing a
	// a reconciliation if no specific requeue time is set.
	DefaultRequeueDuration time.Duration
	// DeletionGraceTimeDuration is how long a child may stay after its
	// deletion was requested before it is reported as an error.
	DeletionGraceTimeDuration time.Duration
	// DeletionPolicy is "Delete" (default when empty) or "Orphan".
	DeletionPolicy string
	// MaxNestingDepth is how many instances may stand above an instance
	// (see DefaultMaxNestingDepth, used when 0).
	MaxNestingDepth int
}

// ResourceDetail is what the engine shows about one resource after a
// reconcile, beyond ResourceState.
type ResourceDetail struct {
	ID        string
	GVK       schema.GroupVersionKind
	Name      string
	Namespace string
	External  bool
	State     string
	Err       error
	// WaitingFor says what holds the resource back, in words.
	WaitingFor string
	// ReadyChecks are its readyWhen conditions with the values they read,
	// while it waits for readiness.
	ReadyChecks []graph.Check
	Desired     *unstructured.Unstructured
	Observed    *unstructured.Unstructured
}

// Observation is handed to the Observer after every reconcile.
type Observation struct {
	GVR        schema.GroupVersionResource
	Namespace  string
	Name       string
	UID        types.UID
	Generation int64
	// Gone is true when the instance no longer exists (not found, or its
	// finalizer was just removed).
	Gone      bool
	Deleting  bool
	State     InstanceState
	Message   string
	Resources map[string]*ResourceDetail
	Start     time.Time
	Duration  time.Duration
}

// Observer receives every Observation; it must not block.
type Observer func(Observation)
