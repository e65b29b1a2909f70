package filter

import (
	"context"
	"errors"
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/component-helpers/storage/ephemeral"

	"github.com/kubesched/kubesched/feature"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/internal/csimigration"
	"github.com/kubesched/kubesched/internal/volumebinding"
	"github.com/kubesched/kubesched/names"
	"github.com/kubesched/kubesched/nodeinfo"
)

// ErrReasonMaxVolumeCountExceeded is NodeVolumeLimits' reason, worded as
// kube-scheduler's.
const ErrReasonMaxVolumeCountExceeded = "node(s) exceed max volume count"

var (
	maxVolumeCountExceeded = fwk.NewStatus(fwk.Unschedulable, ErrReasonMaxVolumeCountExceeded).WithPlugin(names.NodeVolumeLimits)
	errClaimHasNoName      = errors.New("PersistentVolumeClaim had no name")
)

var nodeVolumeLimitsKey = fwk.NewStateKey[*volumeLimitsState]()

// NodeVolumeLimits rejects nodes where the pod's volumes would take a CSI
// driver past the number of volumes it can attach to the node: the
// allocatable count the node's CSINode reports for the driver.
//
// A driver's volumes on a node are the distinct volumes (driver and volume
// handle) used by the node's pods, plus those of VolumeAttachments to the
// node that no pod there uses; the pod's volumes add those not already
// among the pods'. Volumes count through the pod's claims and generic
// ephemeral volumes: a claim bound to a CSI PersistentVolume counts as
// that volume, one bound to an in-tree volume of a migrated plugin (AWS
// EBS, GCE PD, Azure Disk, Cinder, Portworx) as the volume its CSI driver
// sees, and a claim not yet bound (or whose volume is missing) as a new
// volume of its StorageClass's provisioner. Inline volumes of those
// in-tree plugins count too. In-tree volumes count only on nodes with a
// CSINode, as in kube-scheduler, which reads no migration
// annotation.
//
// Claims, PersistentVolumes, StorageClasses, CSINodes, VolumeAttachments
// and CSIDrivers come from [fwk.CycleState.Listers]. The zero value
// is ready to use.
type NodeVolumeLimits struct {
	// Features: VolumeLimitScaling is read (nil is [feature.Default]).
	// With it, as from v1.37, a node is also rejected, Unschedulable with
	// "<driver> CSI driver is not installed on the node", when the pod has
	// a volume of a driver whose CSIDriver sets
	// spec.preventPodSchedulingIfMissing and the node's CSINode lacks it.
	Features *feature.Features
}

var (
	_ fwk.PreFilterPlugin = &NodeVolumeLimits{}
	_ fwk.FilterPlugin    = &NodeVolumeLimits{}
)

// Name returns "NodeVolumeLimits".
func (*NodeVolumeLimits) Name() string { return names.NodeVolumeLimits }

// PreFilter returns Skip when the pod has no claim, no generic ephemeral
// volume and no inline volume of an in-tree plugin CSI migration covers.
// Otherwise it indexes the cluster's storage objects and works out the
// pod's own volumes, for Filter. It returns Error if a lister fails, and
// never rejects the pod: a missing claim is Filter's verdict, as in
// kube-scheduler. It never narrows the nodes.
func (pl *NodeVolumeLimits) PreFilter(_ context.Context, state *fwk.CycleState, pod *v1.Pod, _ []*nodeinfo.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	if !mayUseCSIVolumes(pod) {
		return nil, skip
	}
	s, status := pl.newState(state.Listers(), pod)
	if status != nil {
		return nil, status
	}
	nodeVolumeLimitsKey.Write(state, s)
	return nil, nil
}

