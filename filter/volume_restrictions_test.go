package filter_test

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesched/kubesched/filter"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/names"
	"github.com/kubesched/kubesched/nodeinfo"
)

// podWithVolumes is a pod in "default" with the given volume sources.
func podWithVolumes(sources ...v1.VolumeSource) *v1.Pod {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "p"}}
	for _, s := range sources {
		pod.Spec.Volumes = append(pod.Spec.Volumes, v1.Volume{Name: "v", VolumeSource: s})
	}
	return pod
}

func gcePD(name string, ro bool) v1.VolumeSource {
	return v1.VolumeSource{GCEPersistentDisk: &v1.GCEPersistentDiskVolumeSource{PDName: name, ReadOnly: ro}}
}

func awsEBS(id string, ro bool) v1.VolumeSource {
	return v1.VolumeSource{AWSElasticBlockStore: &v1.AWSElasticBlockStoreVolumeSource{VolumeID: id, ReadOnly: ro}}
}

func iscsi(iqn string, lun int32, ro bool) v1.VolumeSource {
	return v1.VolumeSource{ISCSI: &v1.ISCSIVolumeSource{TargetPortal: "p", IQN: iqn, Lun: lun, ReadOnly: ro}}
}

func rbd(monitors []string, pool, image string, ro bool) v1.VolumeSource {
	return v1.VolumeSource{RBD: &v1.RBDVolumeSource{CephMonitors: monitors, RBDPool: pool, RBDImage: image, ReadOnly: ro}}
}

func claimSource(name string) v1.VolumeSource {
	return v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: name}}
}

// onNode is the node name running pods.
func onNode(name string, pods ...*v1.Pod) *nodeinfo.NodeInfo {
	return nodeinfo.New(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, pods...)
}

