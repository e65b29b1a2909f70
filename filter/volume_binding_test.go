package filter_test

import (
	"context"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubesched/kubesched/filter"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/names"
	"github.com/kubesched/kubesched/nodeinfo"
)

// bindingClaim is a claim in "default" of class, asking for size
// (none if empty), bound to volume if volume is not empty.
func bindingClaim(name, class, size, volume string) *v1.PersistentVolumeClaim {
	c := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name}}
	if class != "" {
		c.Spec.StorageClassName = &class
	}
	if size != "" {
		c.Spec.Resources.Requests = v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)}
	}
	if volume != "" {
		c.Spec.VolumeName = volume
		c.Annotations = map[string]string{"pv.kubernetes.io/bind-completed": "yes"}
	}
	return c
}

// hostVolume is an Available volume of class "local" on the named host.
func hostVolume(name, host, size string) *v1.PersistentVolume {
	return &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.PersistentVolumeSpec{
			StorageClassName: "local",
			Capacity:         v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)},
			NodeAffinity: &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
				MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelHostname, Operator: v1.NodeSelectorOpIn, Values: []string{host}}},
			}}}},
		},
		Status: v1.PersistentVolumeStatus{Phase: v1.VolumeAvailable},
	}
}

func hostNode(name, zone string) *nodeinfo.NodeInfo {
	return nodeinfo.New(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1.LabelHostname: name, v1.LabelTopologyZone: zone}}})
}

