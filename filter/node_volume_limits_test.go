package filter_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubesched/kubesched/feature"
	"github.com/kubesched/kubesched/filter"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/names"
	"github.com/kubesched/kubesched/nodeinfo"
)

// csiPV is a PersistentVolume of a CSI driver.
func csiPV(name, driver, handle string) *v1.PersistentVolume {
	return &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1.PersistentVolumeSpec{
		PersistentVolumeSource: v1.PersistentVolumeSource{CSI: &v1.CSIPersistentVolumeSource{Driver: driver, VolumeHandle: handle}},
	}}
}

// inTreePV is a PersistentVolume with an in-tree source.
func inTreePV(name string, src v1.PersistentVolumeSource) *v1.PersistentVolume {
	return &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1.PersistentVolumeSpec{PersistentVolumeSource: src}}
}

// provisionedBy is a StorageClass of provisioner.
func provisionedBy(name, provisioner string) *storagev1.StorageClass {
	return &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: provisioner}
}

// csiNode is node's CSINode with drivers.
func csiNode(node string, drivers ...storagev1.CSINodeDriver) *storagev1.CSINode {
	return &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: node}, Spec: storagev1.CSINodeSpec{Drivers: drivers}}
}

// limitOf is a CSINode driver entry allowing max volumes.
func limitOf(driver string, max int32) storagev1.CSINodeDriver {
	return storagev1.CSINodeDriver{Name: driver, Allocatable: &storagev1.VolumeNodeResources{Count: &max}}
}

// attachment attaches pv to node through driver.
func attachment(name, node, driver, pv string) *storagev1.VolumeAttachment {
	return &storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: storagev1.VolumeAttachmentSpec{
		NodeName: node, Attacher: driver, Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: &pv},
	}}
}

// podNamed is a pod in "default" whose volumes, named v0, v1, ..., have
// the given sources.
func podNamed(name string, sources ...v1.VolumeSource) *v1.Pod {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + name)}}
	for i, s := range sources {
		pod.Spec.Volumes = append(pod.Spec.Volumes, v1.Volume{Name: fmt.Sprintf("v%d", i), VolumeSource: s})
	}
	return pod
}

// ownedBy makes c a claim controlled by pod.
func ownedBy(c *v1.PersistentVolumeClaim, pod *v1.Pod) *v1.PersistentVolumeClaim {
	c.OwnerReferences = []metav1.OwnerReference{{Kind: "Pod", Name: pod.Name, UID: pod.UID, Controller: new(true)}}
	return c
}

var ephemeralSource = v1.VolumeSource{Ephemeral: &v1.EphemeralVolumeSource{}}

