package main

import (
	"net"

	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// InClusterContext is what the status line and the logs show for the
// cluster when kroscope runs in a Pod with its ServiceAccount.
const InClusterContext = "in-cluster"

// clusterContext names the connection for the status line: the --context
// flag, else the kubeconfig's current context, else "in-cluster" when the
// config came from the Pod's ServiceAccount. clientcmd's loader makes
// that choice itself (no kubeconfig found, no overriding flag, and
// KUBERNETES_SERVICE_HOST/PORT and the token file present); here it is
// recognised from its result: no kubeconfig contexts, and the server is the
// one KUBERNETES_SERVICE_HOST/PORT name.
func clusterContext(raw clientcmdapi.Config, contextFlag, server string, getenv func(string) string) string {
	if contextFlag != "" {
		return contextFlag
	}
	if raw.CurrentContext != "" {
		return raw.CurrentContext
	}
	host, port := getenv("KUBERNETES_SERVICE_HOST"), getenv("KUBERNETES_SERVICE_PORT")
	if len(raw.Contexts) == 0 && host != "" && port != "" && server == "https://"+net.JoinHostPort(host, port) {
		return InClusterContext
	}
	return ""
}