func TestVolumeBinding(t *testing.T) {
	t.Parallel()
	wffc := storagev1.VolumeBindingWaitForFirstConsumer
	objs := []runtime.Object{
		&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "local"}, VolumeBindingMode: &wffc, Provisioner: "kubernetes.io/no-provisioner"},
		&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "csi"}, VolumeBindingMode: &wffc, Provisioner: "csi.example.com"},
		&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "now"}, VolumeBindingMode: new(storagev1.VolumeBindingImmediate), Provisioner: "csi.example.com"},
		&storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: "csi.example.com"}, Spec: storagev1.CSIDriverSpec{StorageCapacity: new(true)}},
		&storagev1.CSIStorageCapacity{
			ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: "cap"}, StorageClassName: "csi", Capacity: new(resource.MustParse("10Gi")),
			NodeTopology: &metav1.LabelSelector{MatchLabels: map[string]string{v1.LabelTopologyZone: "zone-1"}},
		},
		bindingClaim("on-a", "", "", "pv-a"), hostVolume("pv-a", "a", "1Gi"),
		bindingClaim("orphan", "", "", "gone"),
		bindingClaim("local", "local", "5Gi", ""), hostVolume("free-a", "a", "10Gi"),
		bindingClaim("dynamic", "csi", "5Gi", ""),
		bindingClaim("now", "now", "", ""),
		func() *v1.PersistentVolumeClaim {
			c := bindingClaim("bad-selector", "local", "", "")
			c.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "k", Operator: "Bad"}}}
			return c
		}(),
	}
	l, err := fwk.NewListers(objs...)
	if err != nil {
		t.Fatal(err)
	}
	a, b := hostNode("a", "zone-1"), hostNode("b", "zone-2")
	reject := func(reasons ...string) *fwk.Status {
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, reasons...).WithPlugin(names.VolumeBinding)
	}

	tests := []struct {
		name          string
		pod           *v1.Pod
		node          *nodeinfo.NodeInfo
		wantPreFilter *fwk.Status
		want          *fwk.Status
		// details are what ExplainFilter says of the node.
		details []string
	}{
		{name: "a pod without claims is skipped", pod: podWithClaims(), node: a, wantPreFilter: skip},
		{name: "a missing claim rejects the pod", pod: podWithClaims("ghost"), node: a, wantPreFilter: reject(`persistentvolumeclaim "ghost" not found`)},
		{name: "an unbound immediate claim rejects the pod", pod: podWithClaims("now"), node: a, wantPreFilter: reject(filter.ErrReasonUnboundImmediateClaims)},
		{name: "a bound volume on the node fits", pod: podWithClaims("on-a"), node: a},
		{name: "a bound volume on another node conflicts", pod: podWithClaims("on-a"), node: b, want: reject(filter.ErrReasonVolumeNodeConflict),
			details: []string{"claim default/on-a is bound to volume pv-a, whose node affinity excludes the node: term 1 of 1: kubernetes.io/hostname In [a] (the node has kubernetes.io/hostname=b)"}},
		{name: "a claim bound to a missing volume fits nowhere", pod: podWithClaims("orphan"), node: a, want: reject(filter.ErrReasonPVNotExist),
			details: []string{"claim default/orphan is bound to volume gone, which does not exist"}},
		{name: "a waiting claim binds a free volume on the node", pod: podWithClaims("local"), node: a},
		{name: "a waiting claim without a volume or a provisioner conflicts", pod: podWithClaims("local"), node: b, want: reject(filter.ErrReasonVolumeBindConflict),
			details: []string{"claim default/local (5Gi): no free PersistentVolume of class local reachable from the node matches it, and class local cannot provision volumes (it has no provisioner)"}},
		{name: "a claim to provision fits where a capacity has room", pod: podWithClaims("dynamic"), node: a},
		{name: "a claim to provision conflicts where no capacity has room", pod: podWithClaims("dynamic"), node: b, want: reject(filter.ErrReasonNotEnoughSpace),
			details: []string{"claim default/dynamic (5Gi): no free PersistentVolume of class csi reachable from the node matches it, and no CSIStorageCapacity of class csi reachable from the node has room for 5Gi"}},
		{
			name: "several reasons come in kube-scheduler's order",
			pod:  podWithClaims("dynamic", "orphan", "on-a"), node: b,
			want: reject(filter.ErrReasonNotEnoughSpace, filter.ErrReasonPVNotExist),
			details: []string{
				"claim default/orphan is bound to volume gone, which does not exist",
				"claim default/on-a is bound to volume pv-a, whose node affinity excludes the node: term 1 of 1: kubernetes.io/hostname In [a] (the node has kubernetes.io/hostname=b)",
				"claim default/dynamic (5Gi): no free PersistentVolume of class csi reachable from the node matches it, and no CSIStorageCapacity of class csi reachable from the node has room for 5Gi",
			},
		},
		{
			name: "a node conflict is reported with the binding one",
			pod:  podWithClaims("local", "on-a"), node: b,
			want: reject(filter.ErrReasonVolumeNodeConflict, filter.ErrReasonVolumeBindConflict),
			details: []string{
				"claim default/on-a is bound to volume pv-a, whose node affinity excludes the node: term 1 of 1: kubernetes.io/hostname In [a] (the node has kubernetes.io/hostname=b)",
				"claim default/local (5Gi): no free PersistentVolume of class local reachable from the node matches it, and class local cannot provision volumes (it has no provisioner)",
			},
		},
		{
			name: "a claim selector that does not parse is an error",
			pod:  podWithClaims("bad-selector"), node: a,
			want: fwk.NewStatus(fwk.Error, `error creating internal label selector for claim: default/bad-selector: "Bad" is not a valid label selector operator`).WithPlugin(names.VolumeBinding),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var pl filter.VolumeBinding
			nodes := []*nodeinfo.NodeInfo{a, b}
			state := fwk.NewCycleState(nodes).SetListers(l)
			res, got := pl.PreFilter(context.Background(), state, tt.pod, nodes)
			if !sameVolumeBindingStatus(got, tt.wantPreFilter) {
				t.Fatalf("PreFilter = %v, want %v", got, tt.wantPreFilter)
			}
			if !res.AllNodes() {
				t.Errorf("PreFilter narrowed the nodes to %v; kube-scheduler's never does", res.NodeNames)
			}
			if !got.IsSuccess() {
				return
			}
			if got := pl.Filter(context.Background(), state, tt.pod, tt.node); !sameVolumeBindingStatus(got, tt.want) {
				t.Errorf("Filter = %v, want %v", got, tt.want)
			}
			var details []string
			for _, d := range pl.ExplainFilter(context.Background(), state, tt.pod, tt.node) {
				details = append(details, d.Message)
			}
			if !slices.Equal(details, tt.details) {
				t.Errorf("ExplainFilter = %q, want %q", details, tt.details)
			}
			fresh := fwk.NewCycleState(nil).SetListers(l)
			if got := pl.Filter(context.Background(), fresh, tt.pod, tt.node); !sameVolumeBindingStatus(got, tt.want) {
				t.Errorf("Filter without PreFilter = %v, want %v", got, tt.want)
			}
		})
	}
}

// sameVolumeBindingStatus compares code, each reason and the plugin.
func sameVolumeBindingStatus(a, b *fwk.Status) bool {
	return a.Code() == b.Code() && slices.Equal(a.Reasons(), b.Reasons()) && a.Plugin() == b.Plugin()
}

func TestVolumeBindingFilterWithNilState(t *testing.T) {
	t.Parallel()
	var pl filter.VolumeBinding
	node := hostNode("a", "zone-1")
	if got := pl.Filter(context.Background(), nil, podWithClaims(), node); got != nil {
		t.Errorf("Filter(no claims) = %v, want nil", got)
	}
	want := `persistentvolumeclaim "c" not found`
	if got := pl.Filter(context.Background(), nil, podWithClaims("c"), node); got.Code() != fwk.UnschedulableAndUnresolvable || got.Message() != want {
		t.Errorf("Filter(claim, nil state) = %v, want UnschedulableAndUnresolvable %q", got, want)
	}
	if got := pl.Filter(context.Background(), nil, podWithClaims(), nodeinfo.New(nil)); got.Code() != fwk.Error {
		t.Errorf("Filter(nil node) = %v, want Error", got)
	}
}
