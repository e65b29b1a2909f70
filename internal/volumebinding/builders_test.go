package volumebinding_test

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/internal/volumebinding"
)

// Small builders for claims, volumes and classes. Claims live in
// namespace "default", as does the pod.

type claimOpt func(*v1.PersistentVolumeClaim)

func claim(name string, opts ...claimOpt) *v1.PersistentVolumeClaim {
	c := &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID("uid-" + name)}}
	for _, o := range opts {
		o(c)
	}
	return c
}

func inClass(class string) claimOpt {
	return func(c *v1.PersistentVolumeClaim) { c.Spec.StorageClassName = &class }
}

// boundTo binds the claim to pv, completed as the PV controller does.
func boundTo(pv string) claimOpt {
	return func(c *v1.PersistentVolumeClaim) {
		c.Spec.VolumeName = pv
		metav1.SetMetaDataAnnotation(&c.ObjectMeta, "pv.kubernetes.io/bind-completed", "yes")
	}
}

func requesting(size string) claimOpt {
	return func(c *v1.PersistentVolumeClaim) {
		c.Spec.Resources.Requests = v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)}
	}
}

func accessing(modes ...v1.PersistentVolumeAccessMode) claimOpt {
	return func(c *v1.PersistentVolumeClaim) { c.Spec.AccessModes = modes }
}

func selectedFor(node string) claimOpt {
	return func(c *v1.PersistentVolumeClaim) {
		metav1.SetMetaDataAnnotation(&c.ObjectMeta, "volume.kubernetes.io/selected-node", node)
	}
}

func selecting(sel *metav1.LabelSelector) claimOpt {
	return func(c *v1.PersistentVolumeClaim) { c.Spec.Selector = sel }
}

type volumeOpt func(*v1.PersistentVolume)

// volume is an Available ReadWriteOnce volume of class and size.
func volume(name, class, size string, opts ...volumeOpt) *v1.PersistentVolume {
	pv := &v1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: v1.PersistentVolumeSpec{
			StorageClassName: class,
			Capacity:         v1.ResourceList{v1.ResourceStorage: resource.MustParse(size)},
			AccessModes:      []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce},
		},
		Status: v1.PersistentVolumeStatus{Phase: v1.VolumeAvailable},
	}
	for _, o := range opts {
		o(pv)
	}
	return pv
}

// requiring sets the volume's required node affinity to one term.
func requiring(reqs ...v1.NodeSelectorRequirement) volumeOpt {
	return func(pv *v1.PersistentVolume) {
		pv.Spec.NodeAffinity = &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{
			NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: reqs}},
		}}
	}
}

func in(key string, values ...string) v1.NodeSelectorRequirement {
	return v1.NodeSelectorRequirement{Key: key, Operator: v1.NodeSelectorOpIn, Values: values}
}

func onHost(host string) volumeOpt { return requiring(in(v1.LabelHostname, host)) }

func labelled(kv ...string) volumeOpt {
	return func(pv *v1.PersistentVolume) {
		for i := 0; i+1 < len(kv); i += 2 {
			metav1.SetMetaDataLabel(&pv.ObjectMeta, kv[i], kv[i+1])
		}
	}
}

// takenBy binds the volume to the claim, as the PV controller does.
func takenBy(claim string) volumeOpt {
	return func(pv *v1.PersistentVolume) {
		pv.Spec.ClaimRef = &v1.ObjectReference{Namespace: "default", Name: claim, UID: types.UID("uid-" + claim)}
		pv.Status.Phase = v1.VolumeBound
	}
}

func class(name string, mode storagev1.VolumeBindingMode, provisioner string, topologies ...v1.TopologySelectorTerm) *storagev1.StorageClass {
	return &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, VolumeBindingMode: &mode, Provisioner: provisioner, AllowedTopologies: topologies}
}

// Storage classes the tests share: "local" binds pre-created volumes only,
// "csi" provisions with a driver that publishes capacities, "plain"
// provisions with one that does not, "now" binds immediately.
var (
	localClass = class("local", storagev1.VolumeBindingWaitForFirstConsumer, "kubernetes.io/no-provisioner")
	csiClass   = class("csi", storagev1.VolumeBindingWaitForFirstConsumer, "csi.example.com")
	plainClass = class("plain", storagev1.VolumeBindingWaitForFirstConsumer, "plain.example.com")
	nowClass   = class("now", storagev1.VolumeBindingImmediate, "csi.example.com")
	csiDriver  = &storagev1.CSIDriver{ObjectMeta: metav1.ObjectMeta{Name: "csi.example.com"}, Spec: storagev1.CSIDriverSpec{StorageCapacity: new(true)}}
)

// storageCapacity is a capacity of class for nodes in zone (none: no
// node topology).
func storageCapacity(name, class, size, zone string) *storagev1.CSIStorageCapacity {
	q := resource.MustParse(size)
	c := &storagev1.CSIStorageCapacity{ObjectMeta: metav1.ObjectMeta{Namespace: "kube-system", Name: name}, StorageClassName: class, Capacity: &q}
	if zone != "" {
		c.NodeTopology = &metav1.LabelSelector{MatchLabels: map[string]string{v1.LabelTopologyZone: zone}}
	}
	return c
}

// podUsing is pod "p" in "default" mounting the named claims.
func podUsing(claims ...string) *v1.Pod {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "p", UID: "uid-p"}}
	for _, c := range claims {
		pod.Spec.Volumes = append(pod.Spec.Volumes, v1.Volume{Name: "v-" + c, VolumeSource: v1.VolumeSource{
			PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: c},
		}})
	}
	return pod
}

// node is a node name and its labels: hostname, and zone if given.
type node struct {
	name   string
	labels map[string]string
}

func nodeIn(name, zone string, kv ...string) node {
	l := map[string]string{v1.LabelHostname: name}
	if zone != "" {
		l[v1.LabelTopologyZone] = zone
	}
	for i := 0; i+1 < len(kv); i += 2 {
		l[kv[i]] = kv[i+1]
	}
	return node{name: name, labels: l}
}

func listers(t testing.TB, objs ...runtime.Object) fwk.Listers {
	t.Helper()
	l, err := fwk.NewListers(objs...)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// newClaims is NewClaims that fails the test on any status.
func newClaims(t testing.TB, pod *v1.Pod, objs ...runtime.Object) *volumebinding.Claims {
	t.Helper()
	c, status := volumebinding.NewClaims(listers(t, objs...), pod)
	if status != nil {
		t.Fatalf("NewClaims = %v", status)
	}
	return c
}
