// Package lease makes sure only one kroscope reconciles a cluster: it holds a
// coordination.k8s.io Lease through client-go's leader election and tells
// the engine when it starts and stops writing, and who holds the lease.
package lease

import (
	"context"
	"fmt"
	"time"

	"github.com/go-logr/logr"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// Defaults, as kro's controller uses for its own leader election.
const (
	DefaultNamespace     = "kube-system"
	DefaultName          = "kroscope"
	DefaultLeaseDuration = 15 * time.Second
)

// Config says which lease to hold and what to do on changes.
type Config struct {
	Client    kubernetes.Interface
	Namespace string
	Name      string
	Identity  string
	// LeaseDuration is how long a holder that went away keeps the lease;
	// renew deadline and retry period are derived from it.
	LeaseDuration time.Duration
	Log           logr.Logger

	// OnStarted is called when this process starts holding the lease;
	// OnStopped when it stops (lost, or ctx done). OnHolder reports the
	// holder's identity whenever it changes.
	OnStarted func()
	OnStopped func()
	OnHolder  func(identity string)
}

// Run campaigns for the lease until ctx is done, re-campaigning after a loss.
// It releases the lease on return so another process takes over at once.
func Run(ctx context.Context, c Config) error {
	if c.Client == nil {
		return fmt.Errorf("lease %s/%s: no Kubernetes client", c.Namespace, c.Name)
	}
	if c.LeaseDuration <= 0 {
		c.LeaseDuration = DefaultLeaseDuration
	}
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: c.Namespace, Name: c.Name},
		Client:     c.Client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: c.Identity},
	}
	le, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   c.LeaseDuration,
		RenewDeadline:   c.LeaseDuration * 2 / 3,
		RetryPeriod:     c.LeaseDuration * 2 / 15,
		ReleaseOnCancel: true,
		Name:            c.Namespace + "/" + c.Name,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(context.Context) {
				c.Log.Info("holding the lease: reconciling", "lease", c.Namespace+"/"+c.Name, "identity", c.Identity)
				if c.OnStarted != nil {
					c.OnStarted()
				}
			},
			OnStoppedLeading: func() {
				c.Log.Info("not holding the lease: observing", "lease", c.Namespace+"/"+c.Name)
				if c.OnStopped != nil {
					c.OnStopped()
				}
			},
			OnNewLeader: func(id string) {
				if c.OnHolder != nil {
					c.OnHolder(id)
				}
			},
		},
	})
	if err != nil {
		return fmt.Errorf("lease %s/%s: %w", c.Namespace, c.Name, err)
	}
	for ctx.Err() == nil {
		le.Run(ctx) // returns when the lease is lost or ctx ends
	}
	return nil
}
