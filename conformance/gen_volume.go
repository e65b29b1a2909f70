package conformance

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// volumesByDefault is whether [Generate] gives scenarios volumes when
// KUBESCHED_CONFORMANCE_VOLUMES is unset.
const volumesByDefault = true

// generateVolumes turns on, for [Generate], the generators of this file:
// KUBESCHED_CONFORMANCE_VOLUMES=1 turns them on, =0 off, and otherwise
// [volumesByDefault] decides.
var generateVolumes = envSwitch("KUBESCHED_CONFORMANCE_VOLUMES", volumesByDefault)

// envSwitch reads a boolean switch from the environment: "1" is on, "0"
// off, anything else (or unset) is fallback.
func envSwitch(name string, fallback bool) bool {
	switch os.Getenv(name) {
	case "1":
		return true
	case "0":
		return false
	}
	return fallback
}

// volumeStream is the second word of the volume generators' random source.
// They draw from a stream of their own, seeded by the scenario's seed, so
// a seed's nodes, pods and affinities are the same with volumes or
// without.
const volumeStream = 0x766f6c756d6573

// Storage drivers and provisioners. The EBS and PD CSI drivers are where
// CSI migration takes the in-tree aws-ebs and gce-pd plugins, whose
// volumes NodeVolumeLimits and VolumeBinding translate to CSI when a
// node's CSINode says so.
const (
	driverEBS      = "ebs.csi.aws.com"
	driverPD       = "pd.csi.storage.gke.io"
	driverHostPath = "hostpath.csi.k8s.io"
	inTreeEBS      = "kubernetes.io/aws-ebs"
	inTreePD       = "kubernetes.io/gce-pd"
	noProvisioner  = "kubernetes.io/no-provisioner"

	// Topology keys of the CSI drivers; migration rewrites an in-tree
	// volume's zone affinity to them.
	topologyEBS      = "topology.ebs.csi.aws.com/zone"
	topologyPD       = "topology.gke.io/zone"
	topologyHostPath = "topology.hostpath.csi/node"

	// storageNamespace holds the CSIStorageCapacities, as a CSI driver's
	// own namespace would.
	storageNamespace = "kube-system"
)

// csiDrivers are the CSI drivers nodes may run, with the node label each
// reports its topology under.
var csiDrivers = []struct{ name, topologyKey string }{
	{driverEBS, topologyEBS},
	{driverPD, topologyPD},
	{driverHostPath, topologyHostPath},
}

// storageClasses are the classes a scenario may have, each with its
// provisioner. Claims also name a class that does not exist.
var storageClasses = []struct{ name, provisioner string }{
	{"standard", driverEBS},
	{"premium", driverPD},
	{"hostpath", driverHostPath},
	{"local", noProvisioner},
	{"legacy-ebs", inTreeEBS},
	{"legacy-pd", inTreePD},
}

// missingClass is a class claims may name but no scenario has.
const missingClass = "gone"

// Volume sizes in GiB. Claims ask for them and volumes offer them, so a
// claim and a free volume of its class fit about half of the time.
var volumeSizes = []int64{1, 5, 20, 100}

// Inline disks come from small sets so that VolumeRestrictions finds the
// same disk on a node often. An EBS volume may be named bare or by URL:
// VolumeRestrictions compares the names as written, NodeVolumeLimits the
// volume behind them.
var (
	gcePDNames    = []string{"pd-a", "pd-b", "pd-c"}
	ebsVolumeIDs  = []string{"vol-0a", "vol-0b", "aws://zone-a/vol-0a", "vol-0c"}
	rbdMonitors   = []string{"10.0.0.1:6789", "10.0.0.2:6789", "10.0.0.3:6789"}
	rbdPools      = []string{"rbd", "kube"}
	rbdImages     = []string{"image-1", "image-2"}
	iscsiIQNs     = []string{"iqn.2026-01.com.example:disk-1", "iqn.2026-01.com.example:disk-2"}
	migratedLists = []string{inTreeEBS + "," + inTreePD, inTreeEBS, inTreePD}
)

