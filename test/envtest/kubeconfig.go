package envtest

import (
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// WriteKubeconfig saves cfg as a kubeconfig file at path (context
// "envtest"), for processes the tests start: kroscope, kro, kubectl.
func WriteKubeconfig(cfg *rest.Config, path string) error {
	c := clientcmdapi.NewConfig()
	c.Clusters["envtest"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData, InsecureSkipTLSVerify: cfg.Insecure}
	c.AuthInfos["admin"] = &clientcmdapi.AuthInfo{ClientCertificateData: cfg.CertData, ClientKeyData: cfg.KeyData,
		Token: cfg.BearerToken, Username: cfg.Username, Password: cfg.Password,
		// A config that impersonates someone (a test telling processes
		// apart in the API server's audit log) keeps doing so.
		Impersonate: cfg.Impersonate.UserName, ImpersonateGroups: cfg.Impersonate.Groups}
	c.Contexts["envtest"] = &clientcmdapi.Context{Cluster: "envtest", AuthInfo: "admin"}
	c.CurrentContext = "envtest"
	return clientcmd.WriteToFile(*c, path)
}

// Kubeconfig writes cfg to a kubeconfig file in the test's temporary
// folder and returns its path.
func Kubeconfig(t testing.TB, cfg *rest.Config) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "kubeconfig")
	if err := WriteKubeconfig(cfg, p); err != nil {
		t.Fatal(err)
	}
	return p
}

// IsAccessReview reports whether a request path is a SelfSubjectAccessReview
// or SelfSubjectReview: POSTs that store nothing, which tests counting a
// process's writes leave out.
func IsAccessReview(path string) bool {
	return strings.HasPrefix(path, "/apis/authorization.k8s.io/") || strings.HasPrefix(path, "/apis/authentication.k8s.io/")
}