func TestNodeVolumeLimits(t *testing.T) {
	t.Parallel()
	status := func(code fwk.Code, reason string) *fwk.Status {
		return fwk.NewStatus(code, reason).WithPlugin(names.NodeVolumeLimits)
	}
	exceeded := status(fwk.Unschedulable, filter.ErrReasonMaxVolumeCountExceeded)
	const ebs, gcePDDriver = "ebs.csi.aws.com", "pd.csi.storage.gke.io"
	objects := []runtime.Object{
		csiPV("pv-a1", "a", "h1"), csiPV("pv-a2", "a", "h2"), csiPV("pv-a3", "a", "h3"), csiPV("pv-a4", "a", "h4"), csiPV("pv-b1", "b", "h1"), csiPV("pv-collide", "a", "unbound-a"),
		inTreePV("pv-ebs", v1.PersistentVolumeSource{AWSElasticBlockStore: &v1.AWSElasticBlockStoreVolumeSource{VolumeID: "aws://zone/vol-1"}}),
		inTreePV("pv-nfs", v1.PersistentVolumeSource{NFS: &v1.NFSVolumeSource{Server: "s"}}),
		provisionedBy("class-a", "a"), provisionedBy("gp2", "kubernetes.io/aws-ebs"), provisionedBy("vsphere", "kubernetes.io/vsphere-volume"),
		claim("a1", "pv-a1", ""), claim("a2", "pv-a2", ""), claim("a3", "pv-a3", ""), claim("b1", "pv-b1", ""),
		claim("ebs", "pv-ebs", ""), claim("nfs", "pv-nfs", ""),
		claim("unbound-a", "", "class-a"), claim("unbound-a2", "", "class-a"), claim("unbound-gp2", "", "gp2"),
		claim("unbound-vsphere", "", "vsphere"), claim("classless", "", ""), claim("unknown-class", "", "gone"),
		claim("lost-volume", "pv-gone", "class-a"), claim("collide", "pv-collide", ""),
		ownedBy(claim("p-v0", "pv-a2", ""), podNamed("p")), claim("q-v0", "pv-a2", ""),
		csiNode("n", limitOf("a", 2), limitOf(ebs, 1), limitOf(gcePDDriver, 1)), csiNode("attached", limitOf("a", 2)),
		csiNode("zero", limitOf("a", 0)), csiNode("negative", limitOf("a", -1)),
		csiNode("unlimited", storagev1.CSINodeDriver{Name: "a"}), csiNode("b-only", storagev1.CSINodeDriver{Name: "b"}),
		attachment("va-attached", "attached", "a", "pv-a3"), attachment("va-other", "other", "a", "pv-a4"),
		&storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: "a"}, Spec: storagev1.CSIDriverSpec{PreventPodSchedulingIfMissing: new(true)}},
		&storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: "b"}, Spec: storagev1.CSIDriverSpec{PreventPodSchedulingIfMissing: new(false)}},
		&storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: ebs}, Spec: storagev1.CSIDriverSpec{PreventPodSchedulingIfMissing: new(true)}},
	}
	listers, err := fwk.NewListers(objects...)
	if err != nil {
		t.Fatal(err)
	}
	pod := func(sources ...v1.VolumeSource) *v1.Pod { return podNamed("p", sources...) }
	running := func(name string, sources ...v1.VolumeSource) *v1.Pod { return podNamed(name, sources...) }
	ebsInline := func(id string) v1.VolumeSource {
		return v1.VolumeSource{AWSElasticBlockStore: &v1.AWSElasticBlockStoreVolumeSource{VolumeID: id}}
	}
	gceInline := func(disk string) v1.VolumeSource {
		return v1.VolumeSource{GCEPersistentDisk: &v1.GCEPersistentDiskVolumeSource{PDName: disk}}
	}
	vsphereInline := v1.VolumeSource{VsphereVolume: &v1.VsphereVirtualDiskVolumeSource{VolumePath: "p"}}
	emptyDir := v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}

	tests := []struct {
		name          string
		pod           *v1.Pod
		node          string // "n" unless set
		running       []*v1.Pod
		scaling       bool
		wantPreFilter *fwk.Status
		want          *fwk.Status
		// detail is what ExplainFilter says where the limit is exceeded,
		// when the case checks it.
		detail string
	}{
		{name: "a pod without volumes is skipped", pod: pod(), wantPreFilter: skip},
		{name: "a pod with only local and NFS volumes is skipped", pod: pod(emptyDir, v1.VolumeSource{NFS: &v1.NFSVolumeSource{}}), wantPreFilter: skip},
		{name: "an inline vSphere volume is not skipped but never counts", pod: pod(vsphereInline), node: "zero"},
		{name: "a volume under the driver's limit fits, whatever is attached to other nodes", pod: pod(claimSource("a1")), running: []*v1.Pod{running("r", claimSource("a2"))}},
		{name: "a volume beyond the driver's limit is rejected", pod: pod(claimSource("a1")), running: []*v1.Pod{running("r", claimSource("a2"), claimSource("a3"))}, want: exceeded,
			detail: "driver a: the node attaches at most 2 volumes, 2 are in use and the pod adds 1"},
		{name: "a volume the node's pods already use adds nothing", pod: pod(claimSource("a1")), running: []*v1.Pod{running("r", claimSource("a1"), claimSource("a2"))}},
		{name: "a volume two pods on the node use counts once", pod: pod(claimSource("a1")), running: []*v1.Pod{running("r", claimSource("a2")), running("s", claimSource("a2"))}},
		{name: "the pod's own volumes count once each", pod: pod(claimSource("a1"), claimSource("a1"), claimSource("a2"))},
		{name: "volumes of another driver do not count against the limit", pod: pod(claimSource("a1")), running: []*v1.Pod{running("r", claimSource("b1"), claimSource("a2"))}},
		{name: "a driver already past its limit is not checked when the pod adds none of its volumes", pod: pod(claimSource("a1"), claimSource("b1")), node: "zero", running: []*v1.Pod{running("r", claimSource("a1"), claimSource("a2"))}},
		{name: "a node without a CSINode has no limits", pod: pod(claimSource("a1")), node: "nowhere", running: []*v1.Pod{running("r", claimSource("a2"), claimSource("a3"))}},
		{name: "a driver listed without a count has no limit", pod: pod(claimSource("a1"), claimSource("a2")), node: "unlimited"},
		{name: "a zero limit rejects any new volume", pod: pod(claimSource("a1")), node: "zero", want: exceeded},
		{name: "a negative limit rejects any new volume", pod: pod(claimSource("a1")), node: "negative", want: exceeded},
		{name: "a volume attached to the node counts", pod: pod(claimSource("a1")), node: "attached", running: []*v1.Pod{running("r", claimSource("a2"))}, want: exceeded},
		{name: "a volume attached to the node and used by a pod there counts once", pod: pod(claimSource("a1")), node: "attached", running: []*v1.Pod{running("r", claimSource("a3"))}},
		{name: "an attached volume the pod itself uses counts twice, as in kube-scheduler", pod: pod(claimSource("a3"), claimSource("a1")), node: "attached", want: exceeded},
		{name: "an unbound claim counts as a new volume of its class's provisioner", pod: pod(claimSource("unbound-a")), running: []*v1.Pod{running("r", claimSource("a1"), claimSource("a2"))}, want: exceeded},
		{name: "an unbound claim on the node and in the pod counts once", pod: pod(claimSource("unbound-a")), running: []*v1.Pod{running("r", claimSource("unbound-a"), claimSource("a1"))}},
		{name: "an unbound claim is not a volume whose handle is the claim's name", pod: pod(claimSource("unbound-a")), running: []*v1.Pod{running("r", claimSource("collide"), claimSource("a1"))}, want: exceeded},
		{name: "two unbound claims of one class are two volumes", pod: pod(claimSource("unbound-a"), claimSource("unbound-a2")), running: []*v1.Pod{running("r", claimSource("a1"))}, want: exceeded,
			detail: "driver a: the node attaches at most 2 volumes, 1 are in use and the pod adds 2"},
		{name: "a claim whose volume is missing counts through its class", pod: pod(claimSource("lost-volume")), running: []*v1.Pod{running("r", claimSource("a1"), claimSource("a2"))}, want: exceeded},
		{name: "an unbound claim without a class does not count", pod: pod(claimSource("classless")), node: "zero"},
		{name: "an unbound claim of a missing class does not count", pod: pod(claimSource("unknown-class")), node: "zero"},
		{name: "a volume neither CSI nor migratable does not count", pod: pod(claimSource("nfs")), node: "zero"},
		{name: "an in-tree EBS volume counts under the EBS CSI driver", pod: pod(claimSource("ebs")), running: []*v1.Pod{running("r", ebsInline("vol-2"))}, want: exceeded},
		{name: "an in-tree EBS volume and the same volume inline are one volume", pod: pod(claimSource("ebs")), running: []*v1.Pod{running("r", ebsInline("vol-1"))}},
		{name: "an unbound claim of an in-tree provisioner counts under its CSI driver", pod: pod(claimSource("unbound-gp2")), running: []*v1.Pod{running("r", claimSource("ebs"))}, want: exceeded},
		{name: "an unbound claim of a provisioner that never migrates does not count", pod: pod(claimSource("unbound-vsphere")), node: "zero"},
		{name: "inline GCE disks count once per disk", pod: pod(gceInline("d"), gceInline("d")), running: []*v1.Pod{running("r", gceInline("d"))}},
		{name: "a second inline GCE disk is rejected", pod: pod(gceInline("e")), running: []*v1.Pod{running("r", gceInline("d"))}, want: exceeded},
		{name: "a generic ephemeral volume counts through the claim named after pod and volume", pod: pod(ephemeralSource), running: []*v1.Pod{running("r", claimSource("a1"), claimSource("a3"))}, want: exceeded},
		{name: "a generic ephemeral volume already on the node adds nothing", pod: pod(ephemeralSource), running: []*v1.Pod{running("r", claimSource("a1"), claimSource("a2"))}},
		{
			name: "a missing claim is unresolvable", pod: pod(claimSource("ghost")), node: "nowhere",
			want: status(fwk.UnschedulableAndUnresolvable, `looking up PVC default/ghost: persistentvolumeclaim "ghost" not found`),
		},
		{
			name: "a missing ephemeral claim is unresolvable", pod: podNamed("x", ephemeralSource),
			want: status(fwk.UnschedulableAndUnresolvable, `looking up PVC default/x-v0: persistentvolumeclaim "x-v0" not found`),
		},
		{name: "a claim without a name is an error", pod: pod(claimSource("")), node: "nowhere", want: status(fwk.Error, "PersistentVolumeClaim had no name")},
		{
			name: "an ephemeral volume whose claim the pod does not own is an error", pod: podNamed("q", ephemeralSource),
			want: status(fwk.Error, "PVC default/q-v0 was not created for pod default/q (pod is not owner)"),
		},
		{
			name: "an inline EBS volume with a malformed ID is an error", pod: pod(ebsInline("aws://zone")),
			want: status(fwk.Error, "converting volume(v0) from inline to csi: failed to translate Kubernetes ID to EBS Volume ID Invalid format for AWS volume (aws://zone)"),
		},
		{name: "an inline EBS volume with a malformed ID is ignored on a node without a CSINode", pod: pod(ebsInline("aws://zone")), node: "nowhere"},
		{name: "a pod on the node with a claim without a name is an error", pod: pod(claimSource("b1")), running: []*v1.Pod{running("r", claimSource(""))}, want: status(fwk.Error, "PersistentVolumeClaim had no name")},
		{name: "a pod on the node with a missing claim is not counted", pod: pod(claimSource("a1")), running: []*v1.Pod{running("r", claimSource("ghost"), claimSource("a2"))}},
		{name: "pods on the node are not looked at where nothing is limited", pod: pod(claimSource("a1")), node: "unlimited", running: []*v1.Pod{running("r", claimSource(""))}},
		{
			name: "with volume limit scaling, a required driver missing from the CSINode rejects the node", pod: pod(claimSource("a1")), node: "b-only", scaling: true,
			want:   status(fwk.Unschedulable, "a CSI driver is not installed on the node"),
			detail: "the pod's volumes need CSI driver a, whose CSIDriver sets preventPodSchedulingIfMissing, and the node's CSINode does not list it",
		},
		{name: "with volume limit scaling, a required driver on the CSINode fits", pod: pod(claimSource("a1")), node: "unlimited", scaling: true},
		{name: "with volume limit scaling, a driver that does not require presence fits anywhere", pod: pod(claimSource("b1")), node: "nowhere", scaling: true},
		{name: "with volume limit scaling, a node without a CSINode lacks every required driver", pod: pod(claimSource("a1")), node: "nowhere", scaling: true, want: status(fwk.Unschedulable, "a CSI driver is not installed on the node"),
			detail: "the pod's volumes need CSI driver a, whose CSIDriver sets preventPodSchedulingIfMissing, and the node has no CSINode"},
		{name: "with volume limit scaling, an in-tree volume needs no driver on a node without a CSINode", pod: pod(claimSource("ebs")), node: "nowhere", scaling: true},
		{name: "with volume limit scaling, an in-tree volume needs its CSI driver on a node with a CSINode", pod: pod(claimSource("ebs")), node: "b-only", scaling: true, want: status(fwk.Unschedulable, ebs+" CSI driver is not installed on the node")},
		{name: "without volume limit scaling, a missing required driver does not matter", pod: pod(claimSource("a1")), node: "b-only"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			name := tt.node
			if name == "" {
				name = "n"
			}
			node := onNode(name, tt.running...)
			pl := &filter.NodeVolumeLimits{Features: &feature.Features{VolumeLimitScaling: tt.scaling}}
			state := fwk.NewCycleState([]*nodeinfo.NodeInfo{node}).SetListers(listers)
			_, got := pl.PreFilter(context.Background(), state, tt.pod, state.AllNodes())
			if !sameStatus(got, tt.wantPreFilter) {
				t.Fatalf("PreFilter = %v, want %v", got, tt.wantPreFilter)
			}
			if !got.IsSuccess() {
				return
			}
			if got := pl.Filter(context.Background(), state, tt.pod, node); !sameStatus(got, tt.want) {
				t.Errorf("Filter = %v, want %v", got, tt.want)
			}
			fresh := fwk.NewCycleState(nil).SetListers(listers)
			if got := pl.Filter(context.Background(), fresh, tt.pod, node); !sameStatus(got, tt.want) {
				t.Errorf("Filter without PreFilter = %v, want %v", got, tt.want)
			}
			// ExplainFilter speaks exactly where the limit is exceeded or
			// a required driver is missing.
			details := pl.ExplainFilter(context.Background(), state, tt.pod, node)
			missingDriver := tt.want != nil && strings.HasSuffix(tt.want.Message(), "CSI driver is not installed on the node")
			if (len(details) > 0) != (tt.want == exceeded || missingDriver) {
				t.Errorf("ExplainFilter = %v, while Filter says %v", details, tt.want)
			}
			if tt.detail != "" && (len(details) != 1 || details[0].Message != tt.detail) {
				t.Errorf("ExplainFilter = %v, want %q", details, tt.detail)
			}
		})
	}
}