// volumeGenerator builds the storage objects of one scenario and keeps
// what the pods' volumes may refer to.
type volumeGenerator struct {
	*generator
	s *Scenario
	// classes are the scenario's StorageClasses by name.
	classes map[string]*storagev1.StorageClass
	// drivers are the scenario's CSIDrivers by name.
	drivers map[string]*storagev1.CSIDriver
	// claims, volumes, capacities and csiNodes are the scenario's, in
	// creation order.
	claims     []*v1.PersistentVolumeClaim
	volumes    []*v1.PersistentVolume
	capacities []*storagev1.CSIStorageCapacity
	csiNodes   []*storagev1.CSINode
	// named counts the claims named "claim-N" by namespace.
	named map[string]int
	// missing counts the names made up for claims and volumes that do not
	// exist, so that they are unique.
	missing int
}

// addVolumes gives s storage (drawn from its own random stream, see
// [volumeStream]): StorageClasses, CSIDrivers, CSIStorageCapacities,
// CSINodes, PersistentVolumes, PersistentVolumeClaims and
// VolumeAttachments; and gives bound pods and
// the incoming pod volumes: claims (bound, unbound, missing, deleting,
// shared with other pods, ReadWriteOncePod), generic ephemeral volumes,
// inline GCE PD, AWS EBS, RBD and iSCSI disks, and volumes no volume
// plugin looks at. Some nodes also get beta zone labels and CSI drivers'
// topology labels. A few volumes' zone labels hold what only objects built
// in Go can: spaces, or a trailing "__".
func addVolumes(s *Scenario) {
	g := &volumeGenerator{
		generator: &generator{r: rand.New(rand.NewPCG(s.Seed, volumeStream))},
		s:         s,
		classes:   map[string]*storagev1.StorageClass{},
		drivers:   map[string]*storagev1.CSIDriver{},
		named:     map[string]int{},
	}
	for _, n := range s.Nodes {
		g.betaTopologyLabels(n)
	}
	var objects []runtime.Object
	for _, c := range storageClasses {
		if g.chance(0.85) {
			sc := g.storageClass(c.name, c.provisioner)
			g.classes[c.name] = sc
			objects = append(objects, sc)
		}
	}
	for _, d := range csiDrivers {
		if g.chance(0.7) {
			driver := g.csiDriver(d.name)
			g.drivers[d.name] = driver
			objects = append(objects, driver)
		}
	}
	g.storageCapacities()
	for _, n := range s.Nodes {
		if g.chance(0.85) {
			g.csiNodes = append(g.csiNodes, g.csiNode(n))
		}
	}
	for range g.r.IntN(5) {
		g.freeVolume()
	}
	for _, p := range s.Pods {
		if g.chance(0.5) {
			g.podVolumes(p, false)
		}
	}
	if g.chance(0.7) {
		g.podVolumes(s.Pod, true)
	}

	for _, c := range g.capacities {
		objects = append(objects, c)
	}
	for _, c := range g.csiNodes {
		objects = append(objects, c)
	}
	for _, pv := range g.volumes {
		objects = append(objects, pv)
	}
	for _, c := range g.claims {
		objects = append(objects, c)
	}
	for _, va := range g.volumeAttachments() {
		objects = append(objects, va)
	}
	s.Objects = append(s.Objects, objects...)
}

// betaTopologyLabels gives some nodes the beta zone and region labels
// next to the GA ones, rarely with another value, which VolumeZone reads
// first for a volume with beta labels.
func (g *volumeGenerator) betaTopologyLabels(n *v1.Node) {
	for _, keys := range [][2]string{
		{v1.LabelTopologyZone, v1.LabelFailureDomainBetaZone},
		{v1.LabelTopologyRegion, v1.LabelFailureDomainBetaRegion},
	} {
		ga, ok := n.Labels[keys[0]]
		if !ok || !g.chance(0.2) {
			continue
		}
		n.Labels[keys[1]] = ga
		if g.chance(0.1) {
			n.Labels[keys[1]] = pick(g.generator, append(slices.Clone(zones), regions...))
		}
	}
}

