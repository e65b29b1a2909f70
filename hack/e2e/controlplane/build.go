package controlplane

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
)

// Binaries are the paths of the control plane's programs.
type Binaries struct {
	Etcd, APIServer, Scheduler, ControllerManager string
}

// programs are the main packages built, by binary name; the Kubernetes
// ones are stamped with their release.
var programs = []struct {
	name, pkg string
	stamped   bool
}{
	{"etcd", "go.etcd.io/etcd/server/v3", false},
	{"kube-apiserver", "k8s.io/kubernetes/cmd/kube-apiserver", true},
	{"kube-scheduler", "k8s.io/kubernetes/cmd/kube-scheduler", true},
	{"kube-controller-manager", "k8s.io/kubernetes/cmd/kube-controller-manager", true},
}

// ModuleVersion returns the version of module that moduleDir's go.mod
// selects, such as the release of k8s.io/kubernetes: go.mod is the one place
// the control plane's versions are written.
func ModuleVersion(ctx context.Context, moduleDir, module string) (string, error) {
	cmd := exec.CommandContext(ctx, "go", "list", "-m", "-f", "{{.Version}}", module)
	cmd.Dir = moduleDir
	out, err := cmd.Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			err = fmt.Errorf("%w: %s", err, bytes.TrimSpace(exit.Stderr))
		}
		return "", fmt.Errorf("go list -m %s: %w", module, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// versionFlags stamp the Kubernetes binaries with release, as the release
// build does; without them they report v0.0.0-master.
func versionFlags(release string) (string, error) {
	parts := strings.SplitN(strings.TrimPrefix(release, "v"), ".", 3)
	if !strings.HasPrefix(release, "v") || len(parts) != 3 {
		return "", fmt.Errorf("k8s.io/kubernetes %q is not a release version like v1.37.2", release)
	}
	return "-X k8s.io/component-base/version.gitVersion=" + release +
		" -X k8s.io/component-base/version.gitMajor=" + parts[0] +
		" -X k8s.io/component-base/version.gitMinor=" + parts[1], nil
}

// Build returns the control plane's binaries, building them from the
// module proxy with moduleDir's go.mod (the hack/e2e module) unless a
// build for the same go.mod, go.sum and Go version is cached. The
// Kubernetes binaries are stamped with the k8s.io/kubernetes version
// go.mod selects, so their --version and the API server's /version say
// it. The cache is $KUBESCHED_E2E_CACHE, else kubesched-e2e in the
// user's cache directory. A cold build takes minutes, longer than go
// test's default timeout on two cores; progress goes to log.
func Build(ctx context.Context, moduleDir string, log io.Writer) (Binaries, error) {
	release, err := ModuleVersion(ctx, moduleDir, "k8s.io/kubernetes")
	if err != nil {
		return Binaries{}, err
	}
	stamp, err := versionFlags(release)
	if err != nil {
		return Binaries{}, err
	}
	key, err := buildKey(moduleDir, stamp)
	if err != nil {
		return Binaries{}, err
	}
	root := os.Getenv("KUBESCHED_E2E_CACHE")
	if root == "" {
		cache, err := os.UserCacheDir()
		if err != nil {
			return Binaries{}, fmt.Errorf("no cache directory for the control plane's binaries (set KUBESCHED_E2E_CACHE): %w", err)
		}
		root = filepath.Join(cache, "kubesched-e2e")
	}
	dir := filepath.Join(root, key)
	bins := Binaries{
		Etcd:      filepath.Join(dir, "etcd"),
		APIServer: filepath.Join(dir, "kube-apiserver"),
		Scheduler: filepath.Join(dir, "kube-scheduler"),
		// Built with the others, started only by tests that need it.
		ControllerManager: filepath.Join(dir, "kube-controller-manager"),
	}
	if allExist(bins) {
		return bins, nil
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return Binaries{}, err
	}
	// Build beside the cache entry and rename, so that an interrupted
	// build never leaves a half-filled entry behind.
	tmp, err := os.MkdirTemp(root, key+".building-")
	if err != nil {
		return Binaries{}, err
	}
	defer os.RemoveAll(tmp)
	for _, p := range programs {
		fmt.Fprintf(log, "building %s from %s (cached after the first time)\n", p.name, p.pkg)
		args := []string{"build", "-trimpath", "-o", filepath.Join(tmp, p.name)}
		if p.stamped {
			args = append(args, "-ldflags", stamp)
		}
		cmd := exec.CommandContext(ctx, "go", append(args, p.pkg)...)
		cmd.Dir = moduleDir
		cmd.Stdout, cmd.Stderr = log, log
		// A test binary killed for its timeout must not leave a build
		// running on, writing into the cache.
		cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
		if err := cmd.Run(); err != nil {
			return Binaries{}, fmt.Errorf("building %s: %w", p.name, err)
		}
	}
	if err := os.Rename(tmp, dir); err != nil {
		if allExist(bins) {
			// Another build got there first.
			return bins, nil
		}
		return Binaries{}, err
	}
	return bins, nil
}

// buildKey hashes what decides the binaries: the module's requirements,
// the Go toolchain and the version stamp.
func buildKey(moduleDir, stamp string) (string, error) {
	h := sha256.New()
	for _, f := range []string{"go.mod", "go.sum"} {
		b, err := os.ReadFile(filepath.Join(moduleDir, f))
		if err != nil {
			return "", fmt.Errorf("reading the e2e module's %s: %w", f, err)
		}
		h.Write(b)
	}
	out, err := exec.Command("go", "env", "GOVERSION").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOVERSION: %w", err)
	}
	h.Write(out)
	h.Write([]byte(runtime.GOOS + "/" + runtime.GOARCH + " " + stamp))
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

func allExist(b Binaries) bool {
	for _, p := range []string{b.Etcd, b.APIServer, b.Scheduler, b.ControllerManager} {
		if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) || err != nil {
			return false
		}
	}
	return true
}
