package envtest

import (
	"context"
	"os"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

func TestMain(m *testing.M) { os.Exit(Run(m)) }

// TestRestartAPIServer checks that the API server can be stopped and started
// again with its data intact, which the engine's fault tests rely on.
func TestRestartAPIServer(t *testing.T) {
	env := Start(t)
	ns := env.Namespace(t)
	env.RestartAPIServer(t, 2*time.Second)
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := env.Kubernetes().CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
		return err == nil, nil
	})
	if err != nil {
		t.Fatalf("namespace %s not readable after restart: %v", ns, err)
	}
}