func (g *volumeGenerator) storageClass(name, provisioner string) *storagev1.StorageClass {
	mode := storagev1.VolumeBindingWaitForFirstConsumer
	if g.chance(0.35) {
		mode = storagev1.VolumeBindingImmediate
	}
	sc := &storagev1.StorageClass{
		TypeMeta:          metav1.TypeMeta{APIVersion: "storage.k8s.io/v1", Kind: "StorageClass"},
		ObjectMeta:        metav1.ObjectMeta{Name: name, UID: types.UID("uid-storageclass-" + name)},
		Provisioner:       provisioner,
		VolumeBindingMode: &mode,
	}
	if provisioner != noProvisioner && g.chance(0.3) {
		// Provisioning only where the class allows, by zone.
		sc.AllowedTopologies = []v1.TopologySelectorTerm{{MatchLabelExpressions: []v1.TopologySelectorLabelRequirement{
			{Key: v1.LabelTopologyZone, Values: g.someZones()},
		}}}
	}
	return sc
}

// someZones returns one or two distinct zones.
func (g *volumeGenerator) someZones() []string {
	first := pick(g.generator, zones)
	if g.chance(0.3) {
		if second := pick(g.generator, zones); second != first {
			return []string{first, second}
		}
	}
	return []string{first}
}

func (g *volumeGenerator) csiDriver(name string) *storagev1.CSIDriver {
	d := &storagev1.CSIDriver{
		TypeMeta:   metav1.TypeMeta{APIVersion: "storage.k8s.io/v1", Kind: "CSIDriver"},
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-csidriver-" + name)},
		Spec:       storagev1.CSIDriverSpec{AttachRequired: new(true), StorageCapacity: new(g.chance(0.6))},
	}
	// Read only with the VolumeLimitScaling gate, which is off.
	if g.chance(0.1) {
		d.Spec.PreventPodSchedulingIfMissing = new(true)
	}
	return d
}

// storageCapacities publishes, for the classes provisioned by a CSI driver
// that asks the scheduler to check capacity, what each zone has left:
// sometimes too little, sometimes with a maximum volume size, rarely
// without a topology (which matches no node).
func (g *volumeGenerator) storageCapacities() {
	for _, c := range storageClasses {
		driver, ok := g.drivers[c.provisioner]
		if _, exists := g.classes[c.name]; !exists || !ok || !*driver.Spec.StorageCapacity {
			continue
		}
		for _, zone := range zones {
			if !g.chance(0.7) {
				continue
			}
			name := fmt.Sprintf("capacity-%s-%s", c.name, zone)
			capacity := &storagev1.CSIStorageCapacity{
				TypeMeta:         metav1.TypeMeta{APIVersion: "storage.k8s.io/v1", Kind: "CSIStorageCapacity"},
				ObjectMeta:       metav1.ObjectMeta{Name: name, Namespace: storageNamespace, UID: types.UID("uid-" + name)},
				StorageClassName: c.name,
				NodeTopology:     &metav1.LabelSelector{MatchLabels: map[string]string{v1.LabelTopologyZone: zone}},
				Capacity:         gibibytes(pick(g.generator, []int64{0, 2, 10, 50, 500})),
			}
			if g.chance(0.3) {
				capacity.MaximumVolumeSize = gibibytes(pick(g.generator, volumeSizes))
			}
			if g.chance(0.05) {
				capacity.NodeTopology = nil
			}
			g.capacities = append(g.capacities, capacity)
		}
	}
}

func gibibytes(n int64) *resource.Quantity {
	return resource.NewQuantity(n*1024*1024*1024, resource.BinarySI)
}

