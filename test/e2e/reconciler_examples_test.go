package e2e

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/yaml"

	"github.com/kroscope/kroscope/reconciler"
	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/reconciler/graph/builtinschemas"
	"github.com/kroscope/kroscope/test/envtest"
	"github.com/kroscope/kroscope/test/kroexamples"
)

// TestReconcilerKroExamples reconciles every kro example graph, stored
// through kro's real RGD CRD, to ACTIVE on the real API server, writing Deployment and Job status where readiness
// needs a controller the test server lacks, then compares the children with
// kro's own *-assert.yaml files, applies instance-update.yaml where there is
// one and compares *-update-assert.yaml, and finally deletes the instance.
//
// Examples read from elsewhere ($KROSCOPE_KRO_EXAMPLES) may hold graphs
// kroscope refuses, or no instance: those are skipped with the reason
// (test/kro's TestKroExamples fails when kro accepts a graph kroscope
// refuses). The shared examples must all run.
func TestReconcilerKroExamples(t *testing.T) {
	files := kroexamples.RGDFiles(t)
	elsewhere := kroexamples.Elsewhere()
	for _, file := range files {
		dir := filepath.Dir(file)
		t.Run(kroexamples.Name(file), func(t *testing.T) {
			if elsewhere {
				skipRefused(t, file)
			}
			skipNoInstance(t, dir)
			envtest.Start(t).ApplyFiles(t, "default", kroexamples.SetupFiles(t, dir)...)
			runExample(t, dir, file)
		})
	}
}

// ownNamespace is the instance YAML with spec.namespace (kro's webapp and
// dogsvscats let the instance choose its children's namespace, "default"
// by default) set to the namespace the instance is created in, as its
// author in that namespace would: another one is refused
// (confine.Decide). Instances of other graphs are unchanged.
func ownNamespace(t *testing.T, rgdYAML, instYAML []byte, ns string) string {
	t.Helper()
	var rgd, inst map[string]any
	if err := yaml.Unmarshal(rgdYAML, &rgd); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := unstructured.NestedFieldNoCopy(rgd, "spec", "schema", "spec", "namespace"); !ok {
		return string(instYAML)
	}
	if err := yaml.Unmarshal(instYAML, &inst); err != nil {
		t.Fatal(err)
	}
	if err := unstructured.SetNestedField(inst, ns, "spec", "namespace"); err != nil {
		t.Fatal(err)
	}
	out, err := yaml.Marshal(inst)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// skipRefused skips an example kroscope refuses offline (built-in kinds
// typed from the embedded schemas).
func skipRefused(t *testing.T, file string) {
	rgds, err := graph.LoadFiles(file)
	if err == nil && len(rgds) != 1 {
		err = fmt.Errorf("%d graphs in the file", len(rgds))
	}
	if err == nil {
		_, err = graph.NewBuilder(graph.WithSchemaResolver(graph.NewClientSchemaResolver(builtinschemas.Client(), 0))).Build(rgds[0])
	}
	if err != nil {
		t.Skipf("kroscope refuses %s: %v", file, err)
	}
}

// skipNoInstance skips an example with no instance to reconcile (kro's
// chainsaw tests of a graph alone).
func skipNoInstance(t *testing.T, dir string) {
	for _, f := range []string{"instance.yaml", "valid-instance.yaml"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			return
		}
	}
	t.Skipf("%s has no instance.yaml or valid-instance.yaml", dir)
}

