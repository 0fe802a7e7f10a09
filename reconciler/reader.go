package reconciler

import (
	"github.com/kroscope/kroscope/reconciler/client"
)

// Reader answers a reconcile's reads from what a watch has already seen, so
// a converging instance does not ask the API server for objects whose state
// is known, and is told the outcome of every read and write. The engine
// implements it over its informers; without one every read is a request.
// Only the reconcile's client.Objects calls it (see client.Cache).
type Reader = client.Cache

// newObjects builds the client a run reads and writes through: cached by
// the Reader, except when it impersonates a ServiceAccount, whose reads
// must be checked by the API server as that identity, and in observe mode,
// which must show the cluster as it is.
func newObjects(cs *client.Set, sa string, opts runOptions) *client.Objects {
	if sa != "" || opts.observe || opts.Reader == nil {
		return client.NewObjects(cs, nil)
	}
	return client.NewObjects(cs, opts.Reader)
}