func TestNodeVolumeLimitsBadInputIsAStatusNotAPanic(t *testing.T) {
	t.Parallel()
	var pl filter.NodeVolumeLimits
	ctx := context.Background()
	pod := podNamed("p", claimSource("c"))
	if got := pl.Filter(ctx, nil, pod, nodeinfo.New(nil)); got.Code() != fwk.Error {
		t.Errorf("Filter(nil node) = %v, want Error", got)
	}
	want := `looking up PVC default/c: persistentvolumeclaim "c" not found`
	if got := pl.Filter(ctx, nil, pod, onNode("n")); got.Code() != fwk.UnschedulableAndUnresolvable || got.Message() != want {
		t.Errorf("Filter with nil state = %v, want UnschedulableAndUnresolvable %q", got, want)
	}
	if got := pl.Filter(ctx, nil, podNamed("p"), onNode("n")); got != nil {
		t.Errorf("Filter of a pod without volumes = %v, want nil", got)
	}
	failing := fwk.Listers{CSINodes: objects[*storagev1.CSINode]{err: errors.New("boom")}}
	state := fwk.NewCycleState(nil).SetListers(failing)
	if _, got := pl.PreFilter(ctx, state, pod, nil); got.Code() != fwk.Error || got.Message() != "boom" {
		t.Errorf("PreFilter with a failing lister = %v, want Error boom", got)
	}
}

