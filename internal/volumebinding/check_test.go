package volumebinding_test

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/internal/volumebinding"
)

func TestCheck(t *testing.T) {
	t.Parallel()
	a, b := nodeIn("a", "zone-1"), nodeIn("b", "zone-2")
	const (
		nodeConflict   = volumebinding.NodeConflict
		bindConflict   = volumebinding.BindConflict
		notEnoughSpace = volumebinding.NotEnoughSpace
		pvNotExist     = volumebinding.PVNotExist
	)
	waiting := func(opts ...claimOpt) *v1.PersistentVolumeClaim {
		return claim("c", append([]claimOpt{inClass("local"), requesting("5Gi"), accessing(v1.ReadWriteOnce)}, opts...)...)
	}
	objs := func(extra ...runtime.Object) []runtime.Object {
		return append([]runtime.Object{localClass, csiClass, plainClass, csiDriver}, extra...)
	}
	with := func(pv *v1.PersistentVolume, f func(*v1.PersistentVolume)) *v1.PersistentVolume {
		f(pv)
		return pv
	}
	migrated := func(node, plugin string) *storagev1.CSINode {
		return &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: node, Annotations: map[string]string{v1.MigratedPluginsAnnotationKey: "kubernetes.io/cinder," + plugin}}}
	}
	gcePD := func(pv *v1.PersistentVolume) {
		pv.Spec.GCEPersistentDisk = &v1.GCEPersistentDiskVolumeSource{PDName: "disk"}
	}
	inZone1 := requiring(in(v1.LabelTopologyZone, "zone-1"))
	gkeA := nodeIn("a", "zone-1", "topology.gke.io/zone", "zone-1")

	tests := []struct {
		name    string
		objs    []runtime.Object
		pod     *v1.Pod
		node    node
		want    volumebinding.Conflicts
		wantErr string
	}{
		// Bound claims.
		{name: "a bound volume on the node's host fits", objs: objs(claim("c", boundTo("pv")), volume("pv", "local", "1Gi", onHost("a"))), node: a},
		{name: "a bound volume on another host conflicts", objs: objs(claim("c", boundTo("pv")), volume("pv", "local", "1Gi", onHost("b"))), node: a, want: nodeConflict},
		{name: "a bound volume without affinity fits any node", objs: objs(claim("c", boundTo("pv")), volume("pv", "local", "1Gi")), node: a},
		{name: "a claim bound to a missing volume conflicts", objs: objs(claim("c", boundTo("pv"))), node: a, want: pvNotExist},
		{
			name: "matchFields on the node name are ignored, as kube-scheduler matches labels only",
			objs: objs(claim("c", boundTo("pv")), volume("pv", "local", "1Gi", func(pv *v1.PersistentVolume) {
				pv.Spec.NodeAffinity = &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
					MatchFields: []v1.NodeSelectorRequirement{in("metadata.name", "b")},
				}}}}
			})),
			node: a,
		},
		{
			name: "an affinity with an unknown operator admits no node",
			objs: objs(claim("c", boundTo("pv")), volume("pv", "local", "1Gi", requiring(v1.NodeSelectorRequirement{Key: v1.LabelHostname, Operator: "Near", Values: []string{"a"}}))),
			node: a, want: nodeConflict,
		},
		{
			name: "an affinity without required terms admits every node",
			objs: objs(claim("c", boundTo("pv")), volume("pv", "local", "1Gi", func(pv *v1.PersistentVolume) { pv.Spec.NodeAffinity = &v1.VolumeNodeAffinity{} })),
			node: a,
		},

		// Matching free volumes.
		{name: "a waiting claim binds a free volume on the node", objs: objs(waiting(), volume("pv", "local", "10Gi", onHost("a"))), node: a},
		{name: "a waiting claim finds no volume on another node", objs: objs(waiting(), volume("pv", "local", "10Gi", onHost("a"))), node: b, want: bindConflict},
		{name: "a volume too small does not match", objs: objs(waiting(), volume("pv", "local", "1Gi")), node: a, want: bindConflict},
		{name: "a volume of another class does not match", objs: objs(waiting(), volume("pv", "csi", "10Gi")), node: a, want: bindConflict},
		{name: "a volume lacking an access mode does not match", objs: objs(waiting(accessing(v1.ReadWriteMany)), volume("pv", "local", "10Gi")), node: a, want: bindConflict},
		{
			name: "a volume of another volume mode does not match",
			objs: objs(waiting(), with(volume("pv", "local", "10Gi"), func(pv *v1.PersistentVolume) { pv.Spec.VolumeMode = new(v1.PersistentVolumeBlock) })),
			node: a, want: bindConflict,
		},
		{
			name: "a volume of another attributes class does not match",
			objs: objs(waiting(), with(volume("pv", "local", "10Gi"), func(pv *v1.PersistentVolume) { pv.Spec.VolumeAttributesClassName = new("gold") })),
			node: a, want: bindConflict,
		},
		{
			name: "a volume outside the claim's selector does not match",
			objs: objs(waiting(selecting(&metav1.LabelSelector{MatchLabels: map[string]string{"tier": "fast"}})), volume("pv", "local", "10Gi", labelled("tier", "slow"))),
			node: a, want: bindConflict,
		},
		{
			name: "a volume inside the claim's selector matches",
			objs: objs(waiting(selecting(&metav1.LabelSelector{MatchLabels: map[string]string{"tier": "fast"}})), volume("pv", "local", "10Gi", labelled("tier", "fast"))),
			node: a,
		},
		{
			name: "a released volume does not match",
			objs: objs(waiting(), with(volume("pv", "local", "10Gi"), func(pv *v1.PersistentVolume) { pv.Status.Phase = v1.VolumeReleased })),
			node: a, want: bindConflict,
		},
		{
			name: "a volume being deleted does not match",
			objs: objs(waiting(), with(volume("pv", "local", "10Gi"), func(pv *v1.PersistentVolume) { pv.DeletionTimestamp = &metav1.Time{} })),
			node: a, want: bindConflict,
		},
		{
			name: "a volume claimed by another claim does not match",
			objs: objs(waiting(), with(volume("pv", "local", "10Gi"), func(pv *v1.PersistentVolume) {
				pv.Spec.ClaimRef = &v1.ObjectReference{Namespace: "default", Name: "other"}
			})),
			node: a, want: bindConflict,
		},
		{
			name: "two claims cannot take the same volume",
			objs: objs(waiting(), claim("d", inClass("local"), requesting("1Gi")), volume("pv", "local", "10Gi")),
			pod:  podUsing("c", "d"), node: a, want: bindConflict,
		},
		{
			name: "a volume pre-bound to the claim is its only choice",
			objs: objs(waiting(),
				with(volume("mine", "local", "10Gi", onHost("b")), func(pv *v1.PersistentVolume) {
					pv.Spec.ClaimRef = &v1.ObjectReference{Namespace: "default", Name: "c"}
				}),
				volume("free", "local", "10Gi", onHost("a"))),
			node: a, want: bindConflict,
		},
		{
			name: "a volume pre-bound to the claim needs not be available",
			objs: objs(waiting(), with(volume("mine", "local", "10Gi"), func(pv *v1.PersistentVolume) {
				pv.Spec.ClaimRef = &v1.ObjectReference{Namespace: "default", Name: "c", UID: "uid-c"}
				pv.Status.Phase = v1.VolumeReleased
			})),
			node: a,
		},
		{
			name: "a pre-binding to another claim of the same name does not count",
			objs: objs(waiting(), with(volume("mine", "local", "10Gi"), func(pv *v1.PersistentVolume) {
				pv.Spec.ClaimRef = &v1.ObjectReference{Namespace: "default", Name: "c", UID: "uid-old"}
			})),
			node: a, want: bindConflict,
		},

		// Provisioning.
		{name: "a claim without a volume is provisioned when its class can", objs: objs(claim("c", inClass("plain"), requesting("5Gi"))), node: a},
		{
			name: "allowed topologies that exclude the node prevent provisioning",
			objs: objs(claim("c", inClass("zoned")), class("zoned", storagev1.VolumeBindingWaitForFirstConsumer, "plain.example.com",
				v1.TopologySelectorTerm{MatchLabelExpressions: []v1.TopologySelectorLabelRequirement{{Key: v1.LabelTopologyZone, Values: []string{"zone-2"}}}})),
			node: a, want: bindConflict,
		},
		{
			name: "allowed topologies that include the node allow provisioning",
			objs: objs(claim("c", inClass("zoned")), class("zoned", storagev1.VolumeBindingWaitForFirstConsumer, "plain.example.com",
				v1.TopologySelectorTerm{},
				v1.TopologySelectorTerm{MatchLabelExpressions: []v1.TopologySelectorLabelRequirement{{Key: v1.LabelTopologyZone, Values: []string{"zone-1"}}}})),
			node: a,
		},
		{
			name: "allowed topologies of only empty terms exclude every node",
			objs: objs(claim("c", inClass("zoned")), class("zoned", storagev1.VolumeBindingWaitForFirstConsumer, "plain.example.com", v1.TopologySelectorTerm{})),
			node: a, want: bindConflict,
		},
		{
			name: "a class without provisioner cannot provision",
			objs: objs(claim("c", inClass("none")), class("none", storagev1.VolumeBindingWaitForFirstConsumer, "")),
			node: a, want: bindConflict,
		},
		{name: "a capacity in the node's zone with room allows provisioning", objs: objs(claim("c", inClass("csi"), requesting("5Gi")), storageCapacity("cap", "csi", "10Gi", "zone-1")), node: a},
		{name: "a capacity in another zone does not count", objs: objs(claim("c", inClass("csi"), requesting("5Gi")), storageCapacity("cap", "csi", "10Gi", "zone-1")), node: b, want: notEnoughSpace},
		{name: "a capacity without room does not count", objs: objs(claim("c", inClass("csi"), requesting("5Gi")), storageCapacity("cap", "csi", "4Gi", "zone-1")), node: a, want: notEnoughSpace},
		{name: "a capacity of another class does not count", objs: objs(claim("c", inClass("csi"), requesting("5Gi")), storageCapacity("cap", "plain", "10Gi", "zone-1")), node: a, want: notEnoughSpace},
		{name: "a capacity without node topology reaches no node", objs: objs(claim("c", inClass("csi"), requesting("5Gi")), storageCapacity("cap", "csi", "10Gi", "")), node: a, want: notEnoughSpace},
		{
			name: "the maximum volume size wins over the capacity",
			objs: objs(claim("c", inClass("csi"), requesting("5Gi")), func() *storagev1.CSIStorageCapacity {
				c := storageCapacity("cap", "csi", "10Gi", "zone-1")
				c.MaximumVolumeSize = new(resource.MustParse("4Gi"))
				return c
			}()),
			node: a, want: notEnoughSpace,
		},
		{name: "a claim without a size needs no capacity", objs: objs(claim("c", inClass("csi"))), node: a},
		{
			name: "a driver that does not publish capacities needs none",
			objs: []runtime.Object{csiClass, claim("c", inClass("csi"), requesting("5Gi")), &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: "csi.example.com"}}},
			node: a,
		},
		{name: "a claim provisioned for another node fits no other", objs: objs(claim("c", inClass("plain"), selectedFor("b"))), node: a, want: bindConflict},
		{name: "a claim provisioned for the node is provisioned there", objs: objs(claim("c", inClass("plain"), selectedFor("a"))), node: a},
		{
			name: "a claim provisioned for the node still needs capacity",
			objs: objs(claim("c", inClass("csi"), requesting("5Gi"), selectedFor("a"))),
			node: a, want: notEnoughSpace,
		},

		// Several at once.
		{
			name: "a node conflict does not stop the search for volumes",
			objs: objs(claim("bound", boundTo("pv")), volume("pv", "local", "1Gi", onHost("b")), waiting()),
			pod:  podUsing("bound", "c"), node: a, want: nodeConflict | bindConflict,
		},
		{
			name: "a missing volume and missing room are both reported",
			objs: objs(claim("bound", boundTo("pv")), claim("c", inClass("csi"), requesting("5Gi"))),
			pod:  podUsing("bound", "c"), node: a, want: notEnoughSpace | pvNotExist,
		},
		{
			name: "claims provisioned for the node are checked before unmatched ones",
			objs: objs(claim("c", inClass("csi"), requesting("5Gi"), selectedFor("a")), claim("d", inClass("local"))),
			pod:  podUsing("d", "c"), node: a, want: notEnoughSpace,
		},

		// Errors.
		{
			name:    "a claim selector that does not parse is an error",
			objs:    objs(waiting(selecting(&metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: "Bad"}}}))),
			node:    a,
			wantErr: `error creating internal label selector for claim: default/c: "Bad" is not a valid label selector operator`,
		},

		// CSI migration of bound in-tree volumes.
		{
			name: "a migrated GCE disk needs the CSI driver's zone label",
			objs: objs(claim("c", boundTo("pv")), volume("pv", "local", "1Gi", inZone1, gcePD), migrated("a", "kubernetes.io/gce-pd")),
			node: a, want: nodeConflict,
		},
		{name: "a migrated GCE disk fits a node with the CSI zone label", objs: objs(claim("c", boundTo("pv")), volume("pv", "local", "1Gi", inZone1, gcePD), migrated("a", "kubernetes.io/gce-pd")), node: gkeA},
		{
			name: "a GCE disk on a node that did not migrate it keeps its affinity",
			objs: objs(claim("c", boundTo("pv")), volume("pv", "local", "1Gi", inZone1, gcePD), migrated("a", "kubernetes.io/aws-ebs")),
			node: a,
		},
		{
			name: "a migrated GCE disk gets its affinity from its zone label",
			objs: objs(claim("c", boundTo("pv")), volume("pv", "local", "1Gi", labelled(v1.LabelTopologyZone, "zone-1"), gcePD), migrated("a", "kubernetes.io/gce-pd")),
			node: a, want: nodeConflict,
		},
		{
			name: "a migrated GCE disk from its zone label fits a node with the CSI zone",
			objs: objs(claim("c", boundTo("pv")), volume("pv", "local", "1Gi", labelled(v1.LabelTopologyZone, "zone-1"), gcePD), migrated("a", "kubernetes.io/gce-pd")),
			node: gkeA,
		},
		{
			name:    "a migrated GCE disk in zones of two regions is an error",
			objs:    objs(claim("c", boundTo("pv")), volume("pv", "local", "1Gi", labelled(v1.LabelTopologyZone, "us-east1-a__us-west1-a"), gcePD), migrated("a", "kubernetes.io/gce-pd")),
			node:    a,
			wantErr: "could not translate pv: failed to get region from zones: multiple or no regions gotten from zones, got: map[us-east1:{} us-west1:{}]",
		},
		{
			name: "a migrated EBS volume with a malformed ID is an error",
			objs: objs(claim("c", boundTo("pv")), volume("pv", "local", "1Gi", func(pv *v1.PersistentVolume) {
				pv.Spec.AWSElasticBlockStore = &v1.AWSElasticBlockStoreVolumeSource{VolumeID: "aws://us-east-1a/x/y"}
			}), migrated("a", "kubernetes.io/aws-ebs")),
			node:    a,
			wantErr: "could not translate pv: failed to translate Kubernetes ID to EBS Volume ID Invalid format for AWS volume (aws://us-east-1a/x/y)",
		},
		{
			name: "a beta region becomes the GA region once migrated",
			objs: objs(claim("c", boundTo("pv")), volume("pv", "local", "1Gi",
				requiring(in(v1.LabelFailureDomainBetaZone, "zone-1"), in(v1.LabelFailureDomainBetaRegion, "r1")),
				func(pv *v1.PersistentVolume) { pv.Spec.Cinder = &v1.CinderPersistentVolumeSource{VolumeID: "v"} },
			), migrated("a", "kubernetes.io/cinder")),
			node: nodeIn("a", "", "topology.cinder.csi.openstack.org/zone", "zone-1", v1.LabelTopologyRegion, "r1"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			pod := tt.pod
			if pod == nil {
				pod = podUsing("c")
			}
			claims := newClaims(t, pod, tt.objs...)
			got, status := claims.Check(tt.node.name, tt.node.labels, nil)
			if tt.wantErr != "" {
				if status.Code() != fwk.Error || status.Message() != tt.wantErr {
					t.Fatalf("Check = %v, want Error %q", status, tt.wantErr)
				}
				return
			}
			if status != nil || got != tt.want {
				t.Errorf("Check = %q, %v; want %q", got.Reasons(), status, tt.want.Reasons())
			}
		})
	}
}

