package kubesched_test

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// consumerMain is a user's program: it imports kubesched and client-go, so
// the module's build list holds the k8s.io modules of both.
const consumerMain = `package main

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubesched/kubesched"
)

func main() {
	if _, err := kubernetes.NewForConfig(&rest.Config{Host: "https://127.0.0.1:6443"}); err != nil {
		panic(err)
	}
	fmt.Println(kubesched.Schedule(context.Background(), &v1.Pod{}, nil))
}
`

// TestAModuleOnTheNewestClientGoBuildsKubesched builds, as a user would, a
// module that needs kubesched and the newest client-go release (or the
// k8s.io/api release kubesched requires, if that is newer). Minimal version
// selection then moves every k8s.io module client-go requires to its
// version, while the k8s.io modules only kubesched requires stay at
// kubesched's: when kubesched lags a Kubernetes release, a package such as
// k8s.io/dynamic-resource-allocation/resourceclaim can import an API
// package the newer k8s.io/api no longer has, and go mod tidy fails. The
// root go.mod never requires client-go, so only a consumer module shows it.
func TestAModuleOnTheNewestClientGoBuildsKubesched(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped in -short mode: builds a module on client-go, fetched from the Go module proxy")
	}
	t.Parallel()
	checkout, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	goVersion := goModField(t, "go.mod", "go")
	api := goModField(t, "go.mod", "k8s.io/api")
	dir := t.TempDir()
	goMod := "module example.com/consumer\n\ngo " + goVersion + "\n\n" +
		"require (\n\tgithub.com/kubesched/kubesched v0.0.0\n\tk8s.io/client-go " + api + "\n)\n\n" +
		"replace github.com/kubesched/kubesched => " + checkout + "\n"
	for name, text := range map[string]string{"go.mod": goMod, "main.go": consumerMain} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	goCmd := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		// The user's environment (module cache, proxy) but a module of
		// its own: -mod=mod lets the go command fill in go.mod and go.sum.
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOWORK=off")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("go %s in a module requiring kubesched and k8s.io/client-go: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	// @upgrade picks the newest release, but never below kubesched's own.
	goCmd("get", "k8s.io/client-go@upgrade")
	t.Logf("kubesched requires k8s.io/api %s; the consumer builds with k8s.io/client-go %s", api, goCmd("list", "-m", "-f", "{{.Version}}", "k8s.io/client-go"))
	goCmd("mod", "tidy")
	goCmd("build", "./...")
}

// goModField returns the first word after name at the start of a line of
// the go.mod file at path, inside a block or not: the version of a
// requirement ("k8s.io/api"), or of the go directive ("go").
func goModField(t *testing.T, path, name string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lines := bufio.NewScanner(f)
	for lines.Scan() {
		fields := strings.Fields(lines.Text())
		if len(fields) > 0 && fields[0] == "require" {
			fields = fields[1:]
		}
		if len(fields) >= 2 && fields[0] == name {
			return fields[1]
		}
	}
	if err := lines.Err(); err != nil {
		t.Fatal(err)
	}
	t.Fatalf("%s has no line for %s", path, name)
	return ""
}
