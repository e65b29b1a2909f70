package conformance

import (
	"context"
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubesched/kubesched/filter"
	"github.com/kubesched/kubesched/framework"
)

// TestPlacingPodsWithWaitingClaimsOneAfterAnotherAgreesWithUpstream places
// pods whose claims wait for their first consumer, through sim.Cluster,
// until the local volumes run out: some claims match local volumes, some
// are provisioned, and a few are used by a second pod. Before each
// placement upstream is asked about the same committed state: the pods
// placed so far, the volumes bound to their claims and the claims
// selected for provisioning, as kubesched's Results assumed them (which
// is what upstream's assume cache would hold). Every decision must
// agree, and no volume may be bound to two claims.
func TestPlacingPodsWithWaitingClaimsOneAfterAnotherAgreesWithUpstream(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	nodes := []*v1.Node{node("a", 8000), node("b", 8000), node("c", 8000), node("d", 8000)}
	for i, n := range nodes {
		n.Labels[v1.LabelTopologyZone] = fmt.Sprintf("zone-%d", i%2)
	}
	wait := storagev1.VolumeBindingWaitForFirstConsumer
	class := func(name, provisioner string) *storagev1.StorageClass {
		return &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: provisioner, VolumeBindingMode: &wait}
	}
	objects := []runtime.Object{class("local", "kubernetes.io/no-provisioner"), class("zonal", "csi.example.com")}
	volumes := map[string]*v1.PersistentVolume{}
	var volumeOrder []string
	for i, host := range []string{"a", "a", "b", "c", "d", "d"} {
		pv := &v1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("local-%d", i)},
			Spec: v1.PersistentVolumeSpec{
				StorageClassName:              "local",
				Capacity:                      v1.ResourceList{v1.ResourceStorage: *resource.NewQuantity(int64(5+i)<<30, resource.BinarySI)},
				AccessModes:                   []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
				PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimDelete,
				PersistentVolumeSource:        v1.PersistentVolumeSource{Local: &v1.LocalVolumeSource{Path: "/mnt/disk"}},
				NodeAffinity: &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
					MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelHostname, Operator: v1.NodeSelectorOpIn, Values: []string{host}}},
				}}}},
			},
			Status: v1.PersistentVolumeStatus{Phase: v1.VolumeAvailable},
		}
		volumes[pv.Name] = pv
		volumeOrder = append(volumeOrder, pv.Name)
	}
	claims := map[string]*v1.PersistentVolumeClaim{}
	var claimOrder []string
	var pods []*v1.Pod
	for i := range 16 {
		p := podRequesting(fmt.Sprintf("pod-%02d", i), 500)
		name := fmt.Sprintf("data-%02d", i)
		switch {
		case i%4 == 3:
			// A second user of an earlier pod's claim.
			name = fmt.Sprintf("data-%02d", i-2)
		default:
			storageClass := "local"
			if i%3 == 1 {
				storageClass = "zonal"
			}
			claims[name] = &v1.PersistentVolumeClaim{
				ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceDefault, UID: types.UID("uid-" + name)},
				Spec: v1.PersistentVolumeClaimSpec{
					StorageClassName: &storageClass,
					AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
					Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: *resource.NewQuantity(int64(4+i%4)<<30, resource.BinarySI)}},
				},
				Status: v1.PersistentVolumeClaimStatus{Phase: v1.ClaimPending},
			}
			claimOrder = append(claimOrder, name)
		}
		p.Spec.Volumes = []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{
			PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: name},
		}}}
		pods = append(pods, p)
	}
	// current is the objects as placements so far left them.
	current := func() []runtime.Object {
		objs := append([]runtime.Object(nil), objects...)
		for _, name := range volumeOrder {
			objs = append(objs, volumes[name])
		}
		for _, name := range claimOrder {
			objs = append(objs, claims[name])
		}
		return objs
	}

	c := simCluster(t, &Scenario{Nodes: nodes, Objects: current()})
	var bound []*v1.Pod
	boundTo := map[string]string{} // volume -> claim
	outcomes := map[string]int{}
	for _, pod := range pods {
		s := &Scenario{Nodes: nodes, Pods: append([]*v1.Pod(nil), bound...), Pod: pod, Objects: current()}
		res, placed := placeAsUpstream(ctx, t, s, outcomes, func() (*framework.Result, error) { return c.Place(ctx, pod) })
		if !placed {
			continue
		}
		for _, pv := range filter.Volumes(res) {
			if prev, taken := boundTo[pv.Name]; taken && prev != pv.Spec.ClaimRef.Name {
				t.Fatalf("volume %s bound to %s and %s", pv.Name, prev, pv.Spec.ClaimRef.Name)
			}
			boundTo[pv.Name] = pv.Spec.ClaimRef.Name
			volumes[pv.Name] = pv
			outcomes["volumes bound"]++
		}
		for _, claim := range filter.ProvisionedClaims(res) {
			claims[claim.Name] = claim
			outcomes["claims provisioned"]++
		}
		inCluster, _ := c.Pod(pod.Namespace, pod.Name)
		bound = append(bound, inCluster)
	}
	t.Logf("outcomes: %v", outcomes)
	if outcomes["volumes bound"] < 3 || outcomes["claims provisioned"] < 2 || outcomes["unschedulable"] < 1 {
		t.Errorf("outcomes %v: want volumes bound, claims provisioned, and the local volumes to run out", outcomes)
	}
}
