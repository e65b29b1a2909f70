package filter_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/kubesched/kubesched/filter"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/names"
	"github.com/kubesched/kubesched/nodeinfo"
)

// objects is an in-memory lister of one kind; err makes List fail.
type objects[T any] struct {
	items []T
	err   error
}

func (o objects[T]) List(labels.Selector) ([]T, error) { return o.items, o.err }

// claim is a claim in namespace "default" bound to volume (empty: unbound)
// with storage class class (empty: none).
func claim(name, volume, class string, modes ...v1.PersistentVolumeAccessMode) *v1.PersistentVolumeClaim {
	c := &v1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec:       v1.PersistentVolumeClaimSpec{VolumeName: volume, AccessModes: modes},
	}
	if class != "" {
		c.Spec.StorageClassName = &class
	}
	return c
}

// volume is a PersistentVolume with labels.
func volume(name string, lbls map[string]string) *v1.PersistentVolume {
	return &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: lbls}}
}

// class is a StorageClass with the given binding mode (nil: unset).
func class(name string, mode *storagev1.VolumeBindingMode) *storagev1.StorageClass {
	return &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, VolumeBindingMode: mode}
}

// podWithClaims is a pod in "default" mounting the named claims.
func podWithClaims(claims ...string) *v1.Pod {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "p"}}
	for _, c := range claims {
		pod.Spec.Volumes = append(pod.Spec.Volumes, v1.Volume{Name: c, VolumeSource: v1.VolumeSource{
			PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: c},
		}})
	}
	return pod
}

// zonedNode is a node with labels.
func zonedNode(lbls map[string]string) *nodeinfo.NodeInfo {
	return nodeinfo.New(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: lbls}})
}

var (
	skip            = fwk.NewStatus(fwk.Skip)
	waitForConsumer = new(storagev1.VolumeBindingWaitForFirstConsumer)
	immediate       = new(storagev1.VolumeBindingImmediate)
)

const (
	gaZone     = v1.LabelTopologyZone
	gaRegion   = v1.LabelTopologyRegion
	betaZone   = v1.LabelFailureDomainBetaZone
	betaRegion = v1.LabelFailureDomainBetaRegion
)

func volumeListers(claims []*v1.PersistentVolumeClaim, pvs []*v1.PersistentVolume, classes []*storagev1.StorageClass) fwk.Listers {
	return fwk.Listers{
		PersistentVolumeClaims: objects[*v1.PersistentVolumeClaim]{items: claims},
		PersistentVolumes:      objects[*v1.PersistentVolume]{items: pvs},
		StorageClasses:         objects[*storagev1.StorageClass]{items: classes},
	}
}

// sameStatus compares code, reasons and plugin.
func sameStatus(a, b *fwk.Status) bool {
	return a.Code() == b.Code() && a.Message() == b.Message() && (a.IsSuccess() || a.IsSkip() || a.Plugin() == b.Plugin())
}

