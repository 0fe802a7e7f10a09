package engine

import (
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/util/flowcontrol"

	"github.com/kroscope/kroscope/reconciler/client"
)

// client-go limits a config that sets no limit to 5 requests a second; the
// engine's own requests (the Lease, a graph's access reviews, reconciles)
// must not wait on it, but a limit the caller set stays.
func TestUnthrottled(t *testing.T) {
	limiter := flowcontrol.NewTokenBucketRateLimiter(1, 1)
	for _, tc := range []struct {
		name    string
		cfg     *rest.Config
		wantQPS float32
		same    bool
	}{
		{"no limit set", &rest.Config{Host: "https://x"}, DefaultClientQPS, false},
		{"the caller's QPS", &rest.Config{Host: "https://x", QPS: 50, Burst: 100}, 50, true},
		{"the caller's limiter", &rest.Config{Host: "https://x", RateLimiter: limiter}, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, err := client.NewSet(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			cfg := rest.CopyConfig(tc.cfg)
			if lifted := Unthrottle(cfg); lifted == tc.same || cfg.QPS != tc.wantQPS {
				t.Errorf("Unthrottle: lifted %v, QPS %v; want %v, %v", lifted, cfg.QPS, !tc.same, tc.wantQPS)
			}
			got, err := unthrottled(base)
			if err != nil {
				t.Fatal(err)
			}
			if (got == base) != tc.same {
				t.Errorf("rebuilt = %v, want %v", got != base, !tc.same)
			}
			if q := got.Config().QPS; q != tc.wantQPS {
				t.Errorf("QPS = %v, want %v", q, tc.wantQPS)
			}
		})
	}
	demo := client.NewSetFromClients(client.Clients{})
	if got, _ := unthrottled(demo); got != demo {
		t.Error("a set without a config (the demo's) was rebuilt")
	}
}
