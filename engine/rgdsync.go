package engine

import (
	"context"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kroscope/kroscope/engine/rgdstatus"
	"github.com/kroscope/kroscope/engine/state"
	"github.com/kroscope/kroscope/reconciler/client"
	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/reconciler/metadata"
)

// rgdStatus decides what a graph's conditions are (shown on the graphs
// screen) and, while this process writes, writes them on a cluster
// graph's ResourceGraphDefinition status as kro would.
type rgdStatus struct {
	set     *client.Set
	store   *state.Store
	log     logr.Logger
	writing func() bool // whether this process writes now
}

// setOutcome records how far serving r got and writes the RGD's status.
func (st *rgdStatus) setOutcome(ctx context.Context, r *graphRun, fn func(*rgdstatus.Outcome)) {
	r.mu.Lock()
	fn(&r.outcome)
	r.mu.Unlock()
	st.noteConditions(r)
	st.sync(ctx, r)
}

// noteConditions settles r's conditions after its outcome changed and
// hands them to the state.
func (st *rgdStatus) noteConditions(r *graphRun) {
	r.mu.Lock()
	sc := &r.shown
	sc.conds, _ = rgdstatus.Settle(sc.conds, sc.gen, sc.created, time.Now(), r.outcome)
	conds := stateConditions(sc.conds)
	r.mu.Unlock()
	st.store.SetGraphConditions(r.name, conds)
}

// sync writes a cluster graph's status (the values kro writes)
// through the status subresource, only while this process writes and only
// when it differs from what the RGD carries: a graph that is served and
// unchanged costs one read and no write. File graphs have no object to write.
func (st *rgdStatus) sync(ctx context.Context, r *graphRun) {
	if !r.cluster || !st.writing() || ctx.Err() != nil {
		return
	}
	r.syncMu.Lock()
	defer r.syncMu.Unlock()
	r.mu.Lock()
	o := r.outcome
	r.mu.Unlock()
	rgds := st.set.Dynamic().Resource(graph.GroupVersionResource)
	cur, err := rgds.Get(ctx, r.name, metav1.GetOptions{})
	if err != nil {
		if ctx.Err() == nil {
			st.log.V(1).Info("cannot read the ResourceGraphDefinition to update its status", "graph", r.name, "error", err.Error())
		}
		return
	}
	status, changed := rgdstatus.Desired(cur, o, time.Now())
	if !changed {
		return
	}
	patch, err := rgdstatus.Patch(status)
	if err != nil {
		st.log.Error(err, "encoding the ResourceGraphDefinition status", "graph", r.name)
		return
	}
	if _, err := rgds.Patch(ctx, r.name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: metadata.FieldManager}, "status"); err != nil {
		if ctx.Err() == nil && st.writing() {
			st.log.Error(err, "writing the ResourceGraphDefinition status", "graph", r.name)
		}
		return
	}
	st.log.V(1).Info("ResourceGraphDefinition status written", "graph", r.name, "state", status["state"])
}

// syncAll re-writes the status of each of runs whose outcome has
// settled (rgdstatus.Outcome.Settled): a graph still starting writes its
// own once it settles.
func (st *rgdStatus) syncAll(ctx context.Context, runs []*graphRun) {
	for _, r := range runs {
		r.mu.Lock()
		settled := r.outcome.Settled()
		r.mu.Unlock()
		if settled {
			st.sync(ctx, r)
		}
	}
}
