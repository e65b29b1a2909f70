package filter

import (
	"context"
	"iter"
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/names"
	"github.com/kubesched/kubesched/nodeinfo"
)

// VolumeRestrictions' reasons.
const (
	// ErrReasonDiskConflict: a pod on the node mounts the same disk in a
	// way that cannot be shared.
	ErrReasonDiskConflict = "node(s) had no available disk"
	// ErrReasonReadWriteOncePodConflict: a ReadWriteOncePod claim of the
	// pod is already used by a pod on some node.
	ErrReasonReadWriteOncePodConflict = "node(s) unavailable due to PersistentVolumeClaim with ReadWriteOncePod access mode already in-use by another pod"
)

var (
	diskConflict = fwk.NewStatus(fwk.Unschedulable, ErrReasonDiskConflict).WithPlugin(names.VolumeRestrictions)
	rwopConflict = fwk.NewStatus(fwk.Unschedulable, ErrReasonReadWriteOncePodConflict).WithPlugin(names.VolumeRestrictions)
	// noRestrictionsState is kube-scheduler's error for AddPod or RemovePod
	// without PreFilter's state.
	noRestrictionsState = fwk.NewStatus(fwk.Error, `cannot read "PreFilterVolumeRestrictions" from cycleState`).WithPlugin(names.VolumeRestrictions)
)

var volumeRestrictionsKey = fwk.NewStateKey[*volumeRestrictionsState]()

// volumeRestrictionsState is the pod's ReadWriteOncePod claims and how
// many uses of them by placed pods there are.
type volumeRestrictionsState struct {
	// rwopClaims are claim names, in the pod's namespace.
	rwopClaims sets.Set[string]
	// inUse counts, at PreFilter, the claims used by some placed pod;
	// AddPod and RemovePod then add or subtract each use by the given pod.
	inUse int
}

// CloneState copies the count; the claim set is never modified.
func (s *volumeRestrictionsState) CloneState() any {
	c := *s
	return &c
}

// update counts the volumes of pod that name one of the claims, sign
// times. Like kube-scheduler, it matches the claim name only, whatever
// pod's namespace.
func (s *volumeRestrictionsState) update(pod *v1.Pod, sign int) {
	for i := range pod.Spec.Volumes {
		if c := pod.Spec.Volumes[i].PersistentVolumeClaim; c != nil && s.rwopClaims.Has(c.ClaimName) {
			s.inUse += sign
		}
	}
}

// VolumeRestrictions rejects nodes where the pod's volumes cannot be
// mounted next to those of the pods already there: the same GCE
// persistent disk unless both mount it read-only, the same AWS EBS
// volume, the same RBD image (overlapping monitors, same pool and image)
// or the same iSCSI IQN unless both are read-only; all Unschedulable with
// [ErrReasonDiskConflict]. It also rejects every node, Unschedulable with
// [ErrReasonReadWriteOncePodConflict], when a ReadWriteOncePod claim of
// the pod is already used by a pod on any node of the cycle. Claims come
// from [fwk.CycleState.Listers]. The zero value is ready to use.
type VolumeRestrictions struct{}

var (
	_ fwk.PreFilterPlugin     = &VolumeRestrictions{}
	_ fwk.PreFilterExtensions = &VolumeRestrictions{}
	_ fwk.FilterPlugin        = &VolumeRestrictions{}
)

// Name returns "VolumeRestrictions".
func (*VolumeRestrictions) Name() string { return names.VolumeRestrictions }

// PreFilter looks up every claim the pod mounts and counts how many of
// its ReadWriteOncePod claims placed pods already use. It returns Skip
// when the pod has no GCE PD, AWS EBS, RBD or iSCSI volume and no such
// claim is in use; UnschedulableAndUnresolvable with client-go's NotFound
// message for a missing claim; Error when a lister fails. It never
// narrows the nodes and never rejects for a conflict: Filter does.
func (*VolumeRestrictions) PreFilter(_ context.Context, state *fwk.CycleState, pod *v1.Pod, _ []*nodeinfo.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	s, status := newVolumeRestrictionsState(state, pod)
	if status != nil {
		return nil, status
	}
	if s.inUse == 0 && !slices.ContainsFunc(pod.Spec.Volumes, mayConflict) {
		return nil, skip
	}
	volumeRestrictionsKey.Write(state, s)
	return nil, nil
}

// AddPod counts podToAdd's uses of the pod's ReadWriteOncePod claims. It
// returns Error if PreFilter has not written its state.
func (*VolumeRestrictions) AddPod(_ context.Context, state *fwk.CycleState, _ *v1.Pod, podToAdd *nodeinfo.PodInfo, _ *nodeinfo.NodeInfo) *fwk.Status {
	s, ok := volumeRestrictionsKey.Read(state)
	if !ok {
		return noRestrictionsState
	}
	s.update(podToAdd.Pod, 1)
	return nil
}

