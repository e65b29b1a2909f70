package filter

import (
	"context"
	"fmt"

	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/internal/cycle"
	"github.com/kubesched/kubesched/internal/volumebinding"
	"github.com/kubesched/kubesched/names"
	"github.com/kubesched/kubesched/nodeinfo"
)

// VolumeBinding's reasons, worded as kube-scheduler's. A node may get
// several, in this order.
const (
	// ErrReasonVolumeNodeConflict: a bound volume's node affinity excludes
	// the node.
	ErrReasonVolumeNodeConflict = volumebinding.ReasonNodeConflict
	// ErrReasonVolumeBindConflict: an unbound claim finds no free volume
	// that matches it and admits the node, and cannot be provisioned there.
	ErrReasonVolumeBindConflict = volumebinding.ReasonBindConflict
	// ErrReasonNotEnoughSpace: no CSIStorageCapacity the node can reach has
	// room for a claim to provision.
	ErrReasonNotEnoughSpace = volumebinding.ReasonNotEnoughSpace
	// ErrReasonPVNotExist: a claim is bound to a volume that does not exist.
	ErrReasonPVNotExist = volumebinding.ReasonPVNotExist
	// ErrReasonUnboundImmediateClaims rejects the pod in PreFilter: a claim
	// that should bind without waiting for a pod is not bound yet.
	ErrReasonUnboundImmediateClaims = volumebinding.ReasonUnboundImmediate
)

// VolumeBinding rejects nodes where the PersistentVolumeClaims the pod
// uses (persistentVolumeClaim and generic ephemeral volumes) cannot all
// be had, as kube-scheduler's VolumeBinding decides it:
//
//   - a bound claim's volume must exist and its node affinity admit the
//     node (for an in-tree GCE PD, AWS EBS or Cinder volume on a node whose
//     CSINode lists the plugin as migrated, the affinity of the CSI volume
//     it translates to);
//   - an unbound claim whose class waits for the first consumer must find
//     an available volume of its class, not taken by another claim of the
//     pod, with room, the claim's access modes, volume mode, volume
//     attributes class and selector, admitting the node (the smallest
//     wins; a volume pre-bound to the claim is its only choice), or else be
//     provisionable there: its class has a provisioner other than
//     kubernetes.io/no-provisioner and allowed topologies that include the
//     node, and if the class's CSIDriver tracks storage capacity, a
//     CSIStorageCapacity of the class that the node can reach has room;
//   - a claim already being provisioned for another node fits no node.
//
// Claims, volumes, classes, CSINodes, CSIDrivers and capacities come from
// [fwk.CycleState.Listers]. Rejections are
// UnschedulableAndUnresolvable. The zero value is ready to use.
type VolumeBinding struct{}

var (
	_ fwk.PreFilterPlugin = &VolumeBinding{}
	_ fwk.FilterPlugin    = &VolumeBinding{}
)

// Name returns "VolumeBinding".
func (*VolumeBinding) Name() string { return names.VolumeBinding }

// PreFilter looks up the pod's claims and everything Filter needs about
// them, once for all nodes. It returns Skip when the pod uses no claim,
// and otherwise the statuses of kube-scheduler's PreFilter:
// UnschedulableAndUnresolvable for a missing, lost or terminating claim,
// an ephemeral claim the pod does not own, or a claim that should already
// be bound ([ErrReasonUnboundImmediateClaims], which includes claims of a
// class that does not exist); Error for a class without volumeBindingMode
// or a failing lister. Like kube-scheduler's, it never narrows
// the nodes.
func (*VolumeBinding) PreFilter(_ context.Context, state *fwk.CycleState, pod *v1.Pod, _ []*nodeinfo.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	claims, status := volumebinding.NewClaims(state.Listers(), pod)
	if status != nil {
		return nil, status
	}
	if claims == nil {
		return nil, skip
	}
	volumebinding.ClaimsKey.Write(state, claims)
	return nil, nil
}

// Filter returns nil if the pod's claims can all be had on the node;
// UnschedulableAndUnresolvable with one or more of
// [ErrReasonVolumeNodeConflict], [ErrReasonVolumeBindConflict],
// [ErrReasonNotEnoughSpace] and [ErrReasonPVNotExist] (in that order) if
// not; Error if ni has no node, a claim's selector does not parse, or a
// bound in-tree volume cannot be translated to CSI. Without PreFilter's
// result in state (state may be nil) it looks the claims up itself and may
// return any rejection PreFilter returns. It lists nothing when PreFilter
// ran, modifies nothing and is safe for concurrent use.
func (*VolumeBinding) Filter(_ context.Context, state *fwk.CycleState, pod *v1.Pod, ni *nodeinfo.NodeInfo) *fwk.Status {
	if ni.Node() == nil {
		return errNilNode
	}
	claims, status := volumebinding.ClaimsOf(state, pod)
	if status != nil {
		return status
	}
	conflicts, status := claims.Check(ni.Name(), ni.Labels(), nil)
	if status != nil {
		return status
	}
	return conflicts.Status()
}

// Reserve records in out what kube-scheduler's Reserve assumes when the pod
// goes to nodeName: the volumes its unbound claims bind, read with
// [Volumes], and the claims to provision, read with
// [ProvisionedClaims]. A pod whose claims are all bound adds nothing. It
// returns Error when nodeName is not in the cycle or the pod's volumes do
// not fit there.
func (*VolumeBinding) Reserve(_ context.Context, state *fwk.CycleState, pod *v1.Pod, nodeName string, out *fwk.Outputs) *fwk.Status {
	claims, status := volumebinding.ClaimsOf(state, pod)
	if status != nil {
		if status.IsSkip() {
			return nil
		}
		return status
	}
	if claims == nil {
		return nil
	}
	ni, ok := cycle.Of(state).NodeInfo(nodeName)
	if !ok {
		return fwk.AsStatus(fmt.Errorf("reserving volumes: node %q is not in the cycle", nodeName))
	}
	var placement volumebinding.Placement
	conflicts, status := claims.Check(nodeName, ni.Labels(), &placement)
	if status != nil {
		return status
	}
	if conflicts != 0 {
		return fwk.AsStatus(fmt.Errorf("reserving volumes on node %q: %v", nodeName, conflicts.Status().Reasons()))
	}
	pvs, provisioned := placement.Assume(nodeName)
	if out != nil && len(pvs) > 0 {
		had, _ := VolumesOutput.Get(out)
		VolumesOutput.Set(out, append(had, pvs...))
	}
	if out != nil && len(provisioned) > 0 {
		had, _ := ProvisionedClaimsOutput.Get(out)
		ProvisionedClaimsOutput.Set(out, append(had, provisioned...))
	}
	return nil
}
