package engine

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kroscope/kroscope/engine/rgdstatus"
	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/reconciler/metadata"
)

// setOutcome records how far serving r got and writes the RGD's status.
func (e *Engine) setOutcome(ctx context.Context, r *graphRun, fn func(*rgdstatus.Outcome)) {
	r.mu.Lock()
	fn(&r.outcome)
	r.mu.Unlock()
	e.noteConditions(r)
	e.syncRGDStatus(ctx, r)
}

// syncRGDStatus writes a cluster graph's status (the values kro writes)
// through the status subresource, only while this process writes and only
// when it differs from what the RGD carries: a graph that is served and
// unchanged costs one read and no write. File graphs have no object to write.
func (e *Engine) syncRGDStatus(ctx context.Context, r *graphRun) {
	if !r.cluster || !e.writing() || ctx.Err() != nil {
		return
	}
	r.syncMu.Lock()
	defer r.syncMu.Unlock()
	r.mu.Lock()
	o := r.outcome
	r.mu.Unlock()
	rgds := e.cl.set.Dynamic().Resource(graph.GroupVersionResource)
	cur, err := rgds.Get(ctx, r.name, metav1.GetOptions{})
	if err != nil {
		if ctx.Err() == nil {
			e.log.V(1).Info("cannot read the ResourceGraphDefinition to update its status", "graph", r.name, "error", err.Error())
		}
		return
	}
	status, changed := rgdstatus.Desired(cur, o, time.Now())
	if !changed {
		return
	}
	patch, err := rgdstatus.Patch(status)
	if err != nil {
		e.log.Error(err, "encoding the ResourceGraphDefinition status", "graph", r.name)
		return
	}
	if _, err := rgds.Patch(ctx, r.name, types.MergePatchType, patch, metav1.PatchOptions{FieldManager: metadata.FieldManager}, "status"); err != nil {
		if ctx.Err() == nil && e.writing() {
			e.log.Error(err, "writing the ResourceGraphDefinition status", "graph", r.name)
		}
		return
	}
	e.log.V(1).Info("ResourceGraphDefinition status written", "graph", r.name, "state", status["state"])
}

// syncAllRGDStatus re-writes every cluster graph's status that differs
// from its outcome (after this process starts writing: the previous writer
// may have left other values). A graph still starting is left to write its
// own once it settles (rgdstatus.Outcome.Settled).
func (e *Engine) syncAllRGDStatus(ctx context.Context) {
	for _, r := range e.graphs.allRuns() {
		r.mu.Lock()
		settled := r.outcome.Settled()
		r.mu.Unlock()
		if settled {
			e.syncRGDStatus(ctx, r)
		}
	}
	// RGDs deleted while another process wrote may wait for kro's finalizer.
	for _, u := range e.kro.view.all() {
		e.releaseKroFinalizer(ctx, u)
	}
}
