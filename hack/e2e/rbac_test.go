package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/kubesched/kubesched/hack/e2e/controlplane"
)

// applyRBAC creates the ServiceAccounts, Roles, ClusterRoles and their
// bindings of the manifest file at path, and nothing else of it.
func applyRBAC(t *testing.T, ctx context.Context, client kubernetes.Interface, path string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range bytes.Split(data, []byte("\n---\n")) {
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			t.Fatal(err)
		}
		var create func() error
		switch meta.Kind {
		case "ServiceAccount":
			var o v1.ServiceAccount
			create = decodeThen(doc, &o, func() error {
				_, err := client.CoreV1().ServiceAccounts(o.Namespace).Create(ctx, &o, metav1.CreateOptions{})
				return err
			})
		case "ClusterRole":
			var o rbacv1.ClusterRole
			create = decodeThen(doc, &o, func() error {
				_, err := client.RbacV1().ClusterRoles().Create(ctx, &o, metav1.CreateOptions{})
				return err
			})
		case "ClusterRoleBinding":
			var o rbacv1.ClusterRoleBinding
			create = decodeThen(doc, &o, func() error {
				_, err := client.RbacV1().ClusterRoleBindings().Create(ctx, &o, metav1.CreateOptions{})
				return err
			})
		case "Role":
			var o rbacv1.Role
			create = decodeThen(doc, &o, func() error {
				_, err := client.RbacV1().Roles(o.Namespace).Create(ctx, &o, metav1.CreateOptions{})
				return err
			})
		case "RoleBinding":
			var o rbacv1.RoleBinding
			create = decodeThen(doc, &o, func() error {
				_, err := client.RbacV1().RoleBindings(o.Namespace).Create(ctx, &o, metav1.CreateOptions{})
				return err
			})
		default:
			continue
		}
		if err := create(); err != nil {
			t.Fatalf("%s: %v", meta.Kind, err)
		}
	}
}

// decodeThen returns a function that decodes doc into o and calls create.
func decodeThen(doc []byte, o any, create func() error) func() error {
	return func() error {
		if err := yaml.UnmarshalStrict(doc, o); err != nil {
			return err
		}
		return create()
	}
}

