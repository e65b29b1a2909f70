package sim_test

import (
	"context"
	"errors"
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubesched/kubesched"
	"github.com/kubesched/kubesched/filter"
	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/sim"
)

// waitingClass is a WaitForFirstConsumer StorageClass; provisioner
// "kubernetes.io/no-provisioner" for local volumes only.
func waitingClass(name, provisioner string) *storagev1.StorageClass {
	mode := storagev1.VolumeBindingWaitForFirstConsumer
	return &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: provisioner, VolumeBindingMode: &mode}
}

// localVolume is a 10Gi volume of class on the node called host.
func localVolume(name, class, host string) *v1.PersistentVolume {
	return &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.PersistentVolumeSpec{
			StorageClassName:              class,
			Capacity:                      v1.ResourceList{v1.ResourceStorage: resource.MustParse("10Gi")},
			AccessModes:                   []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimDelete,
			PersistentVolumeSource:        v1.PersistentVolumeSource{Local: &v1.LocalVolumeSource{Path: "/mnt/" + name}},
			NodeAffinity: &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
				MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelHostname, Operator: v1.NodeSelectorOpIn, Values: []string{host}}},
			}}}},
		},
		Status: v1.PersistentVolumeStatus{Phase: v1.VolumeAvailable},
	}
}

// unboundClaim is a pending 5Gi claim of class.
func unboundClaim(name, class string) *v1.PersistentVolumeClaim {
	return &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)},
		Spec: v1.PersistentVolumeClaimSpec{
			StorageClassName: &class,
			AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("5Gi")}},
		},
		Status: v1.PersistentVolumeClaimStatus{Phase: v1.ClaimPending},
	}
}

// using gives p a volume from the claim called claim.
func using(p *v1.Pod, claim string) *v1.Pod {
	p.Spec.Volumes = append(p.Spec.Volumes, v1.Volume{Name: claim, VolumeSource: v1.VolumeSource{
		PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: claim},
	}})
	return p
}

// TestPlaceBindsVolumesAndSelectsNodesForProvisioning places pods whose
// claims wait for their first consumer: a volume matched to one claim is
// not offered to the next, a claim to provision is annotated with the
// chosen node, and a revert frees the volume again.
func TestPlaceBindsVolumesAndSelectsNodesForProvisioning(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	objs := []runtime.Object{
		waitingClass("local", "kubernetes.io/no-provisioner"),
		waitingClass("fast", "csi.example.com"),
		localVolume("pv-a", "local", "a"),
		unboundClaim("data-0", "local"),
		unboundClaim("data-1", "local"),
		unboundClaim("scratch", "fast"),
	}
	fw, err := kubesched.DefaultFramework()
	if err != nil {
		t.Fatal(err)
	}
	c, err := sim.New(fw, []*v1.Node{node("a", "4"), node("b", "4")}, nil, objs...)
	if err != nil {
		t.Fatal(err)
	}

	c.Fork()
	first, err := c.Place(ctx, using(pod("first", "1"), "data-0"))
	if err != nil {
		t.Fatal(err)
	}
	if first.SuggestedHost != "a" || len(filter.Volumes(first)) != 1 {
		t.Fatalf("first: placed on %s with volumes %v; want a, with pv-a bound", first.SuggestedHost, filter.Volumes(first))
	}
	if ref := filter.Volumes(first)[0].Spec.ClaimRef; filter.Volumes(first)[0].Name != "pv-a" || ref == nil || ref.Name != "data-0" || ref.UID != "uid-data-0" {
		t.Errorf("first: volume %s bound to %+v; want pv-a bound to data-0", filter.Volumes(first)[0].Name, ref)
	}
	// pv-a is data-0's now: data-1 finds no volume on any node.
	_, err = c.Place(ctx, using(pod("second", "1"), "data-1"))
	var fitErr *framework.FitError
	if !errors.As(err, &fitErr) {
		t.Fatalf("second: %v; want a FitError, pv-a being taken", err)
	}
	third, err := c.Place(ctx, using(pod("third", "1"), "scratch"))
	if err != nil {
		t.Fatal(err)
	}
	if len(filter.ProvisionedClaims(third)) != 1 || filter.ProvisionedClaims(third)[0].Annotations["volume.kubernetes.io/selected-node"] != third.SuggestedHost {
		t.Errorf("third: provisioned %v; want scratch selected for %s", filter.ProvisionedClaims(third), third.SuggestedHost)
	}
	// scratch is being provisioned for that node: a second user of the
	// claim can only go there.
	other := map[string]string{"a": "b", "b": "a"}[third.SuggestedHost]
	if s := c.CheckPod(ctx, using(pod("fourth", "1"), "scratch"), other); s.IsSuccess() {
		t.Errorf("a pod using scratch fits %s, though scratch is selected for %s", other, third.SuggestedHost)
	}

	if err := c.Revert(); err != nil {
		t.Fatal(err)
	}
	// Reverted, pv-a is free again, and data-1 gets it.
	again, err := c.Place(ctx, using(pod("second", "1"), "data-1"))
	if err != nil || again.SuggestedHost != "a" {
		t.Fatalf("after the revert: %v, %v; want data-1 bound to pv-a on a", again, err)
	}
}