// csiNode lists the CSI drivers running on n, most with a small volume
// limit so that NodeVolumeLimits rejects nodes, and sometimes says which
// in-tree plugins the node has migrated to CSI. A driver that reports
// topology also labels n, as a driver's registration does.
func (g *volumeGenerator) csiNode(n *v1.Node) *storagev1.CSINode {
	c := &storagev1.CSINode{
		TypeMeta:   metav1.TypeMeta{APIVersion: "storage.k8s.io/v1", Kind: "CSINode"},
		ObjectMeta: metav1.ObjectMeta{Name: n.Name, UID: types.UID("uid-csinode-" + n.Name)},
	}
	for _, d := range csiDrivers {
		if !g.chance(0.7) {
			continue
		}
		driver := storagev1.CSINodeDriver{Name: d.name, NodeID: n.Name}
		if g.chance(0.8) {
			driver.Allocatable = &storagev1.VolumeNodeResources{Count: new(pick(g.generator, []int32{0, 1, 1, 2, 2, 3, 4, 16}))}
		}
		if zone, ok := n.Labels[v1.LabelTopologyZone]; ok && d.name != driverHostPath && g.chance(0.7) {
			driver.TopologyKeys = []string{d.topologyKey}
			n.Labels[d.topologyKey] = zone
		}
		if d.name == driverHostPath {
			driver.TopologyKeys = []string{d.topologyKey}
			n.Labels[d.topologyKey] = n.Name
		}
		c.Spec.Drivers = append(c.Spec.Drivers, driver)
	}
	if g.chance(0.35) {
		c.Annotations = map[string]string{v1.MigratedPluginsAnnotationKey: pick(g.generator, migratedLists)}
	}
	return c
}

// podVolumes gives p one to three volumes (one or two for a bound pod).
func (g *volumeGenerator) podVolumes(p *v1.Pod, incoming bool) {
	n := 1 + g.r.IntN(2)
	if incoming {
		n = 1 + g.r.IntN(3)
	}
	for i := range n {
		vol := v1.Volume{Name: fmt.Sprintf("vol-%d", i)}
		switch x := g.r.Float64(); {
		case x < 0.4:
			vol.PersistentVolumeClaim = &v1.PersistentVolumeClaimVolumeSource{ClaimName: g.claimFor(p, incoming), ReadOnly: g.chance(0.1)}
		case x < 0.52:
			g.ephemeral(p, &vol, incoming)
		case x < 0.66:
			vol.GCEPersistentDisk = &v1.GCEPersistentDiskVolumeSource{PDName: pick(g.generator, gcePDNames), FSType: "ext4", ReadOnly: g.chance(0.4)}
		case x < 0.78:
			vol.AWSElasticBlockStore = &v1.AWSElasticBlockStoreVolumeSource{VolumeID: pick(g.generator, ebsVolumeIDs), FSType: "ext4", ReadOnly: g.chance(0.2)}
		case x < 0.85:
			monitors := []string{pick(g.generator, rbdMonitors)}
			if g.chance(0.5) {
				monitors = append(monitors, pick(g.generator, rbdMonitors))
			}
			vol.RBD = &v1.RBDVolumeSource{CephMonitors: monitors, RBDPool: pick(g.generator, rbdPools), RBDImage: pick(g.generator, rbdImages), ReadOnly: g.chance(0.3)}
		case x < 0.92:
			vol.ISCSI = &v1.ISCSIVolumeSource{TargetPortal: "10.0.1.1:3260", IQN: pick(g.generator, iscsiIQNs), Lun: 0, ReadOnly: g.chance(0.3)}
		default:
			// No volume plugin looks at these.
			if g.chance(0.5) {
				vol.EmptyDir = &v1.EmptyDirVolumeSource{}
			} else {
				vol.ConfigMap = &v1.ConfigMapVolumeSource{LocalObjectReference: v1.LocalObjectReference{Name: "config"}}
			}
		}
		p.Spec.Volumes = append(p.Spec.Volumes, vol)
	}
}

// claimFor returns the name of a claim in p's namespace for p to mount:
// usually a new one, often one another pod mounts already, and sometimes
// one that does not exist.
func (g *volumeGenerator) claimFor(p *v1.Pod, incoming bool) string {
	if g.chance(0.03) {
		// The incoming pod is rejected outright; a bound pod's missing
		// claim is not counted.
		g.missing++
		return fmt.Sprintf("claim-gone-%d", g.missing)
	}
	var shared []string
	for _, c := range g.claims {
		if c.Namespace == p.Namespace && !slices.ContainsFunc(p.Spec.Volumes, func(v v1.Volume) bool {
			return v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == c.Name
		}) {
			shared = append(shared, c.Name)
		}
	}
	if len(shared) > 0 && g.chance(0.35) {
		return pick(g.generator, shared)
	}
	// Numbered per namespace: claims of one name in two namespaces are
	// two claims.
	name := fmt.Sprintf("claim-%d", g.named[p.Namespace])
	g.named[p.Namespace]++
	g.claims = append(g.claims, g.claim(p.Namespace, name, incoming))
	return name
}

