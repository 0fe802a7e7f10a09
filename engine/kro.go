package engine

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/kroscope/kroscope/engine/authority"
	"github.com/kroscope/kroscope/engine/krodetect"
	"github.com/kroscope/kroscope/engine/tick"
	"github.com/kroscope/kroscope/reconciler/client"
	"github.com/kroscope/kroscope/reconciler/graph"
	"github.com/kroscope/kroscope/reconciler/metadata"
)

// kroPresence decides whether kro's controller runs beside kroscope: it
// hands krodetect the evidence (kro's Lease and Deployment, the writes
// seen on graphs and instances) and records its verdict as a fact of the
// write authority.
type kroPresence struct {
	// mu orders kro verdicts (see refresh).
	mu sync.Mutex
	// detector collects the evidence (nil without a real cluster).
	detector atomic.Pointer[krodetect.Detector]
	o        Options
	set      *client.Set // lists the cluster's graphs at start
	base     *client.Set // kro's Lease and Deployment
	facts    authorityFacts
	log      logr.Logger
	// changed runs after the verdict's line changed (kro's view of every
	// graph is derived again).
	changed func()
}

// start makes the first check for kro's controller (its Lease,
// Deployment and, when the cluster has graphs, its writes on them) before
// anything is written, then watches them and checks every KroPollInterval.
func (k *kroPresence) start(ctx context.Context, clusterRGDs bool) {
	kube := k.base.Kubernetes()
	if k.o.KroPollInterval < 0 || kube == nil {
		return
	}
	d := krodetect.New(krodetect.Config{Kube: kube, OwnManager: metadata.FieldManager, TakeOver: k.o.TakeOver, Since: time.Now(), Silence: k.o.KroSilence})
	k.detector.Store(d)
	poll := func() {
		for _, err := range d.Poll(ctx) {
			if ctx.Err() == nil {
				k.log.V(1).Info("kro detection", "error", err.Error())
			}
		}
	}
	poll()
	if clusterRGDs {
		list, err := k.set.Dynamic().Resource(graph.GroupVersionResource).List(ctx, metav1.ListOptions{})
		if err == nil {
			for i := range list.Items {
				noteGraph(d, &list.Items[i])
			}
		}
	}
	k.refresh(d)
	// kro's Lease and Deployment are watched: one that appears is acted
	// on at once (before kro's first reconcile completes); the poll is for
	// time passing (a Lease's expiry) and a watch this user may not have.
	changed := make(chan struct{}, 1)
	go d.Watch(ctx, func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	})
	go tick.Every(ctx, k.o.KroPollInterval, changed, func() bool {
		poll()
		k.refresh(d)
		return false
	})
}

func rgdWhat(name string) string { return "ResourceGraphDefinition " + name }

func instanceWhat(resource string, u metav1.Object) string {
	if u.GetNamespace() == "" {
		return resource + " " + u.GetName()
	}
	return resource + " " + u.GetNamespace() + "/" + u.GetName()
}

// noteGraph passes a cluster graph to d: its writes, and whether it holds
// a change kro has not answered.
func noteGraph(d *krodetect.Detector, u *unstructured.Unstructured) {
	d.Note(rgdWhat(u.GetName()), u)
	d.NoteGraph(rgdWhat(u.GetName()), krodetect.Unanswered(u))
}

// noteWrites passes an object's managedFields to the detector.
func (k *kroPresence) noteWrites(what string, obj metav1.Object) {
	if d := k.detector.Load(); d != nil {
		d.Note(what, obj)
		k.refresh(d)
	}
}

// noteGraph passes a cluster graph to the detector.
func (k *kroPresence) noteGraph(u *unstructured.Unstructured) {
	if d := k.detector.Load(); d != nil {
		noteGraph(d, u)
		k.refresh(d)
	}
}

// forgetGraph drops a deleted graph's unanswered change. What kro was
// seen writing on it is kept: a kro whose objects are gone is idle, not
// absent.
func (k *kroPresence) forgetGraph(name string) {
	if d := k.detector.Load(); d != nil {
		d.Forget(rgdWhat(name))
	}
}

// refresh asks the detector for its verdict; when whether kroscope may
// write changes (or why not), the gate, the lease campaign, the header and
// the log follow. mu keeps two callers (a watch event, the poll) from
// recording their verdicts in the other order, an older one last.
func (k *kroPresence) refresh(d *krodetect.Detector) {
	k.mu.Lock()
	v := d.Verdict()
	line := v.Line(k.o.TakeOver)
	var was string // the line before ("" when kroscope could write)
	k.facts.update(func(f *authority.Facts) {
		was = f.Kro.Line(f.TakeOver)
		f.Kro = v
	})
	k.mu.Unlock()
	switch {
	case line == was:
		return
	case line != "":
		k.log.Info(line)
	default:
		k.log.Info(v.Changed(), "was", was)
	}
	k.changed()
}