// Filter returns nil if the pod's volumes fit the node's limits, and
// Unschedulable with [ErrReasonMaxVolumeCountExceeded] if a driver would
// exceed its limit. As kube-scheduler, and before counting, it returns:
//   - UnschedulableAndUnresolvable with client-go's NotFound message
//     ("looking up PVC ns/name: persistentvolumeclaim "name" not found")
//     when a claim of the pod is missing;
//   - Error when a claim of the pod has no name, a generic ephemeral
//     volume's claim is not owned by the pod, or an inline in-tree volume
//     does not translate to CSI; when the node's CSINode sets any limit,
//     also when a pod already on the node has such a volume (its missing
//     claims are not counted);
//   - Error if ni has no node.
//
// Without PreFilter's result in state (state may be nil) it computes it,
// at the cost of indexing every storage object, and may also return what
// PreFilter returns. It modifies nothing and is safe for concurrent use.
// With PreFilter's result it allocates only to report an error, or past 4
// limited drivers of the pod or 32 distinct volumes of them on the node.
func (pl *NodeVolumeLimits) Filter(_ context.Context, state *fwk.CycleState, pod *v1.Pod, ni *nodeinfo.NodeInfo) *fwk.Status {
	if ni.Node() == nil {
		return errNilNode
	}
	s, status := pl.stateOf(state, pod)
	if s == nil {
		return status
	}
	csiNode := s.objects.csiNodes[ni.Name()]
	own := &s.withoutCSINode
	if csiNode != nil {
		own = &s.withCSINode
	}
	if own.status != nil || len(own.volumes) == 0 {
		return own.status
	}
	for _, d := range own.requiredDrivers {
		if !hasDriver(csiNode, d.name) {
			return d.missing
		}
	}
	if csiNode == nil || !hasVolumeLimits(csiNode) {
		return nil
	}
	return s.countOnNode(own.volumes, csiNode, ni)
}

// stateOf returns PreFilter's state, or computes it; nil and the status
// to return when it cannot, or when no volume of pod may count.
func (pl *NodeVolumeLimits) stateOf(state *fwk.CycleState, pod *v1.Pod) (*volumeLimitsState, *fwk.Status) {
	if s, ok := nodeVolumeLimitsKey.Read(state); ok {
		return s, nil
	}
	if !mayUseCSIVolumes(pod) {
		return nil, nil
	}
	return pl.newState(state.Listers(), pod)
}

// mayUseCSIVolumes reports whether some volume of pod may count: a claim,
// a generic ephemeral volume or a migratable inline volume.
func mayUseCSIVolumes(pod *v1.Pod) bool {
	for i := range pod.Spec.Volumes {
		v := &pod.Spec.Volumes[i]
		if v.PersistentVolumeClaim != nil || v.Ephemeral != nil || csimigration.ForInline(v) != nil {
			return true
		}
	}
	return false
}

// csiVolume is one volume as NodeVolumeLimits counts it: a CSI driver's
// volume handle. A claim not yet bound stands for a volume its class's
// provisioner will create: its handle is then the claim's name, and
// unbound keeps it apart from every real handle, which kube-scheduler
// does with a random prefix.
type csiVolume struct {
	// handle first: comparing volumes, it is the field that differs most.
	handle, driver string
	claimNamespace string
	unbound        bool
}

// volumeLimitsState is what PreFilter computes for Filter.
type volumeLimitsState struct {
	objects *csiObjects
	// The pod's own volumes depend on the node only through whether it
	// has a CSINode: in-tree volumes migrate only there.
	withCSINode, withoutCSINode podCSIVolumes
}

// podCSIVolumes are the pod's distinct volumes, in the pod's order, or the
// status its first broken volume gives on every node.
type podCSIVolumes struct {
	volumes []csiVolume
	status  *fwk.Status
	// requiredDrivers are the drivers of volumes whose CSIDriver must be
	// on the node (only with VolumeLimitScaling).
	requiredDrivers []requiredDriver
}

type requiredDriver struct {
	name    string
	missing *fwk.Status
}

func (pl *NodeVolumeLimits) newState(l fwk.Listers, pod *v1.Pod) (*volumeLimitsState, *fwk.Status) {
	objs, err := indexCSIObjects(l, feature.Of(pl.Features).VolumeLimitScaling)
	if err != nil {
		return nil, fwk.AsStatus(err).WithPlugin(names.NodeVolumeLimits)
	}
	return &volumeLimitsState{
		objects:        objs,
		withCSINode:    objs.ownVolumes(pod, true),
		withoutCSINode: objs.ownVolumes(pod, false),
	}, nil
}

// ownVolumes resolves the volumes of the pod being scheduled, for a node
// with or without a CSINode.
func (o *csiObjects) ownVolumes(pod *v1.Pod, hasCSINode bool) podCSIVolumes {
	var out podCSIVolumes
	for i := range pod.Spec.Volumes {
		v, ok, err := o.podVolume(pod, &pod.Spec.Volumes[i], hasCSINode, true)
		if err != nil {
			if apierrors.IsNotFound(err) {
				out.status = notFound(err).WithPlugin(names.NodeVolumeLimits)
			} else {
				out.status = fwk.AsStatus(err).WithPlugin(names.NodeVolumeLimits)
			}
			return out
		}
		if ok && !slices.Contains(out.volumes, v) {
			out.volumes = append(out.volumes, v)
			if o.requiredDrivers[v.driver] && !slices.ContainsFunc(out.requiredDrivers, func(d requiredDriver) bool { return d.name == v.driver }) {
				out.requiredDrivers = append(out.requiredDrivers, requiredDriver{
					name: v.driver,
					missing: fwk.NewStatus(fwk.Unschedulable,
						fmt.Sprintf("%s CSI driver is not installed on the node", v.driver)).WithPlugin(names.NodeVolumeLimits),
				})
			}
		}
	}
	return out
}