func runExample(t *testing.T, dir, rgdFile string) {
	data, err := os.ReadFile(rgdFile)
	if err != nil {
		t.Fatal(err)
	}
	// Stored through kro's CRD and read back, as on a cluster where kro
	// runs, and typed from the API server's OpenAPI, as the engine serves it.
	r := newRig(t, string(data), func(c *rigConfig) { c.storeThroughKroCRD = true })
	instFile := filepath.Join(dir, "instance.yaml")
	if _, err := os.Stat(instFile); err != nil {
		instFile = filepath.Join(dir, "valid-instance.yaml")
	}
	instYAML, err := os.ReadFile(instFile)
	if err != nil {
		t.Fatalf("no instance for %s: %v", dir, err)
	}
	inst := r.create(ownNamespace(t, data, instYAML, r.ns))
	name := inst.GetName()

	active := func(o reconciler.Observation, _ error) bool {
		r.fakeControllers(o)
		live := r.instance(name)
		return o.State.State == reconciler.InstanceStateActive && live != nil &&
			envtest.Condition(live, "Ready")["observedGeneration"] == live.GetGeneration()
	}
	r.until(name, 2*time.Minute, "ACTIVE", active)
	r.compareAsserts(dir, false)

	if upd, err := os.ReadFile(filepath.Join(dir, "instance-update.yaml")); err == nil {
		var u map[string]any
		if err := yaml.Unmarshal(upd, &u); err != nil {
			t.Fatalf("instance-update.yaml: %v", err)
		}
		r.patchSpec(name, u["spec"].(map[string]any))
		r.until(name, 2*time.Minute, "ACTIVE after the update", active)
		r.compareAsserts(dir, true)
	}

	r.deleteInstance(name)
	r.untilGone(name)
}

// fakeControllers writes the status a controller-manager would write for
// Deployments and Jobs that wait for readiness.
func (r *rig) fakeControllers(o reconciler.Observation) {
	for _, d := range o.Resources {
		if d.GVK.Kind == "HorizontalPodAutoscaler" && d.Observed != nil {
			r.fakeAutoscaler(d.Observed)
		}
		if d.State != reconciler.ResourceStateWaitingForReadiness || d.Observed == nil {
			continue
		}
		switch d.GVK.Kind {
		case "Deployment":
			r.writeStatus(gvrDeployment, d.Namespace, d.Name)
		case "Job":
			r.writeStatus(gvrJob, d.Namespace, d.Name)
		}
	}
}

// fakeAutoscaler keeps the target Deployment's replicas within the HPA's
// bounds through the scale subresource, as the HPA controller does.
func (r *rig) fakeAutoscaler(hpa *unstructured.Unstructured) {
	r.t.Helper()
	minR, ok, _ := unstructured.NestedInt64(hpa.Object, "spec", "minReplicas")
	if !ok {
		minR = 1
	}
	maxR, _, _ := unstructured.NestedInt64(hpa.Object, "spec", "maxReplicas")
	target, _, _ := unstructured.NestedString(hpa.Object, "spec", "scaleTargetRef", "name")
	d := r.get(gvrDeployment, hpa.GetNamespace(), target)
	if d == nil {
		return
	}
	cur, ok, _ := unstructured.NestedInt64(d.Object, "spec", "replicas")
	if !ok {
		cur = 1
	}
	want := max(minR, min(cur, maxR))
	if want == cur {
		return
	}
	body := mustJSON(r.t, map[string]any{"spec": map[string]any{"replicas": want}})
	_, err := r.dyn.Resource(gvrDeployment).Namespace(hpa.GetNamespace()).Patch(ctxT(r.t), target, types.MergePatchType, body,
		metav1.PatchOptions{FieldManager: "kube-controller-manager"}, "scale")
	if err != nil {
		r.t.Fatalf("scaling %s: %v", target, err)
	}
}

// writeStatus writes the status kube-controller-manager would write on the
// live object, unless it already holds it.
func (r *rig) writeStatus(gvr schema.GroupVersionResource, ns, name string) {
	r.t.Helper()
	u := r.get(gvr, ns, name)
	if u == nil {
		return
	}
	status, ok := envtest.ControllerStatus(u)
	if !ok {
		return
	}
	u.Object["status"] = status
	if _, err := r.dyn.Resource(gvr).Namespace(ns).UpdateStatus(ctxT(r.t), u, metav1.UpdateOptions{}); err != nil {
		r.t.Fatalf("writing %s %s/%s status: %v", gvr.Resource, ns, name, err)
	}
}