// TestControllerRunsWithTheRolesItsManifestGrants runs kubesched's
// controller as the ServiceAccount of deploy/controller, bound only by
// that manifest's RBAC objects, with leader election: it takes its Lease,
// binds pods, writes a pending pod's status and Events — and the same
// account is refused what it should not do.
func TestControllerRunsWithTheRolesItsManifestGrants(t *testing.T) {
	ctx := context.Background()
	cp, client := startControlPlaneOpts(t, ctx, false)
	applyRBAC(t, ctx, client, filepath.Join("..", "..", "deploy", "controller", "kubesched.yaml"))
	kubeconfig := serviceAccountKubeconfig(t, ctx, cp.Config, client, "kube-system", "kubesched")
	for i := range 2 {
		if _, err := client.CoreV1().Nodes().Create(ctx, node(fmt.Sprintf("node-%d", i), "2", "4Gi", nil), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	pods := client.CoreV1().Pods(metav1.NamespaceDefault)
	for i := range 5 {
		if _, err := pods.Create(ctx, pod(fmt.Sprintf("fits-%d", i), kubeschedName, "200m", "256Mi"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	big := pod("too-big", kubeschedName, "8", "256Mi")
	big.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse("8")
	if _, err := pods.Create(ctx, big, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// RBAC takes a moment to see the bindings.
	sa := clientFor(t, kubeconfig)
	eventually(t, 30*time.Second, "the ServiceAccount can list pods", func() (bool, error) {
		_, err := sa.CoreV1().Pods(metav1.NamespaceAll).List(ctx, metav1.ListOptions{})
		return err == nil, nil
	})
	ctrl := startControllerAs(t, kubeconfig, "-scheduler-name", kubeschedName,
		"-leader-elect-lease-duration", "3s", "-leader-elect-renew-deadline", "2s", "-leader-elect-retry-period", "250ms")

	eventually(t, time.Minute, "the controller binds the 5 pods that fit", func() (bool, error) {
		return countBound(ctx, pods, kubeschedName) == 5, nil
	})
	eventually(t, 30*time.Second, "the pod that fits nowhere is marked unschedulable", func() (bool, error) {
		p, err := pods.Get(ctx, "too-big", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		c := scheduledCondition(p)
		return c != nil && c.Reason == v1.PodReasonUnschedulable, nil
	})
	eventually(t, 30*time.Second, "Scheduled and FailedScheduling events are recorded", func() (bool, error) {
		list, err := client.EventsV1().Events(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		reasons := map[string]int{}
		for _, e := range list.Items {
			reasons[e.Reason]++
		}
		return reasons["Scheduled"] == 5 && reasons["FailedScheduling"] > 0, nil
	})
	// Taking the Lease creates it; holding it updates it.
	eventually(t, 30*time.Second, "the controller renews the Lease it took", func() (bool, error) {
		lease, err := client.CoordinationV1().Leases("kube-system").Get(ctx, "kubesched", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		s := lease.Spec
		return s.HolderIdentity != nil && *s.HolderIdentity != "" && s.AcquireTime != nil && s.RenewTime != nil &&
			s.RenewTime.Sub(s.AcquireTime.Time) > 2*time.Second, nil
	})
	select {
	case <-ctrl.exited:
		t.Fatalf("the controller exited: %v", ctrl.err)
	default:
	}

	// What the account must not do.
	if err := sa.CoreV1().Nodes().Delete(ctx, "node-0", metav1.DeleteOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("deleting a node: %v, want Forbidden", err)
	}
	if _, err := sa.CoreV1().Secrets("kube-system").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("listing Secrets: %v, want Forbidden", err)
	}
}

// TestExtenderManifestSchedulesWithItsRoles runs deploy/extender as a
// cluster would: kube-scheduler v1.37.2 with the manifest's
// configuration, as the manifest's ServiceAccount bound only by its
// ClusterRoleBindings, and the demo extender beside it with the
// manifest's arguments, on loopback. Only the ports, the files' paths and
// the kubeconfig (in a pod, the ServiceAccount's own) differ. Pods of its
// profile are filtered and ranked by the extender and bound by
// kube-scheduler, with Events — and the account is refused what it
// should not do.
func TestExtenderManifestSchedulesWithItsRoles(t *testing.T) {
	ctx := context.Background()
	cp, client := startControlPlaneOpts(t, ctx, false)
	manifest := filepath.Join("..", "..", "deploy", "extender", "extender.yaml")
	applyRBAC(t, ctx, client, manifest)
	kubeconfig := serviceAccountKubeconfig(t, ctx, cp.Config, client, "kube-system", "kubesched-extender")
	config, scheduler, extender := extenderManifest(t, manifest)

	extenderPort, err := controlplane.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	extenderAddr := fmt.Sprintf("127.0.0.1:%d", extenderPort)
	if !strings.Contains(config, "http://127.0.0.1:8080") {
		t.Fatalf("the manifest's configuration calls no extender at http://127.0.0.1:8080:\n%s", config)
	}
	config = strings.ReplaceAll(config, "http://127.0.0.1:8080", "http://"+extenderAddr)
	var cfg map[string]any
	if err := yaml.Unmarshal([]byte(config), &cfg); err != nil {
		t.Fatal(err)
	}
	cfg["clientConnection"] = map[string]any{"kubeconfig": kubeconfig}
	data, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	configPath := filepath.Join(dir, "scheduler.yaml")
	if err := os.WriteFile(configPath, data, 0o600); err != nil {
		t.Fatal(err)
	}

	bin, err := buildFrom(ctx, filepath.Join("..", "..", "examples", "extender"), "extender")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(filepath.Dir(bin)) })
	healthPort, err := controlplane.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	var args []string
	for _, a := range extender.Args {
		switch {
		case a == "-addr=127.0.0.1:8080":
			a = "-addr=" + extenderAddr
		case strings.HasPrefix(a, "-health-addr="):
			a = fmt.Sprintf("-health-addr=127.0.0.1:%d", healthPort)
		case strings.HasPrefix(a, "-config="):
			a = "-config=" + configPath
		}
		args = append(args, a)
	}
	if !slices.Contains(args, "-addr="+extenderAddr) {
		t.Fatalf("the manifest's extender does not listen on 127.0.0.1:8080: %v", extender.Args)
	}
	if slices.Contains(args, "-bind") {
		t.Fatalf("the manifest's extender serves /bind: %v", extender.Args)
	}
	startProcess(t, "extender", bin, args...)
	eventually(t, time.Minute, "the extender's /healthz answers 200", func() (bool, error) {
		resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/healthz", healthPort))
		if err != nil {
			return false, nil
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})

	schedulerPort, err := controlplane.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	if len(scheduler.Command) == 0 || scheduler.Command[0] != "kube-scheduler" {
		t.Fatalf("the manifest's scheduler container runs %v, want kube-scheduler", scheduler.Command)
	}
	args = nil
	for _, a := range scheduler.Command[1:] {
		if strings.HasPrefix(a, "--config=") {
			a = "--config=" + configPath
		}
		args = append(args, a)
	}
	args = append(args, "--bind-address=127.0.0.1", fmt.Sprintf("--secure-port=%d", schedulerPort), "--cert-dir="+filepath.Join(dir, "certs"))
	startProcess(t, "kube-scheduler", binaries.Scheduler, args...)

	// Nodes a and b carry the extender's label, c does not: the extender
	// filters c out and ranks b (9) above a (3).
	for name, priority := range map[string]string{"node-a": "3", "node-b": "9", "node-c": ""} {
		labels := map[string]string{}
		if priority != "" {
			labels["priority.lixueduan.com"] = priority
		}
		if _, err := client.CoreV1().Nodes().Create(ctx, node(name, "4", "8Gi", labels), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	pods := client.CoreV1().Pods(metav1.NamespaceDefault)
	const profile = "kubesched-extender"
	for i := range 3 {
		if _, err := pods.Create(ctx, pod(fmt.Sprintf("ranked-%d", i), profile, "100m", "128Mi"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 2*time.Minute, "kube-scheduler binds the 3 pods of its profile", func() (bool, error) {
		return countBound(ctx, pods, profile) == 3, nil
	})
	list, err := pods.List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range list.Items {
		if p.Spec.NodeName != "node-b" {
			t.Errorf("pod %s is on %q, want node-b, the node the extender ranks first", p.Name, p.Spec.NodeName)
		}
	}
	eventually(t, 30*time.Second, "kube-scheduler records a Scheduled event per pod", func() (bool, error) {
		events, err := client.EventsV1().Events(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		n := 0
		for _, e := range events.Items {
			if e.Reason == "Scheduled" && e.ReportingController == profile {
				n++
			}
		}
		return n == 3, nil
	})

	sa := clientFor(t, kubeconfig)
	if err := sa.CoreV1().Nodes().Delete(ctx, "node-c", metav1.DeleteOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("deleting a node: %v, want Forbidden", err)
	}
	if _, err := sa.CoreV1().Secrets("kube-system").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("listing Secrets: %v, want Forbidden", err)
	}
}

// extenderManifest returns, of the manifest at path, the configuration
// its ConfigMap holds and its Deployment's kube-scheduler and extender
// containers.
func extenderManifest(t *testing.T, path string) (config string, scheduler, extender v1.Container) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var found int
	for _, doc := range bytes.Split(data, []byte("\n---\n")) {
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			t.Fatal(err)
		}
		switch meta.Kind {
		case "ConfigMap":
			var cm v1.ConfigMap
			if err := yaml.UnmarshalStrict(doc, &cm); err != nil {
				t.Fatal(err)
			}
			config = cm.Data["scheduler.yaml"]
			found++
		case "Deployment":
			var d appsv1.Deployment
			if err := yaml.UnmarshalStrict(doc, &d); err != nil {
				t.Fatal(err)
			}
			for _, c := range d.Spec.Template.Spec.Containers {
				switch c.Name {
				case "kube-scheduler":
					scheduler = c
					found++
				case "extender":
					extender = c
					found++
				}
			}
		}
	}
	if found != 3 || config == "" {
		t.Fatalf("%s: want a ConfigMap with scheduler.yaml and a Deployment with kube-scheduler and extender containers", path)
	}
	return config, scheduler, extender
}

// startProcess runs bin with args until t ends, its output in a file
// logged when t fails.
func startProcess(t *testing.T, name, bin string, args ...string) {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), name+".log")
	log, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		log.Close()
		close(exited)
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		<-exited
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			if len(b) > 3000 {
				b = b[len(b)-3000:]
			}
			t.Logf("%s log ends:\n%s", name, b)
		}
	})
}
