package e2e

import (
	"context"
	"crypto/tls"
	"io"
	"net/http"
	"strings"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kroscope/kroscope/engine/metrics"
)

// TestMetricsSecure: with --metrics-secure, /metrics answers only a
// client whose token the API server authenticates and authorizes for GET
// /metrics: no token 401, a garbage token refused, the token of a
// ServiceAccount granted nothing 403, the scraper's (a ClusterRole with
// nonResourceURLs /metrics) 200 with the metrics.
func TestMetricsSecure(t *testing.T) {
	r := newEngRig(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr, err := metrics.Serve(ctx, "127.0.0.1:0", r.cfg)
	if err != nil {
		t.Fatal(err)
	}
	kube := r.env.Kubernetes()
	token := func(sa string) string {
		if _, err := kube.CoreV1().ServiceAccounts(r.ns).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: sa}}, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		tr, err := kube.CoreV1().ServiceAccounts(r.ns).CreateToken(ctx, sa, &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("TokenRequest for %s: %v", sa, err)
		}
		return tr.Status.Token
	}
	name := "metrics-scraper-" + r.ns
	if _, err := kube.RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name},
		Rules: []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := kube.RbacV1().ClusterRoleBindings().Create(ctx, &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects: []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: "scraper", Namespace: r.ns}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = kube.RbacV1().ClusterRoleBindings().Delete(context.Background(), name, metav1.DeleteOptions{})
		_ = kube.RbacV1().ClusterRoles().Delete(context.Background(), name, metav1.DeleteOptions{})
	})
	scraper, nobody := token("scraper"), token("nobody")

	// The certificate is self-signed: the client authenticates, not the server.
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}} //nolint:gosec // a test of the token check
	get := func(tok string) (int, string) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+addr.String()+"/metrics", nil)
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, c := range []struct {
		who, token string
		want       int
	}{{"no token", "", http.StatusUnauthorized},
		{"a ServiceAccount granted nothing", nobody, http.StatusForbidden}, {"the scraper", scraper, http.StatusOK}} {
		code, body := get(c.token)
		if code != c.want {
			t.Errorf("%s: /metrics answered %d, want %d: %.300s", c.who, code, c.want, body)
		}
		if leaked := strings.Contains(body, "kroscope_queue_depth"); leaked != (c.want == http.StatusOK) {
			t.Errorf("%s: the metrics are in the answer: %v", c.who, leaked)
		}
	}
	// A token the API server cannot read: refused (the filter answers 500
	// "Authentication failed" when the token review errs).
	if code, body := get("not-a-token"); code < 400 || strings.Contains(body, "kroscope_queue_depth") {
		t.Errorf("a garbage token: /metrics answered %d: %.300s", code, body)
	}
	// Plain HTTP on the same port is not served.
	if resp, err := http.Get("http://" + addr.String() + "/metrics"); err == nil {
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if strings.Contains(string(b), "kroscope_queue_depth") {
			t.Error("plain HTTP served the metrics")
		}
	}
}
