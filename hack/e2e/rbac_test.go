package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"
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
	startControllerAs(t, kubeconfig, "-scheduler-name", kubeschedName,
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
	lease, err := client.CoordinationV1().Leases("kube-system").Get(ctx, "kubesched", metav1.GetOptions{})
	if err != nil || lease.Spec.HolderIdentity == nil || *lease.Spec.HolderIdentity == "" {
		t.Errorf("the controller's Lease: %v, %v; want one it holds", lease, err)
	}

	// What the account must not do.
	if err := sa.CoreV1().Nodes().Delete(ctx, "node-0", metav1.DeleteOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("deleting a node: %v, want Forbidden", err)
	}
	if _, err := sa.CoreV1().Secrets("kube-system").List(ctx, metav1.ListOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("listing Secrets: %v, want Forbidden", err)
	}
}