// ephemeral makes vol a generic ephemeral volume. Its claim, named after
// the pod and the volume, usually exists and is owned by the pod; for the
// incoming pod it is sometimes owned by no pod, which makes the pod
// unschedulable. A bound pod's claim is never owned by another pod:
// NodeVolumeLimits fails with an error on such a running pod.
func (g *volumeGenerator) ephemeral(p *v1.Pod, vol *v1.Volume, incoming bool) {
	claim := g.claim(p.Namespace, p.Name+"-"+vol.Name, incoming)
	vol.Ephemeral = &v1.EphemeralVolumeSource{VolumeClaimTemplate: &v1.PersistentVolumeClaimTemplate{Spec: *claim.Spec.DeepCopy()}}
	switch x := g.r.Float64(); {
	case x < 0.8:
		claim.OwnerReferences = []metav1.OwnerReference{{
			APIVersion: "v1", Kind: "Pod", Name: p.Name, UID: p.UID, Controller: new(true), BlockOwnerDeletion: new(true),
		}}
	case x < 0.87 && incoming:
		// Left behind by an earlier pod of the same name.
	default:
		return
	}
	g.claims = append(g.claims, claim)
}

// claim returns a new claim namespace/name. About half are bound to a new
// volume; a few are bound to a volume that does not exist, lost, or being
// deleted. Unbound claims mostly wait for their first consumer, so that
// the incoming pod is not always rejected for an unbound claim.
func (g *volumeGenerator) claim(namespace, name string, incoming bool) *v1.PersistentVolumeClaim {
	c := &v1.PersistentVolumeClaim{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: namespace, UID: types.UID("uid-claim-" + namespace + "-" + name)},
		Spec:       v1.PersistentVolumeClaimSpec{AccessModes: g.accessModes()},
		Status:     v1.PersistentVolumeClaimStatus{Phase: v1.ClaimPending},
	}
	if g.chance(0.95) {
		c.Spec.Resources.Requests = v1.ResourceList{v1.ResourceStorage: *gibibytes(pick(g.generator, volumeSizes))}
	}
	switch x := g.r.Float64(); {
	case x < 0.08:
		c.Spec.VolumeMode = new(v1.PersistentVolumeBlock)
	case x < 0.6:
		c.Spec.VolumeMode = new(v1.PersistentVolumeFilesystem)
	}
	bound := g.chance(0.55)
	g.setClaimClass(c, g.claimClass(bound))
	switch {
	case bound:
		pv := g.persistentVolume(claimClass(c), c)
		g.volumes = append(g.volumes, pv)
		c.Spec.VolumeName = pv.Name
		c.Status = v1.PersistentVolumeClaimStatus{Phase: v1.ClaimBound, AccessModes: pv.Spec.AccessModes, Capacity: pv.Spec.Capacity}
		c.Annotations = mergeAnnotations(c.Annotations, map[string]string{"pv.kubernetes.io/bound-by-controller": "yes"})
		// Without bind-completed, VolumeBinding takes the claim for one
		// bound by a user and not yet by the controller.
		if g.chance(0.95) {
			c.Annotations["pv.kubernetes.io/bind-completed"] = "yes"
		}
	case g.chance(0.03):
		g.missing++
		c.Spec.VolumeName = fmt.Sprintf("pv-gone-%d", g.missing)
		c.Annotations = mergeAnnotations(c.Annotations, map[string]string{"pv.kubernetes.io/bind-completed": "yes"})
		c.Status.Phase = v1.ClaimBound
		if g.chance(0.5) {
			c.Status.Phase = v1.ClaimLost
		}
	default:
		if !incoming && g.chance(0.3) {
			// A bound pod's claim waiting for the pod's node, or (as the
			// scheduler marks it) for another node.
			c.Annotations = mergeAnnotations(c.Annotations, map[string]string{"volume.kubernetes.io/selected-node": g.pick(g.s.Nodes).Name})
		} else if g.chance(0.05) {
			c.Annotations = mergeAnnotations(c.Annotations, map[string]string{"volume.kubernetes.io/selected-node": g.pick(g.s.Nodes).Name})
		}
	}
	if g.chance(0.02) {
		c.DeletionTimestamp = new(deletionTime)
		c.DeletionGracePeriodSeconds = new(int64(0))
		c.Finalizers = []string{"kubernetes.io/pvc-protection"}
	}
	return c
}

