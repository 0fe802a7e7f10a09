// Package metrics holds the engine's Prometheus metrics, registered on
// controller-runtime's registry (where the reconciler's impersonation metrics
// and client-go's work queue metrics also live), and the HTTP server that
// exposes them.
package metrics

import (
	"cmp"
	"context"
	"crypto/tls"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"time"

	"k8s.io/client-go/rest"
	certutil "k8s.io/client-go/util/cert"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	// Imported for its side effect: it installs controller-runtime's
	// workqueue metrics provider, so the engine's named queue reports
	// depth, adds, latency and retries on the same registry.
	_ "sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/kroscope/kroscope/engine/httpserve"
)

var (
	// ReconcileTotal counts reconciles by instance resource and result
	// (success, error, requeue, requeue_after, no_requeue).
	ReconcileTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kroscope_reconcile_total",
		Help: "Reconciles by instance resource and result.",
	}, []string{"resource", "result"})
	// ReconcileDuration is how long reconciles take.
	ReconcileDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "kroscope_reconcile_duration_seconds",
		Help:    "Duration of one instance reconcile.",
		Buckets: []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10},
	}, []string{"resource"})
	// WatchEvents counts informer events by watch and type.
	WatchEvents = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kroscope_watch_events_total",
		Help: "Watch events received, by watch and event type.",
	}, []string{"watch", "type"})
	// WatchErrors counts watch failures by watch.
	WatchErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "kroscope_watch_errors_total",
		Help: "Watch errors, by watch.",
	}, []string{"watch"})
	// Watches is the number of running informers.
	Watches = gauge("kroscope_watches", "Informers currently running.")
	// APIErrors counts failed API requests (transport errors, 429 and 5xx).
	APIErrors = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "kroscope_api_errors_total",
		Help: "API requests that failed with a transport error, 429 or 5xx.",
	})
	// QueueDepth is how many instances wait in the work queue.
	QueueDepth = gauge("kroscope_queue_depth", "Instances waiting in the work queue.")
	// InFlight is how many reconciles are running.
	InFlight = gauge("kroscope_reconciles_in_flight", "Reconciles running now.")
	// Graphs is the number of graphs served.
	Graphs = gauge("kroscope_graphs_served", "ResourceGraphDefinitions whose instances are being reconciled.")
)

// gauge is a Gauge named name with help.
func gauge(name, help string) prometheus.Gauge {
	return prometheus.NewGauge(prometheus.GaugeOpts{Name: name, Help: help})
}

func init() {
	ctrlmetrics.Registry.MustRegister(ReconcileTotal, ReconcileDuration, WatchEvents, WatchErrors, Watches, APIErrors, Graphs, QueueDepth, InFlight)
	// The process's own memory and CPU (go_memstats_*, go_*, process_*).
	// Registering is refused only when they already are (controller-runtime
	// registers the same collectors when its manager package is linked in).
	_ = ctrlmetrics.Registry.Register(collectors.NewGoCollector())
	_ = ctrlmetrics.Registry.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
}

// Serve serves the registry at addr (/metrics) until ctx is done. It
// returns once the listener is bound, so a bad address is reported at start.
// With auth set, it serves HTTPS (a self-signed certificate made at start)
// and only to a client whose bearer token the API server of auth
// authenticates (TokenReview) and authorizes for `get` on the non-resource
// URL /metrics (SubjectAccessReview): controller-runtime's secure metrics
// filter. Without it, plain HTTP to anyone who reaches addr: bind it to
// 127.0.0.1.
func Serve(ctx context.Context, addr string, auth *rest.Config) (net.Addr, error) {
	var handler http.Handler = promhttp.HandlerFor(ctrlmetrics.Registry, promhttp.HandlerOpts{})
	var tlsConfig *tls.Config
	if auth != nil {
		var err error
		if handler, err = authenticated(auth, handler); err != nil {
			return nil, err
		}
		if tlsConfig, err = selfSigned(); err != nil {
			return nil, err
		}
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	if tlsConfig != nil {
		ln = tls.NewListener(ln, tlsConfig)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", handler)
	// Handshake failures (a plain-HTTP scraper, a port scan) are not the
	// operator's log lines.
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ErrorLog: log.New(io.Discard, "", 0)}
	return httpserve.Until(ctx, srv, ln), nil
}

// selfSigned is a TLS configuration with a certificate made now: the
// scraper authenticates to kroscope with its token; kroscope's identity is
// the Pod's (Prometheus scrapes Pod IPs with insecure_skip_verify, or
// mount a certificate and serve it through a proxy).
func selfSigned() (*tls.Config, error) {
	host, _ := os.Hostname()
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey(cmp.Or(host, "kroscope"), nil, nil)
	if err != nil {
		return nil, err
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return nil, err
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}, nil
}