// countOnNode compares, for each driver of the pod's volumes with a limit
// on the node, the volumes the node would then have against the limit. It
// first resolves every volume of the node's pods, whose failures are
// errors even when no limit is at stake, as in kube-scheduler.
func (s *volumeLimitsState) countOnNode(own []csiVolume, csiNode *storagev1.CSINode, ni *nodeinfo.NodeInfo) *fwk.Status {
	// Stack buffers keep Filter from allocating unless a node holds more
	// volumes of the pod's drivers than they have room for.
	var driverBuf [4]driverCount
	var usedBuf [32]csiVolume
	drivers, status := s.tally(own, csiNode, ni, driverBuf[:0], usedBuf[:0])
	if status != nil {
		return status
	}
	// A driver the pod adds no volume of is not checked, even if already
	// over its limit.
	for _, d := range drivers {
		if d.over() {
			return maxVolumeCountExceeded
		}
	}
	return nil
}

// tally counts, per driver of the pod's volumes that the node limits,
// the volumes in use on the node and those the pod adds, appending to
// drivers and using used as scratch.
func (s *volumeLimitsState) tally(own []csiVolume, csiNode *storagev1.CSINode, ni *nodeinfo.NodeInfo, drivers []driverCount, used []csiVolume) ([]driverCount, *fwk.Status) {
	for _, v := range own {
		if limit, ok := volumeLimit(csiNode, v.driver); ok && limitOf(drivers, v.driver) == nil {
			drivers = append(drivers, driverCount{driver: v.driver, limit: limit})
		}
	}
	// used are the distinct volumes of the node's pods, of limited drivers.
	for _, pi := range ni.Pods() {
		for i := range pi.Pod.Spec.Volumes {
			v, ok, err := s.objects.podVolume(pi.Pod, &pi.Pod.Spec.Volumes[i], true, false)
			if err != nil {
				return nil, fwk.AsStatus(err).WithPlugin(names.NodeVolumeLimits)
			}
			if ok && limitOf(drivers, v.driver) != nil && !slices.Contains(used, v) {
				used = append(used, v)
			}
		}
	}
	if len(drivers) == 0 {
		return nil, nil
	}
	for _, v := range used {
		limitOf(drivers, v.driver).inUse++
	}
	// Attached volumes and the pod's own count unless a pod already uses
	// them. (kube-scheduler does not check the pod's own against the
	// attached ones, so a volume in both counts twice.)
	for _, v := range s.objects.attached[ni.Name()] {
		if d := limitOf(drivers, v.driver); d != nil && !slices.Contains(used, v) {
			d.inUse++
		}
	}
	for _, v := range own {
		if d := limitOf(drivers, v.driver); d != nil && !slices.Contains(used, v) {
			d.added++
		}
	}
	return drivers, nil
}

// driverCount is one limited driver's tally on a node.
type driverCount struct {
	driver string
	limit  int64
	// inUse counts the distinct volumes on the node, added those the pod
	// brings.
	inUse, added int64
}

// over reports whether the pod's volumes take the driver past its limit.
func (d *driverCount) over() bool { return d.added > 0 && d.inUse+d.added > d.limit }

// limitOf returns driver's tally, or nil if it has no limit.
func limitOf(drivers []driverCount, driver string) *driverCount {
	for i := range drivers {
		if drivers[i].driver == driver {
			return &drivers[i]
		}
	}
	return nil
}

// hasVolumeLimits reports whether the CSINode limits any driver.
func hasVolumeLimits(n *storagev1.CSINode) bool {
	return slices.ContainsFunc(n.Spec.Drivers, func(d storagev1.CSINodeDriver) bool {
		return d.Allocatable != nil && d.Allocatable.Count != nil
	})
}

// volumeLimit returns driver's allocatable count on the node; when the
// CSINode lists the driver more than once, the last count wins, as in
// kube-scheduler. A negative count is kept: every volume exceeds it.
func volumeLimit(n *storagev1.CSINode, driver string) (int64, bool) {
	var limit int64
	found := false
	for _, d := range n.Spec.Drivers {
		if d.Name == driver && d.Allocatable != nil && d.Allocatable.Count != nil {
			limit, found = int64(*d.Allocatable.Count), true
		}
	}
	return limit, found
}