func mergeAnnotations(a, b map[string]string) map[string]string {
	if a == nil {
		a = map[string]string{}
	}
	for k, v := range b {
		a[k] = v
	}
	return a
}

// accessModes returns one access mode, sometimes two; ReadWriteOncePod
// only alone, as the API server requires.
func (g *volumeGenerator) accessModes() []v1.PersistentVolumeAccessMode {
	all := []v1.PersistentVolumeAccessMode{v1.ReadWriteOnce, v1.ReadWriteOnce, v1.ReadWriteOncePod, v1.ReadWriteMany, v1.ReadOnlyMany}
	modes := []v1.PersistentVolumeAccessMode{pick(g.generator, all)}
	if g.chance(0.1) {
		if m := pick(g.generator, all); !slices.Contains(modes, m) && m != v1.ReadWriteOncePod && modes[0] != v1.ReadWriteOncePod {
			modes = append(modes, m)
		}
	}
	return modes
}

// claimClass picks the class a claim names: for an unbound claim mostly
// an existing class that waits for the first consumer. nil stands for no
// class at all; rarely the class is "" (explicitly none) or missing.
func (g *volumeGenerator) claimClass(bound bool) *string {
	switch x := g.r.Float64(); {
	case x < 0.03:
		return nil
	case x < 0.05:
		return new("")
	case x < 0.07:
		return new(missingClass)
	}
	var waiting, all []string
	for _, c := range storageClasses {
		if sc, ok := g.classes[c.name]; ok {
			all = append(all, c.name)
			if *sc.VolumeBindingMode == storagev1.VolumeBindingWaitForFirstConsumer {
				waiting = append(waiting, c.name)
			}
		}
	}
	if !bound && len(waiting) > 0 && g.chance(0.92) {
		return new(pick(g.generator, waiting))
	}
	if len(all) == 0 {
		return new(missingClass)
	}
	return new(pick(g.generator, all))
}

// setClaimClass names class in spec.storageClassName or, rarely, in the
// beta annotation, which wins over the field.
func (g *volumeGenerator) setClaimClass(c *v1.PersistentVolumeClaim, class *string) {
	if class != nil && g.chance(0.05) {
		c.Annotations = mergeAnnotations(c.Annotations, map[string]string{v1.BetaStorageClassAnnotation: *class})
		if g.chance(0.5) {
			c.Spec.StorageClassName = new("ignored")
		}
		return
	}
	c.Spec.StorageClassName = class
}

// claimClass is the class a claim names: the beta annotation, else the
// field, else none.
func claimClass(c *v1.PersistentVolumeClaim) string {
	if class, ok := c.Annotations[v1.BetaStorageClassAnnotation]; ok {
		return class
	}
	if c.Spec.StorageClassName != nil {
		return *c.Spec.StorageClassName
	}
	return ""
}

// freeVolume adds an available volume that a waiting claim of its class
// may be matched to.
func (g *volumeGenerator) freeVolume() {
	class := ""
	if g.chance(0.9) {
		class = pick(g.generator, storageClasses).name
	}
	g.volumes = append(g.volumes, g.persistentVolume(class, nil))
}