func TestVolumeZone(t *testing.T) {
	t.Parallel()
	status := func(code fwk.Code, reason string) *fwk.Status {
		return fwk.NewStatus(code, reason).WithPlugin(names.VolumeZone)
	}
	conflict := status(fwk.UnschedulableAndUnresolvable, filter.ErrReasonVolumeZoneConflict)
	unresolvable := func(reason string) *fwk.Status {
		return status(fwk.UnschedulableAndUnresolvable, reason)
	}
	pvs := []*v1.PersistentVolume{
		volume("pv-a", map[string]string{gaZone: "zone-a"}),
		volume("pv-beta", map[string]string{betaZone: "zone-a", betaRegion: "r1"}),
		volume("pv-multi", map[string]string{gaZone: "zone-a__ zone-b"}),
		volume("pv-bad", map[string]string{gaZone: "zone-a____zone-b"}),
		volume("pv-none", map[string]string{"other": "x"}),
		volume("pv-region", map[string]string{gaRegion: "r1"}),
	}
	claims := []*v1.PersistentVolumeClaim{
		claim("a", "pv-a", ""),
		claim("beta", "pv-beta", ""),
		claim("multi", "pv-multi", ""),
		claim("bad", "pv-bad", ""),
		claim("none", "pv-none", ""),
		claim("region", "pv-region", ""),
		claim("lost", "pv-lost", ""),
		claim("wait", "", "wait"),
		claim("now", "", "now"),
		claim("unset", "", "unset"),
		claim("classless", "", ""),
		claim("missing-class", "", "gone"),
	}
	classes := []*storagev1.StorageClass{class("wait", waitForConsumer), class("now", immediate), class("unset", nil)}
	listers := volumeListers(claims, pvs, classes)
	zoneA := zonedNode(map[string]string{gaZone: "zone-a", gaRegion: "r1"})

	tests := []struct {
		name          string
		pod           *v1.Pod
		node          *nodeinfo.NodeInfo
		listers       *fwk.Listers
		wantPreFilter *fwk.Status
		want          *fwk.Status
	}{
		{name: "a pod without volumes is skipped", pod: podWithClaims(), node: zoneA, wantPreFilter: skip},
		{
			name: "a pod with only non-claim volumes is skipped",
			pod:  &v1.Pod{Spec: v1.PodSpec{Volumes: []v1.Volume{{Name: "e", VolumeSource: v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}}}}},
			node: zoneA, wantPreFilter: skip,
		},
		{name: "a volume in the node's zone fits", pod: podWithClaims("a"), node: zoneA},
		{name: "a volume in another zone conflicts", pod: podWithClaims("a"), node: zonedNode(map[string]string{gaZone: "zone-b"}), want: conflict},
		{name: "a node without topology labels fits any volume", pod: podWithClaims("a"), node: zonedNode(map[string]string{"x": "y"})},
		{name: "a node with only a region label lacks the volume's zone", pod: podWithClaims("a"), node: zonedNode(map[string]string{gaRegion: "r1"}), want: conflict},
		{name: "beta volume labels are matched by the node's GA labels", pod: podWithClaims("beta"), node: zoneA},
		{name: "beta volume labels are matched by the node's beta labels", pod: podWithClaims("beta"), node: zonedNode(map[string]string{betaZone: "zone-a", betaRegion: "r1"})},
		{name: "GA volume labels are not matched by the node's beta labels", pod: podWithClaims("a"), node: zonedNode(map[string]string{betaZone: "zone-a"}), want: conflict},
		{name: "a multi-zone volume fits a node in any of its zones", pod: podWithClaims("multi"), node: zonedNode(map[string]string{gaZone: "zone-b"})},
		{name: "a multi-zone volume conflicts outside its zones", pod: podWithClaims("multi"), node: zonedNode(map[string]string{gaZone: "zone-c"}), want: conflict},
		{name: "a malformed zone label is ignored and the pod skipped", pod: podWithClaims("bad"), node: zonedNode(map[string]string{gaZone: "zone-c"}), wantPreFilter: skip},
		{name: "a volume without topology labels is skipped", pod: podWithClaims("none"), node: zoneA, wantPreFilter: skip},
		{name: "every volume must match", pod: podWithClaims("a", "region"), node: zonedNode(map[string]string{gaZone: "zone-a", gaRegion: "r2"}), want: conflict},
		{name: "an unbound claim waiting for its consumer is skipped", pod: podWithClaims("wait"), node: zoneA, wantPreFilter: skip},
		{name: "an unbound claim waiting for its consumer does not hide a bound one", pod: podWithClaims("wait", "a"), node: zonedNode(map[string]string{gaZone: "zone-b"}), want: conflict},
		{name: "a claim without a name is rejected", pod: podWithClaims(""), node: zoneA, wantPreFilter: unresolvable("PersistentVolumeClaim had no name")},
		{name: "a missing claim is rejected", pod: podWithClaims("ghost"), node: zoneA, wantPreFilter: unresolvable(`persistentvolumeclaim "ghost" not found`)},
		{name: "a missing volume is rejected", pod: podWithClaims("lost"), node: zoneA, wantPreFilter: unresolvable(`persistentvolume "pv-lost" not found`)},
		{name: "an unbound claim of an immediate class is rejected", pod: podWithClaims("now"), node: zoneA, wantPreFilter: unresolvable("PersistentVolume had no name")},
		{name: "an unbound claim without a class is rejected", pod: podWithClaims("classless"), node: zoneA, wantPreFilter: unresolvable("PersistentVolumeClaim had no pv name and storageClass name")},
		{name: "an unbound claim of a missing class is rejected", pod: podWithClaims("missing-class"), node: zoneA, wantPreFilter: unresolvable(`storageclass.storage.k8s.io "gone" not found`)},
		{name: "an unbound claim of a class without binding mode is rejected", pod: podWithClaims("unset"), node: zoneA, wantPreFilter: unresolvable(`VolumeBindingMode not set for StorageClass "unset"`)},
		{
			name: "a failing lister is an error", pod: podWithClaims("a"), node: zoneA,
			listers:       &fwk.Listers{PersistentVolumeClaims: objects[*v1.PersistentVolumeClaim]{err: errors.New("boom")}},
			wantPreFilter: status(fwk.Error, "boom"),
		},
		{name: "no listers means no claims", pod: podWithClaims("a"), node: zoneA, listers: &fwk.Listers{}, wantPreFilter: unresolvable(`persistentvolumeclaim "a" not found`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			l := listers
			if tt.listers != nil {
				l = *tt.listers
			}
			var pl filter.VolumeZone
			state := fwk.NewCycleState([]*nodeinfo.NodeInfo{tt.node}).SetListers(l)
			_, got := pl.PreFilter(context.Background(), state, tt.pod, state.AllNodes())
			if !sameStatus(got, tt.wantPreFilter) {
				t.Fatalf("PreFilter = %v, want %v", got, tt.wantPreFilter)
			}
			if !got.IsSuccess() {
				return
			}
			if got := pl.Filter(context.Background(), state, tt.pod, tt.node); !sameStatus(got, tt.want) {
				t.Errorf("Filter = %v, want %v", got, tt.want)
			}
			// ExplainFilter has something to say exactly where Filter rejects.
			if details := pl.ExplainFilter(context.Background(), state, tt.pod, tt.node); (len(details) > 0) != (tt.want != nil) {
				t.Errorf("ExplainFilter = %v, while Filter says %v", details, tt.want)
			}
			// Without PreFilter's state, Filter finds the volumes itself.
			fresh := fwk.NewCycleState(nil).SetListers(l)
			if got := pl.Filter(context.Background(), fresh, tt.pod, tt.node); !sameStatus(got, tt.want) {
				t.Errorf("Filter without PreFilter = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestVolumeZoneFilterWithNilState(t *testing.T) {
	t.Parallel()
	var pl filter.VolumeZone
	node := zonedNode(map[string]string{gaZone: "zone-a"})
	if got := pl.Filter(context.Background(), nil, podWithClaims(), node); got != nil {
		t.Errorf("Filter(no volumes) = %v, want nil", got)
	}
	want := `persistentvolumeclaim "a" not found`
	if got := pl.Filter(context.Background(), nil, podWithClaims("a"), node); got.Code() != fwk.UnschedulableAndUnresolvable || got.Message() != want {
		t.Errorf("Filter(claim, nil state) = %v, want UnschedulableAndUnresolvable %q", got, want)
	}
	if got := pl.Filter(context.Background(), nil, podWithClaims("a"), nodeinfo.New(nil)); got.Code() != fwk.Error {
		t.Errorf("Filter(nil node) = %v, want Error", got)
	}
}

func TestVolumeZoneExplainNamesTheVolumeAndTheNodesLabel(t *testing.T) {
	t.Parallel()
	pvs := []*v1.PersistentVolume{
		volume("pv-a", map[string]string{gaZone: "zone-a"}),
		volume("pv-multi", map[string]string{gaZone: "zone-a__zone-b"}),
		volume("pv-beta", map[string]string{betaZone: "zone-a"}),
		volume("pv-region", map[string]string{gaRegion: "r1"}),
	}
	claims := []*v1.PersistentVolumeClaim{claim("a", "pv-a", ""), claim("multi", "pv-multi", ""), claim("beta", "pv-beta", ""), claim("region", "pv-region", "")}
	listers := volumeListers(claims, pvs, nil)
	tests := []struct {
		name string
		pod  *v1.Pod
		node map[string]string
		want []string
	}{
		{"a volume in another zone", podWithClaims("a"), map[string]string{gaZone: "zone-b"},
			[]string{"volume pv-a is in topology.kubernetes.io/zone=zone-a; the node has topology.kubernetes.io/zone=zone-b"}},
		{"a multi-zone volume lists its zones", podWithClaims("multi"), map[string]string{gaZone: "zone-c"},
			[]string{"volume pv-multi is in topology.kubernetes.io/zone=zone-a or zone-b; the node has topology.kubernetes.io/zone=zone-c"}},
		{"a beta label is compared with the node's GA label", podWithClaims("beta"), map[string]string{gaZone: "zone-c"},
			[]string{"volume pv-beta is in failure-domain.beta.kubernetes.io/zone=zone-a; the node has topology.kubernetes.io/zone=zone-c"}},
		{"a node without the label says so", podWithClaims("a", "region"), map[string]string{gaRegion: "r2"},
			[]string{
				"volume pv-a is in topology.kubernetes.io/zone=zone-a; the node has no topology.kubernetes.io/zone label",
				"volume pv-region is in topology.kubernetes.io/region=r1; the node has topology.kubernetes.io/region=r2",
			}},
		{"a matching node has nothing to explain", podWithClaims("a"), map[string]string{gaZone: "zone-a"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			var got []string
			state := fwk.NewCycleState(nil).SetListers(listers)
			for _, d := range (&filter.VolumeZone{}).ExplainFilter(context.Background(), state, tt.pod, zonedNode(tt.node)) {
				got = append(got, d.Message)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("ExplainFilter = %q, want %q", got, tt.want)
			}
		})
	}
}