func TestVolumeRestrictions(t *testing.T) {
	t.Parallel()
	status := func(code fwk.Code, reason string) *fwk.Status {
		return fwk.NewStatus(code, reason).WithPlugin(names.VolumeRestrictions)
	}
	disk := status(fwk.Unschedulable, filter.ErrReasonDiskConflict)
	rwop := status(fwk.Unschedulable, filter.ErrReasonReadWriteOncePodConflict)
	claims := []*v1.PersistentVolumeClaim{
		claim("once", "pv", "", v1.ReadWriteOncePod),
		claim("many", "pv", "", v1.ReadWriteMany),
	}
	other := func(pods ...*v1.Pod) []*nodeinfo.NodeInfo { return []*nodeinfo.NodeInfo{onNode("other", pods...)} }
	mons := []string{"m1", "m2"}

	tests := []struct {
		name          string
		pod           *v1.Pod
		node          *nodeinfo.NodeInfo
		others        []*nodeinfo.NodeInfo
		wantPreFilter *fwk.Status
		want          *fwk.Status
	}{
		{name: "a pod without volumes is skipped", pod: podWithVolumes(), node: onNode("n"), wantPreFilter: skip},
		{name: "a pod with only an unused read-write-once-pod claim is skipped", pod: podWithVolumes(claimSource("once")), node: onNode("n"), wantPreFilter: skip},
		{name: "a missing claim is rejected", pod: podWithVolumes(claimSource("ghost")), node: onNode("n"), wantPreFilter: status(fwk.UnschedulableAndUnresolvable, `persistentvolumeclaim "ghost" not found`)},
		{name: "a GCE disk fits a node without it", pod: podWithVolumes(gcePD("d", false)), node: onNode("n", podWithVolumes(gcePD("e", false)))},
		{name: "the same GCE disk conflicts", pod: podWithVolumes(gcePD("d", false)), node: onNode("n", podWithVolumes(gcePD("d", true))), want: disk},
		{name: "the same GCE disk read-only twice fits", pod: podWithVolumes(gcePD("d", true)), node: onNode("n", podWithVolumes(gcePD("d", true)))},
		{name: "the same EBS volume conflicts even read-only", pod: podWithVolumes(awsEBS("vol", true)), node: onNode("n", podWithVolumes(awsEBS("vol", true))), want: disk},
		{name: "another EBS volume fits", pod: podWithVolumes(awsEBS("vol", false)), node: onNode("n", podWithVolumes(awsEBS("vol2", false)))},
		{name: "the same iSCSI IQN conflicts whatever the LUN", pod: podWithVolumes(iscsi("iqn", 1, false)), node: onNode("n", podWithVolumes(iscsi("iqn", 2, true))), want: disk},
		{name: "the same iSCSI IQN read-only twice fits", pod: podWithVolumes(iscsi("iqn", 1, true)), node: onNode("n", podWithVolumes(iscsi("iqn", 1, true)))},
		{name: "an RBD image with an overlapping monitor conflicts", pod: podWithVolumes(rbd(mons, "pool", "img", false)), node: onNode("n", podWithVolumes(rbd([]string{"m2", "m3"}, "pool", "img", true))), want: disk},
		{name: "an RBD image without a shared monitor fits", pod: podWithVolumes(rbd(mons, "pool", "img", false)), node: onNode("n", podWithVolumes(rbd([]string{"m3"}, "pool", "img", false)))},
		{name: "an RBD image in another pool fits", pod: podWithVolumes(rbd(mons, "pool", "img", false)), node: onNode("n", podWithVolumes(rbd(mons, "other", "img", false)))},
		{name: "an RBD image read-only twice fits", pod: podWithVolumes(rbd(mons, "pool", "img", true)), node: onNode("n", podWithVolumes(rbd(mons, "pool", "img", true)))},
		{name: "different volume kinds never conflict", pod: podWithVolumes(gcePD("x", false)), node: onNode("n", podWithVolumes(awsEBS("x", false)))},
		{
			name: "a read-write-once-pod claim used on another node rejects every node",
			pod:  podWithVolumes(claimSource("once")), node: onNode("n"),
			others: other(podWithVolumes(claimSource("once"))), want: rwop,
		},
		{
			name: "a read-write-many claim used elsewhere is skipped",
			pod:  podWithVolumes(claimSource("many")), node: onNode("n"),
			others: other(podWithVolumes(claimSource("many"))), wantPreFilter: skip,
		},
		{
			name: "a claim of the same name in another namespace is not in use",
			pod:  podWithVolumes(claimSource("once")), node: onNode("n"),
			others: other(func() *v1.Pod { p := podWithVolumes(claimSource("once")); p.Namespace = "elsewhere"; return p }()), wantPreFilter: skip,
		},
		{
			name: "a disk conflict is reported before a read-write-once-pod conflict",
			pod:  podWithVolumes(claimSource("once"), awsEBS("vol", false)), node: onNode("n", podWithVolumes(awsEBS("vol", false))),
			others: other(podWithVolumes(claimSource("once"))), want: disk,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var pl filter.VolumeRestrictions
			all := append([]*nodeinfo.NodeInfo{tt.node}, tt.others...)
			l := fwk.Listers{PersistentVolumeClaims: objects[*v1.PersistentVolumeClaim]{items: claims}}
			state := fwk.NewCycleState(all).SetListers(l)
			_, got := pl.PreFilter(context.Background(), state, tt.pod, all)
			if !sameStatus(got, tt.wantPreFilter) {
				t.Fatalf("PreFilter = %v, want %v", got, tt.wantPreFilter)
			}
			if !got.IsSuccess() {
				return
			}
			if got := pl.Filter(context.Background(), state, tt.pod, tt.node); !sameStatus(got, tt.want) {
				t.Errorf("Filter = %v, want %v", got, tt.want)
			}
			fresh := fwk.NewCycleState(all).SetListers(l)
			if got := pl.Filter(context.Background(), fresh, tt.pod, tt.node); !sameStatus(got, tt.want) {
				t.Errorf("Filter without PreFilter = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestVolumeRestrictionsAddRemovePod(t *testing.T) {
	t.Parallel()
	var pl filter.VolumeRestrictions
	ctx := context.Background()
	l := fwk.Listers{PersistentVolumeClaims: objects[*v1.PersistentVolumeClaim]{items: []*v1.PersistentVolumeClaim{claim("once", "pv", "", v1.ReadWriteOncePod)}}}
	pod := podWithVolumes(claimSource("once"), gcePD("d", false))
	user := nodeinfo.NewPodInfo(podWithVolumes(claimSource("once")))
	node := onNode("n")
	state := fwk.NewCycleState([]*nodeinfo.NodeInfo{node}).SetListers(l)
	if _, s := pl.PreFilter(ctx, state, pod, state.AllNodes()); s != nil {
		t.Fatalf("PreFilter = %v, want nil", s)
	}
	if s := pl.Filter(ctx, state, pod, node); s != nil {
		t.Fatalf("Filter before AddPod = %v, want nil", s)
	}
	added := state.Clone()
	if s := pl.AddPod(ctx, added, pod, user, node); s != nil {
		t.Fatalf("AddPod = %v", s)
	}
	if s := pl.Filter(ctx, added, pod, node); s.Message() != filter.ErrReasonReadWriteOncePodConflict {
		t.Errorf("Filter after AddPod = %v, want %q", s, filter.ErrReasonReadWriteOncePodConflict)
	}
	if s := pl.Filter(ctx, state, pod, node); s != nil {
		t.Errorf("Filter on the original state after AddPod to a clone = %v, want nil", s)
	}
	if s := pl.RemovePod(ctx, added, pod, user, node); s != nil {
		t.Fatalf("RemovePod = %v", s)
	}
	if s := pl.Filter(ctx, added, pod, node); s != nil {
		t.Errorf("Filter after RemovePod = %v, want nil", s)
	}
	if s := pl.AddPod(ctx, fwk.NewCycleState(nil), pod, user, node); s.Code() != fwk.Error {
		t.Errorf("AddPod without PreFilter = %v, want Error", s)
	}
}

func TestVolumeRestrictionsFilterWithNilState(t *testing.T) {
	t.Parallel()
	var pl filter.VolumeRestrictions
	node := onNode("n", podWithVolumes(gcePD("d", false)))
	if got := pl.Filter(context.Background(), nil, podWithVolumes(gcePD("d", false)), node); got.Message() != filter.ErrReasonDiskConflict {
		t.Errorf("Filter = %v, want %q", got, filter.ErrReasonDiskConflict)
	}
	if got := pl.Filter(context.Background(), nil, podWithVolumes(gcePD("e", false)), node); got != nil {
		t.Errorf("Filter = %v, want nil", got)
	}
	if got := pl.Filter(context.Background(), nil, podWithVolumes(), nodeinfo.New(nil)); got.Code() != fwk.Error {
		t.Errorf("Filter(nil node) = %v, want Error", got)
	}
}