// persistentVolume returns a new volume of class, bound to claim (when not
// nil) or available. Its source follows the class's provisioner: CSI,
// in-tree EBS or GCE PD, or a local or host path volume. Its zone is
// given by labels (GA or beta keys, sometimes several zones "a__b"), by
// node affinity, by both or by neither; a local volume's node affinity
// names one node.
func (g *volumeGenerator) persistentVolume(class string, claim *v1.PersistentVolumeClaim) *v1.PersistentVolume {
	name := fmt.Sprintf("pv-%d", len(g.volumes))
	pv := &v1.PersistentVolume{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolume"},
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name)},
		Spec: v1.PersistentVolumeSpec{
			StorageClassName:              class,
			Capacity:                      v1.ResourceList{v1.ResourceStorage: *gibibytes(pick(g.generator, volumeSizes))},
			AccessModes:                   g.accessModes(),
			PersistentVolumeReclaimPolicy: v1.PersistentVolumeReclaimDelete,
		},
		Status: v1.PersistentVolumeStatus{Phase: v1.VolumeAvailable},
	}
	if g.chance(0.1) {
		pv.Spec.VolumeMode = new(v1.PersistentVolumeBlock)
	}
	if claim != nil {
		pv.Spec.AccessModes = slices.Clone(claim.Spec.AccessModes)
		if q, ok := claim.Spec.Resources.Requests[v1.ResourceStorage]; ok {
			pv.Spec.Capacity[v1.ResourceStorage] = q
		}
		pv.Spec.VolumeMode = claim.Spec.VolumeMode
		pv.Spec.ClaimRef = &v1.ObjectReference{APIVersion: "v1", Kind: "PersistentVolumeClaim", Namespace: claim.Namespace, Name: claim.Name, UID: claim.UID}
		pv.Status.Phase = v1.VolumeBound
		pv.Annotations = map[string]string{"pv.kubernetes.io/bound-by-controller": "yes"}
	} else if g.chance(0.1) {
		// Released by a deleted claim: no claim may take it.
		pv.Spec.ClaimRef = &v1.ObjectReference{APIVersion: "v1", Kind: "PersistentVolumeClaim", Namespace: metav1.NamespaceDefault, Name: "deleted", UID: "uid-deleted"}
		pv.Status.Phase = v1.VolumeReleased
	}

	provisioner := ""
	for _, c := range storageClasses {
		if c.name == class {
			provisioner = c.provisioner
		}
	}
	if provisioner == "" || g.chance(0.1) {
		provisioner = pick(g.generator, storageClasses).provisioner
	}
	zone := pick(g.generator, zones)
	zoneKey := v1.LabelTopologyZone
	switch provisioner {
	case inTreeEBS:
		pv.Spec.AWSElasticBlockStore = &v1.AWSElasticBlockStoreVolumeSource{VolumeID: g.ebsVolumeID(zone), FSType: "ext4"}
	case inTreePD:
		pv.Spec.GCEPersistentDisk = &v1.GCEPersistentDiskVolumeSource{PDName: "disk-" + name, FSType: "ext4"}
	case noProvisioner:
		node := g.pick(g.s.Nodes).Name
		if g.chance(0.2) {
			pv.Spec.HostPath = &v1.HostPathVolumeSource{Path: "/mnt/" + name}
		} else {
			pv.Spec.Local = &v1.LocalVolumeSource{Path: "/mnt/disks/" + name}
			pv.Spec.NodeAffinity = nodeAffinityOn(v1.LabelHostname, node)
		}
	default:
		pv.Spec.CSI = &v1.CSIPersistentVolumeSource{Driver: provisioner, VolumeHandle: "handle-" + name, FSType: "ext4"}
		if g.chance(0.05) && len(g.volumes) > 0 {
			// Two volumes with one handle are one volume to attach.
			pv.Spec.CSI.VolumeHandle = "handle-pv-0"
		}
		for _, d := range csiDrivers {
			if d.name == provisioner && d.name != driverHostPath && g.chance(0.3) {
				zoneKey = d.topologyKey
			}
		}
	}
	if pv.Spec.NodeAffinity == nil && g.chance(0.25) {
		if g.chance(0.2) {
			zoneKey = v1.LabelFailureDomainBetaZone
		}
		pv.Spec.NodeAffinity = nodeAffinityOn(zoneKey, zone)
	}
	g.topologyLabels(pv, zone)
	return pv
}