// volumeLimitsCluster is n nodes, each with a CSINode limiting driver "a"
// to 12 volumes, a VolumeAttachment and 4 pods, each using two of 4 CSI
// volumes and a generic ephemeral volume of an unbound claim: 9 volumes.
// The pod brings a bound and an unbound claim.
func volumeLimitsCluster(n int) ([]*nodeinfo.NodeInfo, fwk.Listers, *v1.Pod) {
	objs := []runtime.Object{provisionedBy("class-a", "a"), csiPV("pv-new", "a", "new"), claim("new", "pv-new", "")}
	objs = append(objs, claim("unbound", "", "class-a"))
	var infos []*nodeinfo.NodeInfo
	for i := range n {
		node := fmt.Sprintf("node-%d", i)
		objs = append(objs, csiNode(node, limitOf("a", 12)))
		var pods []*v1.Pod
		for j := range 4 {
			c := fmt.Sprintf("%s-c%d", node, j)
			objs = append(objs, csiPV(c, "a", c), claim(c, c, ""))
			p := podNamed(fmt.Sprintf("%s-p%d", node, j), claimSource(c), claimSource(fmt.Sprintf("%s-c%d", node, (j+1)%4)), ephemeralSource)
			objs = append(objs, ownedBy(claim(p.Name+"-v2", "", "class-a"), p))
			pods = append(pods, p)
		}
		objs = append(objs, csiPV(node+"-attached", "a", node+"-attached"), attachment(node, node, "a", node+"-attached"))
		infos = append(infos, onNode(node, pods...))
	}
	l, err := fwk.NewListers(objs...)
	if err != nil {
		panic(err)
	}
	return infos, l, podNamed("new", claimSource("new"), claimSource("unbound"))
}

