package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/yaml"
)

// TestKubectlPluginExplainsAPendingPod: on the real control plane, a pod
// kube-scheduler leaves pending is explained by kubectl-kubesched, run as
// a ServiceAccount bound only to the plugin's documented read-only role,
// with kube-scheduler's own message; the same account may not write.
func TestKubectlPluginExplainsAPendingPod(t *testing.T) {
	ctx := context.Background()
	cp, client := startControlPlane(t, ctx)
	for _, n := range []*v1.Node{
		node("node-0", "2", "4Gi", nil),
		node("node-1", "1", "4Gi", nil),
	} {
		if _, err := client.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	big := pod("big", v1.DefaultSchedulerName, "4", "64Mi")
	if _, err := client.CoreV1().Pods(metav1.NamespaceDefault).Create(ctx, big, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	var want string
	eventually(t, time.Minute, "kube-scheduler reports pod big unschedulable", func() (bool, error) {
		p, err := client.CoreV1().Pods(metav1.NamespaceDefault).Get(ctx, "big", metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		if c := scheduledCondition(p); c != nil && c.Reason == v1.PodReasonUnschedulable {
			want = c.Message
			return true, nil
		}
		return false, nil
	})

	kubeconfig := readerKubeconfig(t, ctx, cp.Config, client)
	cmd := exec.CommandContext(ctx, plugin, "explain", "pod/big", "-n", "default", "--kubeconfig", kubeconfig, "-o", "json", "-q")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if exit, ok := err.(*exec.ExitError); !ok || exit.ExitCode() != 1 {
		t.Fatalf("kubectl-kubesched: %v, want exit status 1; stderr:\n%s", err, stderr.String())
	}
	var got struct {
		Pods []struct {
			Pod     string `json:"pod"`
			Message string `json:"message"`
		} `json:"pods"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("%v; stdout:\n%s", err, stdout.String())
	}
	if len(got.Pods) != 1 || got.Pods[0].Pod != "default/big" || got.Pods[0].Message != want {
		t.Errorf("kubectl-kubesched says %+v; kube-scheduler wrote %q", got.Pods, want)
	}

	// The reader reads and does nothing else.
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	reader, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := reader.CoreV1().Pods(metav1.NamespaceDefault).Delete(ctx, "big", metav1.DeleteOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("the reader deleting a pod: %v, want Forbidden", err)
	}
	if _, err := reader.CoreV1().Secrets(metav1.NamespaceDefault).List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("the reader listing Secrets: %v, want Forbidden", err)
	}
}

// readerKubeconfig creates a ServiceAccount bound to the plugin's
// ClusterRole, from cmd/kubectl-kubesched/rbac.yaml, and returns a
// kubeconfig file with a token of that account.
func readerKubeconfig(t *testing.T, ctx context.Context, admin *rest.Config, client kubernetes.Interface) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "cmd", "kubectl-kubesched", "rbac.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var role rbacv1.ClusterRole
	if err := yaml.UnmarshalStrict(data, &role); err != nil {
		t.Fatal(err)
	}
	if _, err := client.RbacV1().ClusterRoles().Create(ctx, &role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	sa := &v1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "sre", Namespace: metav1.NamespaceDefault}}
	if _, err := client.CoreV1().ServiceAccounts(sa.Namespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "sre-reads"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: sa.Name, Namespace: sa.Namespace}},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role.Name},
	}
	if _, err := client.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	path := serviceAccountKubeconfig(t, ctx, admin, client, sa.Namespace, sa.Name)
	// RBAC takes a moment to see the binding.
	eventually(t, 30*time.Second, "the reader can list nodes", func() (bool, error) {
		c, err := clientcmd.BuildConfigFromFlags("", path)
		if err != nil {
			return false, err
		}
		k, err := kubernetes.NewForConfig(c)
		if err != nil {
			return false, err
		}
		_, err = k.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		return err == nil, nil
	})
	return path
}

// serviceAccountKubeconfig writes a kubeconfig file with a token of the
// ServiceAccount namespace/name, for the API server admin reaches.
func serviceAccountKubeconfig(t *testing.T, ctx context.Context, admin *rest.Config, client kubernetes.Interface, namespace, name string) string {
	t.Helper()
	tr, err := client.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, name, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: new(int64(3600))},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["e2e"] = &clientcmdapi.Cluster{Server: admin.Host, CertificateAuthority: admin.TLSClientConfig.CAFile}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: tr.Status.Token}
	cfg.Contexts[name+"@e2e"] = &clientcmdapi.Context{Cluster: "e2e", AuthInfo: name}
	cfg.CurrentContext = name + "@e2e"
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// clientFor is a client of the kubeconfig file at path.
func clientFor(t *testing.T, path string) kubernetes.Interface {
	t.Helper()
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatal(err)
	}
	k, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return k
}