func hasDriver(n *storagev1.CSINode, driver string) bool {
	return n != nil && slices.ContainsFunc(n.Spec.Drivers, func(d storagev1.CSINodeDriver) bool { return d.Name == driver })
}

// csiObjects indexes the storage objects of one cycle by name, standing in
// for the Get of client-go's listers. The first of duplicate names wins.
type csiObjects struct {
	// claims are by namespace, then name.
	claims   map[string]map[string]*v1.PersistentVolumeClaim
	volumes  map[string]boundVolume
	classes  map[string]*storagev1.StorageClass
	csiNodes map[string]*storagev1.CSINode
	// attached are, by node name, the distinct volumes of the
	// VolumeAttachments to the node.
	attached map[string][]csiVolume
	// requiredDrivers are the CSIDrivers that set
	// spec.preventPodSchedulingIfMissing (only with
	// VolumeLimitScaling).
	requiredDrivers map[string]bool
}

// boundVolume is how a claim bound to a PersistentVolume counts, worked
// out once per volume.
type boundVolume struct {
	csiVolume
	// counted is false for volumes kube-scheduler does not count: neither
	// CSI nor migratable, or failing to translate.
	counted bool
	// inTree volumes count only on nodes with a CSINode.
	inTree bool
}

// indexCSIObjects lists the storage objects; a nil lister holds none.
func indexCSIObjects(l fwk.Listers, withDrivers bool) (*csiObjects, error) {
	// Maps are sized up front: growing them is most of the cost.
	claims, err := listAll(l.PersistentVolumeClaims)
	if err != nil {
		return nil, err
	}
	perNamespace := map[string]int{}
	for _, c := range claims {
		perNamespace[c.Namespace]++
	}
	o := &csiObjects{claims: make(map[string]map[string]*v1.PersistentVolumeClaim, len(perNamespace))}
	for ns, n := range perNamespace {
		o.claims[ns] = make(map[string]*v1.PersistentVolumeClaim, n)
	}
	for _, c := range claims {
		addFirst(o.claims[c.Namespace], c.Name, c)
	}
	pvs, err := listAll(l.PersistentVolumes)
	if err != nil {
		return nil, err
	}
	byName := make(map[string]*v1.PersistentVolume, len(pvs))
	o.volumes = make(map[string]boundVolume, len(pvs))
	for _, pv := range pvs {
		if addFirst(byName, pv.Name, pv) {
			o.volumes[pv.Name] = newBoundVolume(pv)
		}
	}
	classes, err := listAll(l.StorageClasses)
	if err != nil {
		return nil, err
	}
	o.classes = make(map[string]*storagev1.StorageClass, len(classes))
	for _, sc := range classes {
		addFirst(o.classes, sc.Name, sc)
	}
	csiNodes, err := listAll(l.CSINodes)
	if err != nil {
		return nil, err
	}
	o.csiNodes = make(map[string]*storagev1.CSINode, len(csiNodes))
	for _, n := range csiNodes {
		addFirst(o.csiNodes, n.Name, n)
	}
	attachments, err := listAll(l.VolumeAttachments)
	if err != nil {
		return nil, err
	}
	o.attached = make(map[string][]csiVolume, len(attachments))
	for _, va := range attachments {
		// Only attachments of CSI volumes count, under the attacher's name.
		if va.Spec.Attacher == "" || va.Spec.Source.PersistentVolumeName == nil {
			continue
		}
		pv := byName[*va.Spec.Source.PersistentVolumeName]
		if pv == nil || pv.Spec.CSI == nil {
			continue
		}
		v := csiVolume{driver: va.Spec.Attacher, handle: pv.Spec.CSI.VolumeHandle}
		if vs := o.attached[va.Spec.NodeName]; !slices.Contains(vs, v) {
			o.attached[va.Spec.NodeName] = append(vs, v)
		}
	}
	if withDrivers {
		drivers, err := listAll(l.CSIDrivers)
		if err != nil {
			return nil, err
		}
		o.requiredDrivers = make(map[string]bool, len(drivers))
		for _, d := range drivers {
			p := d.Spec.PreventPodSchedulingIfMissing
			addFirst(o.requiredDrivers, d.Name, p != nil && *p)
		}
	}
	return o, nil
}

// listAll lists every object of a lister; a nil lister has none.
func listAll[T any](l interface {
	List(labels.Selector) ([]T, error)
}) ([]T, error) {
	if l == nil {
		return nil, nil
	}
	return l.List(labels.Everything())
}

