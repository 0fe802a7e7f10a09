package envtest

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// ServerRequests is the API server's own count of the requests it served
// (apiserver_request_total), by verb and resource, read from its /metrics:
// what reached the server, whoever sent it.
type ServerRequests map[string]float64

// writeVerbs are the verbs of apiserver_request_total that change stored
// objects.
var writeVerbs = map[string]bool{"POST": true, "CREATE": true, "PUT": true, "UPDATE": true, "PATCH": true,
	"APPLY": true, "DELETE": true, "DELETECOLLECTION": true}

// ServerRequests reads the API server's request counters now.
func (e *Env) ServerRequests(t testing.TB) ServerRequests {
	t.Helper()
	body, err := e.kube.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
	if err != nil {
		t.Fatalf("reading the API server's /metrics: %v", err)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	families, err := p.TextToMetricFamilies(strings.NewReader(string(body)))
	if err != nil {
		t.Fatalf("parsing the API server's /metrics: %v", err)
	}
	out := ServerRequests{}
	fam := families["apiserver_request_total"]
	if fam == nil {
		t.Fatal("the API server's /metrics has no apiserver_request_total")
	}
	for _, m := range fam.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		key := labels["verb"] + " " + labels["resource"]
		if sub := labels["subresource"]; sub != "" {
			key += "/" + sub
		}
		out[key] += m.GetCounter().GetValue()
	}
	return out
}

// WritesSince is the writes the server counted between since and s, by
// "VERB resource[/subresource]", leaving out the resources skip names
// (say "leases") and access reviews (POSTs that store nothing: they ask
// what the caller may do); only the keys that grew.
func (s ServerRequests) WritesSince(since ServerRequests, skip ...string) map[string]float64 {
	out := map[string]float64{}
	for k, v := range s {
		verb, res, _ := strings.Cut(k, " ")
		r := strings.SplitN(res, "/", 2)[0]
		if !writeVerbs[verb] || contains(skip, r) || strings.HasSuffix(r, "reviews") {
			continue
		}
		if d := v - since[k]; d > 0 {
			out[k] = d
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// String lists the counts, for failure messages.
func (s ServerRequests) String() string { return fmt.Sprint(map[string]float64(s)) }