func TestCheckWithoutClaimsFitsEveryNode(t *testing.T) {
	t.Parallel()
	var claims *volumebinding.Claims
	if got, status := claims.Check("a", nil, nil); got != 0 || status != nil {
		t.Errorf("nil Claims: Check = %v, %v; want no conflict", got, status)
	}
}

func TestCheckDoesNotAllocate(t *testing.T) {
	a := nodeIn("a", "zone-1")
	claims := newClaims(t, podUsing("bound", "c", "d"),
		localClass, csiClass, csiDriver,
		claim("bound", boundTo("pv")), volume("pv", "local", "1Gi", onHost("a")),
		claim("c", inClass("local"), requesting("1Gi")), volume("free", "local", "2Gi", onHost("a")),
		claim("d", inClass("csi"), requesting("1Gi")), storageCapacity("cap", "csi", "10Gi", "zone-1"),
	)
	if got, status := claims.Check(a.name, a.labels, nil); got != 0 || status != nil {
		t.Fatalf("Check = %v, %v; want a fit", got.Reasons(), status)
	}
	if n := testing.AllocsPerRun(100, func() { claims.Check(a.name, a.labels, nil) }); n != 0 {
		t.Errorf("Check allocates %v times per call, want 0", n)
	}
}

func TestCheckPicksTheSmallestVolume(t *testing.T) {
	t.Parallel()
	// The scorer shows which volume was chosen: 5Gi of 10Gi is 50% used
	// (score 50 with the default shape), of 20Gi 25% (score 75).
	claims := newClaims(t, podUsing("c"), localClass,
		claim("c", inClass("local"), requesting("5Gi")),
		volume("big", "local", "20Gi"), volume("small", "local", "10Gi"), volume("tiny", "local", "1Gi"))
	scorer := volumebinding.NewScorer(defaultShape)
	a := nodeIn("a", "")
	var pl volumebinding.Placement
	if got, status := claims.Check(a.name, a.labels, &pl); got != 0 || status != nil {
		t.Fatalf("Check = %v, %v; want a fit", got.Reasons(), status)
	}
	if got := scorer.Score(&pl); got != 50 {
		t.Errorf("Score = %d, want 50 (the 10Gi volume)", got)
	}
}

