package e2e

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/kubesched/kubesched/hack/e2e/controlplane"
)

// TestComponentsReportTheVersionsGoModPins checks that what runs is what
// this module's go.mod pins: every Kubernetes binary's --version and the
// API server's ServerVersion name the k8s.io/kubernetes release (a build
// without the version stamp says v0.0.0-master), and etcd's --version
// names go.etcd.io/etcd/server/v3's.
func TestComponentsReportTheVersionsGoModPins(t *testing.T) {
	ctx := context.Background()
	release, err := controlplane.ModuleVersion(ctx, ".", "k8s.io/kubernetes")
	if err != nil {
		t.Fatal(err)
	}
	etcd, err := controlplane.ModuleVersion(ctx, ".", "go.etcd.io/etcd/server/v3")
	if err != nil {
		t.Fatal(err)
	}
	components := []struct{ name, path, want string }{
		{"etcd", binaries.Etcd, "etcd Version: " + strings.TrimPrefix(etcd, "v")},
		{"kube-apiserver", binaries.APIServer, "Kubernetes " + release},
		{"kube-scheduler", binaries.Scheduler, "Kubernetes " + release},
		{"kube-controller-manager", binaries.ControllerManager, "Kubernetes " + release},
	}
	for _, b := range components {
		t.Run(b.name+" --version", func(t *testing.T) {
			out, err := exec.CommandContext(ctx, b.path, "--version").CombinedOutput()
			if err != nil {
				t.Fatalf("%s --version: %v\n%s", b.name, err, out)
			}
			if first, _, _ := strings.Cut(string(out), "\n"); first != b.want {
				t.Errorf("%s --version says %q, want %q", b.name, first, b.want)
			}
		})
	}
	t.Run("ServerVersion", func(t *testing.T) {
		_, client := startControlPlaneOpts(t, ctx, false)
		info, err := client.Discovery().ServerVersion()
		if err != nil {
			t.Fatal(err)
		}
		major, rest, _ := strings.Cut(strings.TrimPrefix(release, "v"), ".")
		minor, _, _ := strings.Cut(rest, ".")
		if info.GitVersion != release || info.Major != major || info.Minor != minor {
			t.Errorf("the API server reports %s (major %q, minor %q), want %s (major %q, minor %q)",
				info.GitVersion, info.Major, info.Minor, release, major, minor)
		}
	})
}
