package reconciler

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/kroscope/kroscope/reconciler/client"
	"github.com/kroscope/kroscope/reconciler/metadata"
)

// Error types of MetricImpersonationErrors.
const (
	errTypePermissions  = "permissions"
	errTypeConfigCreate = "config_create"
	errTypeClientCreate = "client_create"
	errTypeInvalidSA    = "invalid_sa"
)

// Results of MetricImpersonationTotal.
const (
	resultSuccess = "success"
	resultDefault = "default"
)

// defaultServiceAccountKey is the fallback key of defaultServiceAccounts.
const defaultServiceAccountKey = "*"

var (
	impersonationTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: MetricImpersonationTotal,
		Help: "Total number of impersonation requests made by the controller",
	}, []string{"namespace", "service_account", "result"})
	impersonationErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: MetricImpersonationErrors,
		Help: "Total number of errors encountered while making impersonation requests",
	}, []string{"namespace", "service_account", "error_type"})
	impersonationDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    MetricImpersonationDuration,
		Help:    "Duration of impersonation operations in seconds",
		Buckets: []float64{0.01, 0.1, 0.5, 1, 2, 5},
	}, []string{"namespace", "service_account"})

	registerOnce sync.Once
)

// registerMetrics registers the impersonation metrics on controller-runtime's
// registry, once per process however many controllers exist.
func registerMetrics() {
	registerOnce.Do(func() {
		for _, c := range []prometheus.Collector{impersonationTotal, impersonationErrors, impersonationDuration} {
			if err := metrics.Registry.Register(c); err != nil {
				var are prometheus.AlreadyRegisteredError
				if !errors.As(err, &are) {
					panic(fmt.Sprintf("registering %T: %v", c, err)) // programming error: names clash
				}
			}
		}
	})
}

// executionClient picks the client that does everything for an instance in
// namespace ns: the ServiceAccount configured for ns, else the "*" one,
// else the controller's own identity. Impersonating sets are cached by the
// client Set, so a reconcile does not rebuild connections.
func (c *Controller) executionClient(ns string) (*client.Set, string, error) {
	sas := c.defaultServiceAccounts
	if len(sas) == 0 {
		return c.clientSet, "", nil
	}
	sa, ok := sas[ns]
	if !ok || sa == "" {
		sa = sas[defaultServiceAccountKey]
	}
	if sa == "" {
		impersonationTotal.WithLabelValues(ns, "", resultDefault).Inc()
		return c.clientSet, "", nil
	}
	if ns == "" {
		impersonationErrors.WithLabelValues(ns, sa, errTypeInvalidSA).Inc()
		return nil, sa, fmt.Errorf("cannot impersonate ServiceAccount %q for a cluster-scoped instance: a ServiceAccount needs a namespace", sa)
	}
	if errs := validation.IsDNS1123Subdomain(sa); len(errs) > 0 {
		impersonationErrors.WithLabelValues(ns, sa, errTypeInvalidSA).Inc()
		return nil, sa, fmt.Errorf("defaultServiceAccounts: %q is not a valid ServiceAccount name: %s", sa, strings.Join(errs, "; "))
	}
	start := time.Now()
	cs, err := c.clientSet.WithImpersonation(metadata.ServiceAccountUser(ns, sa))
	impersonationDuration.WithLabelValues(ns, sa).Observe(time.Since(start).Seconds())
	if err != nil {
		typ := errTypeClientCreate
		if strings.Contains(err.Error(), "not supported") || strings.Contains(err.Error(), "config") {
			typ = errTypeConfigCreate
		}
		impersonationErrors.WithLabelValues(ns, sa, typ).Inc()
		return nil, sa, fmt.Errorf("impersonating ServiceAccount %s/%s: %w", ns, sa, err)
	}
	impersonationTotal.WithLabelValues(ns, sa, resultSuccess).Inc()
	return cs, sa, nil
}