// RemovePod uncounts podToRemove's uses of the pod's ReadWriteOncePod
// claims. It returns Error if PreFilter has not written its state.
func (*VolumeRestrictions) RemovePod(_ context.Context, state *fwk.CycleState, _ *v1.Pod, podToRemove *nodeinfo.PodInfo, _ *nodeinfo.NodeInfo) *fwk.Status {
	s, ok := volumeRestrictionsKey.Read(state)
	if !ok {
		return noRestrictionsState
	}
	s.update(podToRemove.Pod, -1)
	return nil
}

// Filter returns Unschedulable with [ErrReasonDiskConflict] if a volume
// of the pod clashes with one of a pod on the node, else Unschedulable
// with [ErrReasonReadWriteOncePodConflict] if a ReadWriteOncePod claim of
// the pod is in use, else nil; Error if ni has no node. Disk conflicts
// come first, as in kube-scheduler, because they need no state. Without
// PreFilter's state (state may be nil) it computes it and may return any
// status PreFilter returns. It modifies nothing and is safe for
// concurrent use.
func (*VolumeRestrictions) Filter(_ context.Context, state *fwk.CycleState, pod *v1.Pod, ni *nodeinfo.NodeInfo) *fwk.Status {
	if ni.Node() == nil {
		return errNilNode
	}
	for range diskConflicts(pod, ni) {
		return diskConflict
	}
	s, status := restrictionsStateOf(state, pod)
	if status != nil {
		return status
	}
	if s.inUse > 0 {
		return rwopConflict
	}
	return nil
}

// diskConflicts yields each volume of pod that clashes with a volume of a
// pod on ni, with that pod, in the pod's volume order.
func diskConflicts(pod *v1.Pod, ni *nodeinfo.NodeInfo) iter.Seq2[*v1.Volume, *v1.Pod] {
	return func(yield func(*v1.Volume, *v1.Pod) bool) {
		for i := range pod.Spec.Volumes {
			v := &pod.Spec.Volumes[i]
			if !mayConflict(*v) {
				continue
			}
			for _, pi := range ni.Pods() {
				if diskConflictsWith(v, pi.Pod) && !yield(v, pi.Pod) {
					return
				}
			}
		}
	}
}

// restrictionsStateOf returns PreFilter's state, or computes it.
func restrictionsStateOf(state *fwk.CycleState, pod *v1.Pod) (*volumeRestrictionsState, *fwk.Status) {
	if s, ok := volumeRestrictionsKey.Read(state); ok {
		return s, nil
	}
	return newVolumeRestrictionsState(state, pod)
}

// newVolumeRestrictionsState finds the pod's ReadWriteOncePod claims and
// counts those used by a pod on any node of state.
func newVolumeRestrictionsState(state *fwk.CycleState, pod *v1.Pod) (*volumeRestrictionsState, *fwk.Status) {
	claims := state.Listers().PersistentVolumeClaims
	s := &volumeRestrictionsState{rwopClaims: sets.New[string]()}
	for i := range pod.Spec.Volumes {
		src := pod.Spec.Volumes[i].PersistentVolumeClaim
		if src == nil {
			continue
		}
		c, status := findClaim(claims, pod.Namespace, src.ClaimName)
		if status != nil {
			return nil, status.WithPlugin(names.VolumeRestrictions)
		}
		if slices.Contains(c.Spec.AccessModes, v1.ReadWriteOncePod) {
			s.rwopClaims.Insert(c.Name)
		}
	}
	for name := range s.rwopClaims {
		key := pod.Namespace + "/" + name
		if slices.ContainsFunc(state.AllNodes(), func(ni *nodeinfo.NodeInfo) bool { return ni != nil && ni.PVCRefCounts()[key] > 0 }) {
			s.inUse++
		}
	}
	return s, nil
}

// mayConflict reports whether v is of a kind that cannot always be
// mounted by two pods on one node.
func mayConflict(v v1.Volume) bool {
	return v.GCEPersistentDisk != nil || v.AWSElasticBlockStore != nil || v.RBD != nil || v.ISCSI != nil
}

// diskConflictsWith reports whether v clashes with any volume of other.
func diskConflictsWith(v *v1.Volume, other *v1.Pod) bool {
	for i := range other.Spec.Volumes {
		o := &other.Spec.Volumes[i]
		if a, b := v.GCEPersistentDisk, o.GCEPersistentDisk; a != nil && b != nil &&
			a.PDName == b.PDName && !(a.ReadOnly && b.ReadOnly) {
			return true
		}
		if a, b := v.AWSElasticBlockStore, o.AWSElasticBlockStore; a != nil && b != nil &&
			a.VolumeID == b.VolumeID {
			return true
		}
		if a, b := v.ISCSI, o.ISCSI; a != nil && b != nil &&
			a.IQN == b.IQN && !(a.ReadOnly && b.ReadOnly) {
			return true
		}
		if a, b := v.RBD, o.RBD; a != nil && b != nil &&
			a.RBDPool == b.RBDPool && a.RBDImage == b.RBDImage && !(a.ReadOnly && b.ReadOnly) &&
			slices.ContainsFunc(a.CephMonitors, func(m string) bool { return slices.Contains(b.CephMonitors, m) }) {
			return true
		}
	}
	return false
}
