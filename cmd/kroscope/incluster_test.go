package main

import (
	"testing"

	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

func TestClusterContext(t *testing.T) {
	pod := map[string]string{"KUBERNETES_SERVICE_HOST": "10.96.0.1", "KUBERNETES_SERVICE_PORT": "443"}
	withContexts := clientcmdapi.Config{CurrentContext: "kind-kind", Contexts: map[string]*clientcmdapi.Context{"kind-kind": {}}}
	cases := []struct {
		name   string
		raw    clientcmdapi.Config
		flag   string
		server string
		env    map[string]string
		want   string
	}{
		{"kubeconfig's current context", withContexts, "", "https://127.0.0.1:6443", nil, "kind-kind"},
		{"--context wins", withContexts, "prod", "https://127.0.0.1:6443", nil, "prod"},
		{"in a Pod, no kubeconfig", clientcmdapi.Config{}, "", "https://10.96.0.1:443", pod, InClusterContext},
		{"IPv6 service host", clientcmdapi.Config{}, "", "https://[fd00::1]:443", map[string]string{"KUBERNETES_SERVICE_HOST": "fd00::1", "KUBERNETES_SERVICE_PORT": "443"}, InClusterContext},
		{"in a Pod with a kubeconfig", withContexts, "", "https://10.96.0.1:443", pod, "kind-kind"},
		{"--server elsewhere, in a Pod", clientcmdapi.Config{}, "", "https://example.test:6443", pod, ""},
		{"no service env", clientcmdapi.Config{}, "", "https://10.96.0.1:443", nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := clusterContext(c.raw, c.flag, c.server, func(k string) string { return c.env[k] })
			if got != c.want {
				t.Errorf("clusterContext = %q, want %q", got, c.want)
			}
		})
	}
}
