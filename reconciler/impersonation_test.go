package reconciler

import (
	"errors"
	"testing"

	"github.com/go-logr/logr"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/kroscope/kroscope/reconciler/client"
)

func TestExecutionClient(t *testing.T) {
	calls := map[string]int{}
	cs := client.NewSetFromClients(client.Clients{Impersonate: func(user string) (*client.Set, error) {
		calls[user]++
		if user == "system:serviceaccount:broken:sa" {
			return nil, errors.New("dial failure")
		}
		return client.NewSetFromClients(client.Clients{}), nil
	}})
	ctrl := func(sas map[string]string) *Controller {
		return NewController(logr.Discard(), ReconcileConfig{}, unitController(t).gvr, unitController(t).rg, cs, sas, nil)
	}

	if got, sa, err := ctrl(nil).executionClient("a"); err != nil || got != cs || sa != "" {
		t.Errorf("no service accounts: %v %q %v, want the own client", got, sa, err)
	}

	c := ctrl(map[string]string{"team": "deployer", "*": "fallback"})
	got, sa, err := c.executionClient("team")
	if err != nil || sa != "deployer" || got.User() != "system:serviceaccount:team:deployer" {
		t.Errorf("namespace key: %q %q %v", got.User(), sa, err)
	}
	got2, _, _ := c.executionClient("team")
	if got2 != got || calls["system:serviceaccount:team:deployer"] != 1 {
		t.Errorf("impersonated clients are not cached: %d builds", calls["system:serviceaccount:team:deployer"])
	}
	if got, sa, _ := c.executionClient("other"); sa != "fallback" || got.User() != "system:serviceaccount:other:fallback" {
		t.Errorf("fallback: %q %q", got.User(), sa)
	}
	before := counterValue(t, impersonationTotal.WithLabelValues("x", "fallback", resultSuccess))
	if _, _, err := c.executionClient("x"); err != nil {
		t.Fatal(err)
	}
	if counterValue(t, impersonationTotal.WithLabelValues("x", "fallback", resultSuccess)) != before+1 {
		t.Error("result=success not counted")
	}

	d := ctrl(map[string]string{"team": "deployer"})
	base := counterValue(t, impersonationTotal.WithLabelValues("other", "", resultDefault))
	if got, _, err := d.executionClient("other"); err != nil || got != cs {
		t.Errorf("no matching key: want the own client, got %v %v", got, err)
	}
	if counterValue(t, impersonationTotal.WithLabelValues("other", "", resultDefault)) != base+1 {
		t.Error("result=default not counted")
	}

	bad := ctrl(map[string]string{"*": "Not_Valid"})
	inv := counterValue(t, impersonationErrors.WithLabelValues("ns", "Not_Valid", errTypeInvalidSA))
	if _, _, err := bad.executionClient("ns"); err == nil {
		t.Error("an invalid ServiceAccount name was accepted")
	}
	if counterValue(t, impersonationErrors.WithLabelValues("ns", "Not_Valid", errTypeInvalidSA)) != inv+1 {
		t.Error("invalid_sa not counted")
	}

	broken := ctrl(map[string]string{"*": "sa"})
	cc := counterValue(t, impersonationErrors.WithLabelValues("broken", "sa", errTypeClientCreate))
	if _, _, err := broken.executionClient("broken"); err == nil {
		t.Error("impersonation failure not reported")
	}
	if counterValue(t, impersonationErrors.WithLabelValues("broken", "sa", errTypeClientCreate)) != cc+1 {
		t.Error("client_create not counted")
	}
	var m dto.Metric
	if err := impersonationDuration.WithLabelValues("team", "deployer").(prometheus.Histogram).Write(&m); err != nil || m.GetHistogram().GetSampleCount() == 0 {
		t.Errorf("no duration observed (%v)", err)
	}
}

func counterValue(t *testing.T, c prometheus.Counter) float64 {
	t.Helper()
	var m dto.Metric
	if err := c.Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}
