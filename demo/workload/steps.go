package workload

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"reflect"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func (s *Simulator) stamp() string { return s.opts.Now().UTC().Format(time.RFC3339) }

// replicasRollout is the shared model of Deployments and StatefulSets: a
// new generation restarts the rollout; each step makes one more replica
// updated, ready and available.
type rollout struct {
	desired, updated, ready, available int64
	observed                           int64
}

func readRollout(obj *unstructured.Unstructured) rollout {
	desired, found, _ := unstructured.NestedInt64(obj.Object, "spec", "replicas")
	if !found {
		desired = 1
	}
	r := rollout{desired: desired}
	r.updated, _, _ = unstructured.NestedInt64(obj.Object, "status", "updatedReplicas")
	r.ready, _, _ = unstructured.NestedInt64(obj.Object, "status", "readyReplicas")
	r.available, _, _ = unstructured.NestedInt64(obj.Object, "status", "availableReplicas")
	r.observed, _, _ = unstructured.NestedInt64(obj.Object, "status", "observedGeneration")
	return r
}

// advance moves the rollout one step and reports whether it is complete.
func (r *rollout) advance(generation int64) bool {
	if r.observed != generation {
		// A new spec: the rollout starts over (pods of the old template
		// stay ready while new ones come up, as with maxUnavailable 0).
		r.observed = generation
		r.updated = 0
	} else if r.updated < r.desired {
		r.updated++
	}
	if r.updated > r.desired {
		r.updated = r.desired
	}
	r.ready = max(min(r.ready, r.desired), r.updated)
	r.available = r.ready
	return r.updated == r.desired && r.ready == r.desired
}

func deploymentStep(s *Simulator, obj *unstructured.Unstructured) (change, bool, time.Duration) {
	r := readRollout(obj)
	done := r.advance(obj.GetGeneration())
	old, _, _ := unstructured.NestedSlice(obj.Object, "status", "conditions")
	conds := old
	if r.available >= r.desired {
		conds = setCondition(conds, "Available", "True", "MinimumReplicasAvailable", "Deployment has minimum availability.", s.stamp())
	} else {
		conds = setCondition(conds, "Available", "False", "MinimumReplicasUnavailable", "Deployment does not have minimum availability.", s.stamp())
	}
	name := obj.GetName() + "-" + hash(obj.GetName(), obj.GetGeneration())
	if done {
		conds = setCondition(conds, "Progressing", "True", "NewReplicaSetAvailable", fmt.Sprintf("ReplicaSet %q has successfully progressed.", name), s.stamp())
	} else {
		conds = setCondition(conds, "Progressing", "True", "ReplicaSetUpdated", fmt.Sprintf("ReplicaSet %q is progressing.", name), s.stamp())
	}
	status := map[string]any{
		"observedGeneration": r.observed,
		"replicas":           r.desired,
		"updatedReplicas":    r.updated,
		"readyReplicas":      r.ready,
		"availableReplicas":  r.available,
		"conditions":         conds,
	}
	if u := r.desired - r.available; u > 0 {
		status["unavailableReplicas"] = u
	}
	return change{status: status}, !done, s.opts.Step
}

func statefulSetStep(s *Simulator, obj *unstructured.Unstructured) (change, bool, time.Duration) {
	r := readRollout(obj)
	done := r.advance(obj.GetGeneration())
	rev := obj.GetName() + "-" + hash(obj.GetName(), obj.GetGeneration())
	status := map[string]any{
		"observedGeneration": r.observed,
		"replicas":           r.desired,
		"currentReplicas":    r.updated,
		"updatedReplicas":    r.updated,
		"readyReplicas":      r.ready,
		"availableReplicas":  r.available,
		"currentRevision":    rev,
		"updateRevision":     rev,
	}
	return change{status: status}, !done, s.opts.Step
}

// A DaemonSet runs on the demo's three imaginary nodes.
func daemonSetStep(s *Simulator, obj *unstructured.Unstructured) (change, bool, time.Duration) {
	const nodes = 3
	ready, _, _ := unstructured.NestedInt64(obj.Object, "status", "numberReady")
	observed, _, _ := unstructured.NestedInt64(obj.Object, "status", "observedGeneration")
	if observed != obj.GetGeneration() {
		ready = 0
	} else if ready < nodes {
		ready++
	}
	status := map[string]any{
		"observedGeneration":     obj.GetGeneration(),
		"desiredNumberScheduled": int64(nodes),
		"currentNumberScheduled": int64(nodes),
		"updatedNumberScheduled": ready,
		"numberReady":            ready,
		"numberAvailable":        ready,
		"numberMisscheduled":     int64(0),
	}
	return change{status: status}, ready < nodes, s.opts.Step
}

