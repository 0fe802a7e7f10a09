package tui

import (
	"context"
	"errors"
	"github.com/kroscope/kroscope/engine/packed"
	"sync"
	"time"

	"github.com/kroscope/kroscope/engine/state"
)

// fakeBackend serves a fixed snapshot and records the actions asked of it.
type fakeBackend struct {
	mu        sync.Mutex
	snap      *state.Snapshot
	ch        chan struct{}
	requeued  []state.InstanceKey
	reqAll    int
	deleted   []state.InstanceKey
	deleteErr error
	// hold, when set, makes Requeue wait until it is closed (a slow API
	// server behind an attached requeue).
	hold chan struct{}
}

func newFake(s *state.Snapshot) *fakeBackend {
	return &fakeBackend{snap: s, ch: make(chan struct{}, 1)}
}

func (f *fakeBackend) Snapshot() *state.Snapshot {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.snap
}

func (f *fakeBackend) Subscribe() (<-chan struct{}, func()) { return f.ch, func() {} }

func (f *fakeBackend) Requeue(k state.InstanceKey) error {
	if f.hold != nil {
		<-f.hold
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.snap.Instance(k) == nil {
		return errors.New("no such instance")
	}
	f.requeued = append(f.requeued, k)
	return nil
}

func (f *fakeBackend) RequeueAll(match func(*state.Instance) bool) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, in := range f.snap.Instances {
		if match(in) {
			n++
		}
	}
	f.reqAll += n
	return n, nil
}

func (f *fakeBackend) Delete(_ context.Context, k state.InstanceKey) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.deleteErr != nil {
		return f.deleteErr
	}
	f.deleted = append(f.deleted, k)
	return nil
}

func (f *fakeBackend) calls() (req []state.InstanceKey, all int, del []state.InstanceKey) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]state.InstanceKey(nil), f.requeued...), f.reqAll, append([]state.InstanceKey(nil), f.deleted...)
}

// fixedNow is the clock of every golden.
var fixedNow = time.Date(2026, 1, 2, 12, 0, 0, 0, time.UTC)

func at(sec float64) time.Time { return fixedNow.Add(time.Duration(sec * float64(time.Second))) }

const webapps = "webapps.kro.run"

