package controlplane

import (
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
)

// Binaries are the paths of the control plane's programs.
type Binaries struct {
	Etcd, APIServer, Scheduler, ControllerManager string
}

// KubernetesVersion is the release the binaries report and reproduce.
const KubernetesVersion = "v1.36.3"

// versionFlags stamp the Kubernetes binaries with their release, as the
// release build does; without them they report v0.0.0-master.
var versionFlags = "-X k8s.io/component-base/version.gitVersion=" + KubernetesVersion +
	" -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=36"

// programs are the main packages built, by binary name.
var programs = []struct{ name, pkg, ldflags string }{
	{"etcd", "go.etcd.io/etcd/server/v3", ""},
	{"kube-apiserver", "k8s.io/kubernetes/cmd/kube-apiserver", versionFlags},
	{"kube-scheduler", "k8s.io/kubernetes/cmd/kube-scheduler", versionFlags},
	{"kube-controller-manager", "k8s.io/kubernetes/cmd/kube-controller-manager", versionFlags},
}

// Build returns the control plane's binaries, building them from the
// module proxy with moduleDir's go.mod (the hack/e2e module) unless a
// build for the same go.mod, go.sum and Go version is cached. The cache
// is $KUBESCHED_E2E_CACHE, else kubesched-e2e in the user's cache
// directory. A cold build takes minutes; progress goes to log.
func Build(ctx context.Context, moduleDir string, log io.Writer) (Binaries, error) {
	key, err := buildKey(moduleDir)
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
		if p.ldflags != "" {
			args = append(args, "-ldflags", p.ldflags)
		}
		cmd := exec.CommandContext(ctx, "go", append(args, p.pkg)...)
		cmd.Dir = moduleDir
		cmd.Stdout, cmd.Stderr = log, log
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

// buildKey hashes what decides the binaries: the module's requirements
// and the Go toolchain.
func buildKey(moduleDir string) (string, error) {
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
	h.Write([]byte(runtime.GOOS + "/" + runtime.GOARCH + " " + versionFlags))
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