func TestNodeVolumeLimitsFilterDoesNotAllocate(t *testing.T) {
	infos, l, pod := volumeLimitsCluster(20)
	var pl filter.NodeVolumeLimits
	state := fwk.NewCycleState(infos).SetListers(l)
	if _, s := pl.PreFilter(context.Background(), state, pod, infos); s != nil {
		t.Fatal(s)
	}
	if s := pl.Filter(context.Background(), state, pod, infos[0]); s != nil {
		t.Fatalf("Filter = %v, want nil: 9 volumes and 2 new of 12", s)
	}
	allocs := testing.AllocsPerRun(100, func() {
		for _, ni := range infos {
			pl.Filter(context.Background(), state, pod, ni)
		}
	})
	if allocs != 0 {
		t.Errorf("Filter allocates %v times per run over %d nodes", allocs, len(infos))
	}
}

func BenchmarkNodeVolumeLimits(b *testing.B) {
	var pl filter.NodeVolumeLimits
	ctx := context.Background()
	for _, n := range []int{100, 5000} {
		infos, l, pod := volumeLimitsCluster(n)
		b.Run(fmt.Sprintf("%dnodes/PreFilter", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, s := pl.PreFilter(ctx, fwk.NewCycleState(infos).SetListers(l), pod, infos); s != nil {
					b.Fatal(s)
				}
			}
		})
		state := fwk.NewCycleState(infos).SetListers(l)
		if _, s := pl.PreFilter(ctx, state, pod, infos); s != nil {
			b.Fatal(s)
		}
		b.Run(fmt.Sprintf("%dnodes/Filter", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, ni := range infos {
					if s := pl.Filter(ctx, state, pod, ni); s != nil {
						b.Fatal(s)
					}
				}
			}
		})
	}
}