// addFirst adds v under k unless k is taken, and reports whether it did.
func addFirst[K comparable, V any](m map[K]V, k K, v V) bool {
	if _, ok := m[k]; ok {
		return false
	}
	m[k] = v
	return true
}

func newBoundVolume(pv *v1.PersistentVolume) boundVolume {
	if csi := pv.Spec.CSI; csi != nil {
		return boundVolume{
			csiVolume: csiVolume{driver: csi.Driver, handle: csi.VolumeHandle},
			counted:   csi.Driver != "" && csi.VolumeHandle != "",
		}
	}
	p := csimigration.ForPV(pv)
	if p == nil || !p.Migrated() {
		return boundVolume{}
	}
	handle, err := p.PVHandle(pv)
	return boundVolume{
		csiVolume: csiVolume{driver: p.Driver, handle: handle},
		counted:   err == nil && handle != "",
		inTree:    true,
	}
}

// podVolume resolves one volume of pod: ok is false for a volume that
// does not count. A claim with no name, a generic ephemeral volume whose
// claim the pod does not own, and an inline volume that fails to
// translate are errors. A missing claim is a NotFound error for the pod
// being scheduled (newPod) and uncounted for the others.
func (o *csiObjects) podVolume(pod *v1.Pod, vol *v1.Volume, hasCSINode, newPod bool) (csiVolume, bool, error) {
	var claim *v1.PersistentVolumeClaim
	switch {
	case vol.PersistentVolumeClaim != nil:
		if vol.PersistentVolumeClaim.ClaimName == "" {
			return csiVolume{}, false, errClaimHasNoName
		}
		claim = o.claims[pod.Namespace][vol.PersistentVolumeClaim.ClaimName]
	case vol.Ephemeral != nil:
		// The claim is named ephemeral.VolumeClaimName, "<pod>-<volume>";
		// spelled in a stack buffer, the lookup does not allocate.
		var buf [128]byte
		name := append(append(append(buf[:0], pod.Name...), '-'), vol.Name...)
		claim = o.claims[pod.Namespace][string(name)]
	default:
		return inlineVolume(vol, hasCSINode)
	}
	if claim == nil {
		if newPod {
			name := ephemeral.VolumeClaimName(pod, vol)
			if vol.PersistentVolumeClaim != nil {
				name = vol.PersistentVolumeClaim.ClaimName
			}
			return csiVolume{}, false, fmt.Errorf("looking up PVC %s/%s: %w", pod.Namespace, name,
				apierrors.NewNotFound(v1.Resource("persistentvolumeclaim"), name))
		}
		return csiVolume{}, false, nil
	}
	if vol.Ephemeral != nil {
		if err := ephemeral.VolumeIsForPod(pod, claim); err != nil {
			return csiVolume{}, false, err
		}
	}
	v, ok := o.claimVolume(claim, hasCSINode)
	return v, ok, nil
}

// claimVolume is the volume a claim counts as: its bound volume, or,
// when it has none (or the volume is missing), a new volume of its
// class's provisioner. A claim without a class, or of a missing class, is
// bound before it is used and does not count.
func (o *csiObjects) claimVolume(claim *v1.PersistentVolumeClaim, hasCSINode bool) (csiVolume, bool) {
	if name := claim.Spec.VolumeName; name != "" {
		if b, ok := o.volumes[name]; ok {
			return b.csiVolume, b.counted && (hasCSINode || !b.inTree)
		}
	}
	className := volumebinding.ClaimClass(claim)
	if className == "" {
		return csiVolume{}, false
	}
	class := o.classes[className]
	if class == nil {
		return csiVolume{}, false
	}
	driver := class.Provisioner
	if p := csimigration.ByInTreeName(driver); p != nil {
		if !hasCSINode || !p.Migrated() {
			return csiVolume{}, false
		}
		driver = p.Driver
	}
	return csiVolume{driver: driver, handle: claim.Name, claimNamespace: claim.Namespace, unbound: true}, driver != ""
}

// inlineVolume is the CSI volume of an inline in-tree volume of a
// migrated plugin, on a node with a CSINode.
func inlineVolume(vol *v1.Volume, hasCSINode bool) (csiVolume, bool, error) {
	p := csimigration.ForInline(vol)
	if p == nil || !hasCSINode || !p.Migrated() {
		return csiVolume{}, false, nil
	}
	handle, err := p.InlineHandle(vol)
	if err != nil {
		return csiVolume{}, false, fmt.Errorf("converting volume(%s) from inline to csi: %w", vol.Name, err)
	}
	return csiVolume{driver: p.Driver, handle: handle}, true, nil
}
