package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/kubesched/kubesched/hack/e2e/controlplane"
)

// The suite runs only when KUBESCHED_E2E=1 (the README's test command and
// .ci/run set it): it builds etcd, kube-apiserver and kube-scheduler,
// which takes minutes the first time, and starts them.
var (
	binaries   controlplane.Binaries
	controller string // the examples/controller binary
	plugin     string // the cmd/kubectl-kubesched binary
)

func TestMain(m *testing.M) {
	if os.Getenv("KUBESCHED_E2E") != "1" {
		fmt.Println("e2e: skipped; set KUBESCHED_E2E=1 to build the control plane from the module proxy and run the suite")
		os.Exit(0)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	var err error
	binaries, err = controlplane.Build(ctx, ".", os.Stderr)
	if err == nil {
		controller, err = buildController(ctx)
	}
	if err == nil {
		plugin, err = buildFrom(ctx, filepath.Join("..", "..", "cmd", "kubectl-kubesched"), "kubectl-kubesched")
	}
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(filepath.Dir(controller))
	os.RemoveAll(filepath.Dir(plugin))
	os.Exit(code)
}

// buildController builds examples/controller, kubesched's scheduler, from
// this checkout.
func buildController(ctx context.Context) (string, error) {
	return buildFrom(ctx, filepath.Join("..", "..", "examples", "controller"), "controller")
}

// buildFrom builds the program in dir, a module of this checkout, into a
// temporary directory, as name.
func buildFrom(ctx context.Context, dir, name string) (string, error) {
	tmp, err := os.MkdirTemp("", "kubesched-e2e-"+name+"-")
	if err != nil {
		return "", err
	}
	bin := filepath.Join(tmp, name)
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, ".")
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("building %s: %w", dir, err)
	}
	return bin, nil
}