// compareAsserts checks every object of kro's assert files (update ones
// when update is true) against the live object. Every assert file the
// example's chainsaw test names for this phase must be among them, and an
// example with assert files that compares no object fails: a test that
// checks nothing must not pass.
func (r *rig) compareAsserts(dir string, update bool) {
	r.t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*-assert.yaml"))
	// The chainsaw test's final asserts too, whatever their names
	// (owned.yaml).
	for _, f := range chainsawAsserts(r.t, dir) {
		if p := filepath.Join(dir, f); !slices.Contains(files, p) {
			files = append(files, p)
		}
	}
	n := 0
	compared, definitions := map[string]bool{}, map[string]bool{}
	defer func() {
		for _, f := range chainsawAsserts(r.t, dir) {
			if skippedAssert(f, update) || definitions[f] {
				continue
			}
			if !compared[f] {
				r.t.Errorf("%s: chainsaw-test.yaml asserts %s, which was not compared", filepath.Base(dir), f)
			}
		}
		if len(compared) > 0 && n == 0 {
			r.t.Errorf("%s: %d assert file(s) (update=%v), no object compared", filepath.Base(dir), len(compared), update)
		}
	}()
	for _, f := range files {
		base := filepath.Base(f)
		if skippedAssert(base, update) {
			continue
		}
		compared[base] = true
		data, err := os.ReadFile(f)
		if err != nil {
			r.t.Fatal(err)
		}
		var want map[string]any
		if err := yaml.Unmarshal(data, &want); err != nil {
			r.t.Fatalf("%s: %v", f, err)
		}
		u := &unstructured.Unstructured{Object: want}
		gvk := u.GroupVersionKind()
		if gvk.Kind == "ResourceGraphDefinition" || gvk.Kind == "CustomResourceDefinition" {
			// The graph's and its CRD's, whatever the file's name
			// (assert-rgd-active.yaml): CRD parity's, in test/kro.
			delete(compared, base)
			definitions[base] = true
			continue
		}
		ns := r.ns
		if gvk.Kind == r.g.Instance.GVK.Kind {
			// kro's own single condition (InstanceSynced) is replaced by
			// Ready and its three sub-conditions; the state must match.
			if st, ok := want["status"].(map[string]any); ok {
				delete(st, "conditions")
			}
			live := r.instance(u.GetName())
			if c := envtest.Condition(live, "Ready"); c == nil || c["status"] != "True" {
				r.t.Errorf("%s: instance Ready condition %v, want True", base, c)
			}
		}
		gvr := r.g.Instance.GVR
		if gvk.Kind != r.g.Instance.GVK.Kind {
			mapping, err := r.cs.RESTMapper().RESTMapping(gvk.GroupKind(), gvk.Version)
			if err != nil {
				r.t.Fatalf("%s: mapping %s: %v", base, gvk, err)
			}
			gvr = mapping.Resource
		}
		live := r.get(gvr, ns, u.GetName())
		if live == nil {
			r.t.Errorf("%s: %s %s/%s does not exist", base, gvk.Kind, ns, u.GetName())
			continue
		}
		delete(want, "apiVersion")
		delete(want, "kind")
		if err := assertSubset(want, live.Object, ""); err != nil {
			r.t.Errorf("%s: %s %s differs from kro's expectation: %v", base, gvk.Kind, u.GetName(), err)
		}
		n++
	}
	r.t.Logf("%s: %d objects match kro's assertions (update=%v)", filepath.Base(dir), n, update)
}

// skippedAssert: the graph's and the instance CRD's asserts are another
// test's (CRD parity), and each phase compares its own files.
func skippedAssert(base string, update bool) bool {
	return base == "rgd-assert.yaml" || base == "instancecrd-assert.yaml" || strings.Contains(base, "-update-") != update || intermediateAsserts[base]
}

// intermediateAsserts assert a state the examples' test does not stop at
// (it applies a chainsaw test's setup before the instance, and compares
// once the instance is ACTIVE).
var intermediateAsserts = map[string]bool{
	"instance-assert-in-progress.yaml": true, // check-external-references: before its external object exists
}

// chainsawAsserts are the files the example's chainsaw-test.yaml asserts
// (`assert: {file: ...}`), none without one.
func chainsawAsserts(t testing.TB, dir string) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "chainsaw-test.yaml"))
	if err != nil {
		return nil
	}
	var out []string
	lines := strings.Split(string(data), "\n")
	for i, l := range lines {
		if strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(l), "-")) != "assert:" || i+1 >= len(lines) {
			continue
		}
		if f, ok := strings.CutPrefix(strings.TrimSpace(lines[i+1]), "file:"); ok {
			out = append(out, strings.Trim(strings.TrimSpace(f), `"'`))
		}
	}
	return out
}