// ebsVolumeID names an EBS volume bare or by URL.
func (g *volumeGenerator) ebsVolumeID(zone string) string {
	id := fmt.Sprintf("vol-%04x", g.r.IntN(1<<16))
	if g.chance(0.3) {
		return "aws://" + zone + "/" + id
	}
	return id
}

func nodeAffinityOn(key, value string) *v1.VolumeNodeAffinity {
	return &v1.VolumeNodeAffinity{Required: &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{
		MatchExpressions: []v1.NodeSelectorRequirement{{Key: key, Operator: v1.NodeSelectorOpIn, Values: []string{value}}},
	}}}}
}

// topologyLabels labels pv with its zone and region, as the retired PV
// label admission controller did, under the GA or the beta keys,
// sometimes as a multi-zone set, rarely with spaces around the separator
// or a trailing one, which VolumeZone trims or ignores (and only volumes
// built in Go can have: the API server allows neither in a label). GCE PD volumes get neither: migrating them to CSI fails on a
// zone set of zones named like ours, which upstream reports as an error.
func (g *volumeGenerator) topologyLabels(pv *v1.PersistentVolume, zone string) {
	zoneKey, regionKey := v1.LabelTopologyZone, v1.LabelTopologyRegion
	if g.chance(0.35) {
		zoneKey, regionKey = v1.LabelFailureDomainBetaZone, v1.LabelFailureDomainBetaRegion
	}
	labels := map[string]string{}
	switch x := g.r.Float64(); {
	case x < 0.5:
		labels[zoneKey] = zone
	case x < 0.62 && pv.Spec.GCEPersistentDisk == nil:
		labels[zoneKey] = strings.Join(g.someZones(), pick(g.generator, []string{"__", "__", " __ "}))
	case x < 0.65 && pv.Spec.GCEPersistentDisk == nil:
		labels[zoneKey] = zone + "__"
	}
	if g.chance(0.2) {
		labels[regionKey] = pick(g.generator, regions)
	}
	if zone, ok := labels[zoneKey]; ok && g.chance(0.1) {
		// Both keys, which VolumeZone checks one after the other.
		other := map[string]string{v1.LabelTopologyZone: v1.LabelFailureDomainBetaZone, v1.LabelFailureDomainBetaZone: v1.LabelTopologyZone}[zoneKey]
		labels[other] = zone
		if g.chance(0.3) {
			labels[other] = pick(g.generator, zones)
		}
	}
	if len(labels) > 0 {
		pv.Labels = labels
	}
}

// volumeAttachments attaches some of the CSI and migrated volumes to a
// node, as the attach/detach controller records it: usually by the
// volume's driver, sometimes by none (which NodeVolumeLimits skips).
func (g *volumeGenerator) volumeAttachments() []*storagev1.VolumeAttachment {
	var out []*storagev1.VolumeAttachment
	for _, pv := range g.volumes {
		var attacher string
		switch {
		case pv.Spec.CSI != nil:
			attacher = pv.Spec.CSI.Driver
		case pv.Spec.AWSElasticBlockStore != nil:
			attacher = driverEBS
		case pv.Spec.GCEPersistentDisk != nil:
			attacher = driverPD
		default:
			continue
		}
		if !g.chance(0.3) {
			continue
		}
		if g.chance(0.05) {
			attacher = ""
		}
		name := "attachment-" + pv.Name
		out = append(out, &storagev1.VolumeAttachment{
			TypeMeta:   metav1.TypeMeta{APIVersion: "storage.k8s.io/v1", Kind: "VolumeAttachment"},
			ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-" + name)},
			Spec: storagev1.VolumeAttachmentSpec{
				Attacher: attacher,
				NodeName: g.pick(g.s.Nodes).Name,
				Source:   storagev1.VolumeAttachmentSource{PersistentVolumeName: new(pv.Name)},
			},
			Status: storagev1.VolumeAttachmentStatus{Attached: true},
		})
	}
	return out
}