// A Job starts at once and completes after JobDuration.
func jobStep(s *Simulator, obj *unstructured.Unstructured) (change, bool, time.Duration) {
	completions, found, _ := unstructured.NestedInt64(obj.Object, "spec", "completions")
	if !found {
		completions = 1
	}
	if _, done, _ := unstructured.NestedString(obj.Object, "status", "completionTime"); done {
		return change{}, false, 0
	}
	start, started, _ := unstructured.NestedString(obj.Object, "status", "startTime")
	if !started {
		return change{status: map[string]any{"startTime": s.stamp(), "active": int64(1), "ready": int64(1)}}, true, s.opts.JobDuration
	}
	now := s.stamp()
	conds := []any{}
	conds = setCondition(conds, "SuccessCriteriaMet", "True", "CompletionsReached", "Reached expected number of succeeded pods", now)
	conds = setCondition(conds, "Complete", "True", "CompletionsReached", "Reached expected number of succeeded pods", now)
	return change{status: map[string]any{
		"startTime":      start,
		"completionTime": now,
		"succeeded":      completions,
		"ready":          int64(0),
		"conditions":     conds,
	}}, false, 0
}

// A Service gets a cluster IP (allocated from a hash of its name) and, when
// it is a LoadBalancer, an ingress hostname one step later.
func serviceStep(s *Simulator, obj *unstructured.Unstructured) (change, bool, time.Duration) {
	typ, _, _ := unstructured.NestedString(obj.Object, "spec", "type")
	ip, _, _ := unstructured.NestedString(obj.Object, "spec", "clusterIP")
	if ip == "" && typ != "ExternalName" {
		h := fnv.New32a()
		_, _ = h.Write([]byte(obj.GetNamespace() + "/" + obj.GetName()))
		sum := h.Sum32()
		ip = fmt.Sprintf("10.96.%d.%d", (sum>>8)%256, sum%254+1)
		patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"clusterIP": ip, "clusterIPs": []string{ip}}})
		return change{patch: patch}, typ == "LoadBalancer", s.opts.Step
	}
	if typ != "LoadBalancer" {
		return change{}, false, 0
	}
	host := fmt.Sprintf("%s-%s.lb.demo.local", obj.GetName(), obj.GetNamespace())
	return change{status: map[string]any{
		"loadBalancer": map[string]any{"ingress": []any{map[string]any{"hostname": host}}},
	}}, false, 0
}

func ingressStep(s *Simulator, obj *unstructured.Unstructured) (change, bool, time.Duration) {
	host := fmt.Sprintf("%s-%s.ingress.demo.local", obj.GetName(), obj.GetNamespace())
	return change{status: map[string]any{
		"loadBalancer": map[string]any{"ingress": []any{map[string]any{"hostname": host}}},
	}}, false, 0
}

func pvcStep(s *Simulator, obj *unstructured.Unstructured) (change, bool, time.Duration) {
	status := map[string]any{"phase": "Bound", "accessModes": []any{"ReadWriteOnce"}}
	if modes, found, _ := unstructured.NestedSlice(obj.Object, "spec", "accessModes"); found {
		status["accessModes"] = modes
	}
	if size, found, _ := unstructured.NestedString(obj.Object, "spec", "resources", "requests", "storage"); found {
		status["capacity"] = map[string]any{"storage": size}
	}
	return change{status: status}, false, 0
}

// setCondition sets one condition in a conditions list, keeping its
// lastTransitionTime while its status does not change.
func setCondition(conds []any, typ, status, reason, msg, now string) []any {
	out := make([]any, 0, len(conds)+1)
	found := false
	for _, c := range conds {
		m, ok := c.(map[string]any)
		if !ok || m["type"] != typ {
			out = append(out, c)
			continue
		}
		found = true
		at := now
		if m["status"] == status {
			if t, ok := m["lastTransitionTime"].(string); ok {
				at = t
			}
		}
		out = append(out, condition(typ, status, reason, msg, at, now))
	}
	if !found {
		out = append(out, condition(typ, status, reason, msg, now, now))
	}
	return out
}

func condition(typ, status, reason, msg, transition, update string) map[string]any {
	return map[string]any{
		"type": typ, "status": status, "reason": reason, "message": msg,
		"lastTransitionTime": transition, "lastUpdateTime": update,
	}
}

// equalJSON compares two JSON-like values; lastUpdateTime stamps are
// ignored, so a step that changes nothing else does not write.
func equalJSON(a, b any) bool {
	return reflect.DeepEqual(stripUpdateTimes(a), stripUpdateTimes(b))
}

func stripUpdateTimes(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			if k != "lastUpdateTime" {
				out[k] = stripUpdateTimes(e)
			}
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = stripUpdateTimes(e)
		}
		return out
	}
	return v
}

func hash(name string, gen int64) string {
	h := fnv.New32a()
	_, _ = fmt.Fprintf(h, "%s/%d", name, gen)
	return fmt.Sprintf("%08x", h.Sum32())[:8]
}
