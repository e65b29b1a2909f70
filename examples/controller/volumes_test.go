package main

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestControllerRefusesToBindAPodWhoseVolumesWait: a pod whose claim
// waits for its first consumer fits a node only once a volume is bound
// for it there, which this controller does not do yet; it says so on the
// pod rather than bind it to wait forever.
func TestControllerRefusesToBindAPodWhoseVolumesWait(t *testing.T) {
	t.Parallel()
	wait := storagev1.VolumeBindingWaitForFirstConsumer
	class := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "local"}, Provisioner: "kubernetes.io/no-provisioner", VolumeBindingMode: &wait}
	claim := &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "default"},
		Spec: v1.PersistentVolumeClaimSpec{
			StorageClassName: new("local"),
			AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Resources:        v1.VolumeResourceRequirements{Requests: v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")}},
		},
	}
	volume := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "disk"},
		Spec: v1.PersistentVolumeSpec{
			StorageClassName:       "local",
			AccessModes:            []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
			Capacity:               v1.ResourceList{v1.ResourceStorage: resource.MustParse("1Gi")},
			PersistentVolumeSource: v1.PersistentVolumeSource{Local: &v1.LocalVolumeSource{Path: "/mnt/disk"}},
		},
		Status: v1.PersistentVolumeStatus{Phase: v1.VolumeAvailable},
	}
	pod := testPod("db", "100m", "kubesched")
	pod.Spec.Volumes = []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}}
	client := newFakeCluster(testNode("only", "1"), class, claim, volume, pod)
	ctrl, err := New(client, Config{SchedulerName: "kubesched"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := startController(t, ctrl)
	get := func() *v1.Pod {
		p, err := client.CoreV1().Pods("default").Get(ctx, "db", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	eventually(t, "db is reported not scheduled", func() bool {
		for _, c := range get().Status.Conditions {
			if c.Type == v1.PodScheduled && c.Status == v1.ConditionFalse {
				return c.Reason == v1.PodReasonSchedulerError && strings.Contains(c.Message, "does not bind volumes yet")
			}
		}
		return false
	})
	if node := get().Spec.NodeName; node != "" {
		t.Errorf("db was bound to %s with its claim unbound", node)
	}
	if n := ctrl.cache.PodCount(); n != 0 {
		t.Errorf("the cache holds %d pods, want none", n)
	}
}