func webappResources(ns, name string) []state.Resource {
	return []state.Resource{
		{ID: "config", APIVersion: "v1", Kind: "ConfigMap", Name: name + "-config", Namespace: ns, State: "SYNCED",
			Desired:      pk(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name + "-config", "namespace": ns}, "data": map[string]any{"LOG_LEVEL": "info"}}),
			Observed:     pk(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": name + "-config", "namespace": ns, "uid": "c-1", "managedFields": []any{"noise"}}, "data": map[string]any{"LOG_LEVEL": "info"}}),
			FirstApplied: at(-120), Ready: at(-119.8)},
		{ID: "secret", APIVersion: "v1", Kind: "Secret", Name: name + "-creds", Namespace: ns, State: "SYNCED",
			Desired:      pk(map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": name + "-creds", "namespace": ns}, "stringData": map[string]any{"password": "hunter2"}}),
			Observed:     pk(map[string]any{"apiVersion": "v1", "kind": "Secret", "metadata": map[string]any{"name": name + "-creds", "namespace": ns}, "data": map[string]any{"password": "aHVudGVyMg=="}}),
			FirstApplied: at(-120), Ready: at(-119.5)},
		{ID: "deployment", APIVersion: "apps/v1", Kind: "Deployment", Name: name, Namespace: ns, State: "SYNCED",
			Dependencies: []string{"config", "secret"}, ReadyWhen: []string{"${deployment.status.availableReplicas == deployment.spec.replicas}"},
			Desired:      pk(map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": name, "namespace": ns}, "spec": map[string]any{"replicas": int64(2)}}),
			Observed:     pk(map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": name, "namespace": ns}, "spec": map[string]any{"replicas": int64(2)}, "status": map[string]any{"availableReplicas": int64(2)}}),
			FirstApplied: at(-119.4), Ready: at(-95)},
		{ID: "service", APIVersion: "v1", Kind: "Service", Name: name, Namespace: ns, State: "SYNCED", Dependencies: []string{"deployment"},
			FirstApplied: at(-95), Ready: at(-94.5)},
		{ID: "ingress", APIVersion: "networking.k8s.io/v1", Kind: "Ingress", Name: name, Namespace: ns, State: "SKIPPED",
			Dependencies: []string{"service", "config"}, IncludeWhen: []string{"${schema.spec.ingress.enabled}"},
			WaitingFor: "includeWhen ${schema.spec.ingress.enabled} = false"},
	}
}

func layers() [][]string {
	return [][]string{{"config", "secret"}, {"deployment"}, {"service"}, {"ingress"}}
}

// fixture is the snapshot every golden renders.
func fixture() *state.Snapshot {
	shop := &state.Instance{Key: state.InstanceKey{Resource: webapps, Namespace: "team-a", Name: "shop"}, APIVersion: "kro.run/v1alpha1",
		Kind: "WebApp", Graph: "webapp", Generation: 3, ObservedGeneration: 3, Created: at(-3 * 3600), State: "ACTIVE",
		Resources: webappResources("team-a", "shop"), Layers: layers(), Reconciles: 14, LastReconcile: at(-12), LastDuration: 84 * time.Millisecond,
		History: []state.Transition{
			{At: at(-121), From: "", To: "IN_PROGRESS", Message: "waiting for deployment", Duration: 40 * time.Millisecond},
			{At: at(-94), From: "IN_PROGRESS", To: "ACTIVE", Duration: 95 * time.Millisecond},
		}, Version: 10}

	blogRes := webappResources("team-a", "blog")
	blogRes[2].State, blogRes[2].Ready = "WAITING_FOR_READINESS", time.Time{}
	blogRes[2].FirstApplied = at(-20)
	blogRes[2].WaitingFor = "readyWhen ${deployment.status.availableReplicas == deployment.spec.replicas} = false (0 of 2)"
	blogRes[3].State, blogRes[3].FirstApplied, blogRes[3].Ready = "PENDING", time.Time{}, time.Time{}
	blogRes[3].WaitingFor = "dependency deployment is not ready"
	blogRes[4].State = "PENDING"
	blog := &state.Instance{Key: state.InstanceKey{Resource: webapps, Namespace: "team-a", Name: "blog"}, APIVersion: "kro.run/v1alpha1",
		Kind: "WebApp", Graph: "webapp", Generation: 1, ObservedGeneration: 1, Created: at(-25), State: "IN_PROGRESS",
		Message: "waiting for deployment: readyWhen is false", Resources: blogRes, Layers: layers(), Reconciles: 3,
		LastReconcile: at(-2), LastDuration: 31 * time.Millisecond, Version: 11}

	apiRes := webappResources("team-b", "api")
	apiRes[2].State, apiRes[2].Ready = "ERROR", time.Time{}
	apiRes[2].Err = `applying Deployment team-b/api: Deployment.apps "api" is invalid: spec.template.spec.containers[0].image: Required value; spec.template.spec.containers[0].resources.limits.memory: Invalid value: "1Gx": quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`
	apiRes[3].State, apiRes[3].FirstApplied, apiRes[3].Ready = "PENDING", time.Time{}, time.Time{}
	apiRes[4].State = "PENDING"
	api := &state.Instance{Key: state.InstanceKey{Resource: webapps, Namespace: "team-b", Name: "api"}, APIVersion: "kro.run/v1alpha1",
		Kind: "WebApp", Graph: "webapp", Generation: 2, ObservedGeneration: 2, Created: at(-86400 * 2), State: "ERROR",
		Message:   `deployment: Deployment.apps "api" is invalid: spec.template.spec.containers[0].image: Required value`,
		Resources: apiRes, Layers: layers(), Reconciles: 40, LastReconcile: at(-5), LastDuration: 1200 * time.Millisecond, Version: 12}

	db := &state.Instance{Key: state.InstanceKey{Resource: "databases.kro.run", Namespace: "team-b", Name: "orders"}, Kind: "Database",
		Graph: "database", Created: at(-600), State: "ACTIVE", Reconciles: 5, LastReconcile: at(-300), LastDuration: 20 * time.Millisecond, Version: 13,
		Resources: []state.Resource{
			{ID: "pvc", APIVersion: "v1", Kind: "PersistentVolumeClaim", Name: "orders-data", Namespace: "team-b", State: "SYNCED", FirstApplied: at(-590), Ready: at(-580)},
			{ID: "cluster", APIVersion: "v1", Kind: "ConfigMap", Name: "shared-db", Namespace: "platform", External: true, State: "SYNCED"},
			{ID: "statefulset", APIVersion: "apps/v1", Kind: "StatefulSet", Name: "orders", Namespace: "team-b", State: "SYNCED", Dependencies: []string{"pvc", "cluster"}, FirstApplied: at(-580), Ready: at(-520)},
		}, Layers: [][]string{{"pvc", "cluster"}, {"statefulset"}}}

	old := &state.Instance{Key: state.InstanceKey{Resource: webapps, Namespace: "team-c", Name: "legacy"}, Kind: "WebApp", Graph: "webapp",
		Created: at(-7200), State: "DELETING", Deleting: true, Message: "deleting service", Version: 14, Resources: webappResources("team-c", "legacy"), Layers: layers()}
	old.Resources[3].State = "DELETING"
	fresh := &state.Instance{Key: state.InstanceKey{Resource: "databases.kro.run", Namespace: "team-c", Name: "cache"}, Kind: "Database",
		Graph: "database", Created: at(-1), Version: 15}

	return &state.Snapshot{
		Version: 100,
		Cluster: state.Cluster{Context: "kind-dev", Server: "https://127.0.0.1:6443"},
		Mode:    state.Mode{Reconciling: true, Identity: "laptop-1"},
		Engine:  state.Engine{Workers: 4, BusyWorkers: 1, QueueDepth: 2, Reconciles: 62, ReconcilesPerSecond: 3.5},
		Startup: state.Startup{Done: true, Phase: "ready", Step: 4, Total: 4},
		Watches: []state.Watch{
			{Name: "configmaps", Synced: true, Healthy: true, Since: at(-900)},
			{Name: "databases.kro.run", Synced: true, Healthy: true, Since: at(-900)},
			{Name: "deployments.apps", Synced: true, Healthy: true, Since: at(-900)},
			{Name: "webapps.kro.run", Synced: true, Healthy: true, Since: at(-900)},
		},
		Graphs: []state.Graph{
			{Name: "database", Kind: "Database", Resource: "databases.kro.run", Served: true},
			{Name: "webapp", Kind: "WebApp", Resource: webapps, Served: true},
		},
		Instances: []*state.Instance{blog, shop, api, db, fresh, old},
		Logs: []state.LogLine{
			{At: at(-30), Level: "info", Message: "reconciled", KV: "instance=team-a/shop duration=84ms"},
			{At: at(-6), Level: "error", Message: "apply failed", KV: `instance=team-b/api resource=deployment err="invalid"`},
			{At: at(-2), Level: "info", Message: "waiting", KV: "instance=team-a/blog resource=deployment"},
		},
	}
}

// pk packs a test object as the state keeps it.
func pk(m map[string]any) packed.Object {
	p, err := packed.Pack(m)
	if err != nil {
		panic(err)
	}
	return p
}