func TestClaimsAreSortedBySizeBeforeMatching(t *testing.T) {
	t.Parallel()
	// The small claim comes second in the pod but picks first: it takes
	// the only ReadWriteMany volume, which the big claim, picking first,
	// would have taken for being the smaller of the two it fits.
	claims := newClaims(t, podUsing("big", "small"), localClass,
		claim("big", inClass("local"), requesting("8Gi"), accessing(v1.ReadWriteOnce)),
		claim("small", inClass("local"), requesting("1Gi"), accessing(v1.ReadWriteMany)),
		volume("shared", "local", "10Gi", func(pv *v1.PersistentVolume) {
			pv.Spec.AccessModes = []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce, v1.ReadWriteMany}
		}),
		volume("plain", "local", "20Gi"))
	a := nodeIn("a", "")
	if got, status := claims.Check(a.name, a.labels, nil); got != 0 || status != nil {
		t.Errorf("Check = %v, %v; want a fit", got.Reasons(), status)
	}
}

func TestCheckIsSafeForConcurrentUse(t *testing.T) {
	t.Parallel()
	// Volumes compile their affinity on first use: nodes checked at once
	// race for it.
	objs := []runtime.Object{localClass, claim("c", inClass("local"), requesting("1Gi"))}
	for _, host := range []string{"a", "b", "c", "d"} {
		objs = append(objs, volume("pv-"+host, "local", "10Gi", onHost(host)), volume("zoned-"+host, "local", "20Gi", inZone(host)))
	}
	claims := newClaims(t, podUsing("c"), objs...)
	done := make(chan volumebinding.Conflicts)
	for range 8 {
		for _, host := range []string{"a", "b", "c", "d", "e"} {
			go func() {
				got, _ := claims.Check(host, map[string]string{v1.LabelHostname: host, v1.LabelTopologyZone: "x"}, nil)
				done <- got
			}()
		}
	}
	var rejected int
	for range 8 * 5 {
		if <-done != 0 {
			rejected++
		}
	}
	if rejected != 8 {
		t.Errorf("%d checks rejected, want 8 (node e's)", rejected)
	}
}

func inZone(zone string) volumeOpt { return requiring(in(v1.LabelTopologyZone, zone)) }
