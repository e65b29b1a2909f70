package filter

import (
	"github.com/kubesched/kubesched/feature"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/internal/requeue"
)

// The plugins' EventsToRegister ([fwk.EnqueueExtensions]) register
// the events and action types upstream's plugins register in the release
// of the features given, with queueing hints on as they are there (GA,
// locked on): hints that give upstream's verdict for the same pod and
// objects, for the default plugin arguments and feature gates. With
// PodEventsByRole (v1.37) pod events are registered by role (AssignedPod
// for bound pods, TargetPod for the pending pod's own updates); before,
// as Pod events, which match every role, with hints that tell the pod's
// own update apart. Node events without a hint (NodeName's, NodePorts',
// the volume plugins') always help, as upstream's. Hints read only the
// event's objects and the pod, except where a method's doc says they
// read the cluster through the listers given.

// clusterHints are the hints that read cluster objects besides the
// event's.
type clusterHints struct {
	listers fwk.Listers
	// anyAntiTerm is the release's AnyAntiAffinityTermRequeues.
	anyAntiTerm bool
}

func hintsFor(fs feature.Features, l fwk.Listers) clusterHints {
	return clusterHints{listers: l, anyAntiTerm: fs.AnyAntiAffinityTermRequeues}
}

// EventsToRegister: a node added schedulable or no longer unschedulable,
// or the pod gaining a toleration of node.kubernetes.io/unschedulable.
func (*NodeUnschedulable) EventsToRegister(fs feature.Features, _ fwk.Listers) []fwk.ClusterEventWithHint {
	r := requeue.For(fs)
	return []fwk.ClusterEventWithHint{
		r.Event(fwk.Node, fwk.Add|fwk.UpdateNodeTaint, nodeBecameSchedulable),
		r.Target(fwk.UpdatePodToleration, podToleratesUnschedulable),
	}
}

// EventsToRegister: a node added.
func (*NodeName) EventsToRegister(fs feature.Features, _ fwk.Listers) []fwk.ClusterEventWithHint {
	return []fwk.ClusterEventWithHint{requeue.For(fs).Event(fwk.Node, fwk.Add, nil)}
}

// EventsToRegister: a node added or updated that now has no NoSchedule or
// NoExecute taint the pod does not tolerate, or the pod gaining a
// toleration.
func (*TaintToleration) EventsToRegister(fs feature.Features, _ fwk.Listers) []fwk.ClusterEventWithHint {
	r := requeue.For(fs)
	return []fwk.ClusterEventWithHint{
		r.Event(fwk.Node, fwk.Add|fwk.UpdateNodeTaint, taintsNowTolerated),
		r.Target(fwk.UpdatePodToleration, requeue.AlwaysQueue),
	}
}

// EventsToRegister: a node added or relabelled that now matches the pod's
// nodeSelector and required node affinity. The hint ignores the plugin's
// addedAffinity argument, which the default profile does not set: a
// profile that sets it sees more pods retried than kube-scheduler would
// retry, never fewer.
func (*NodeAffinity) EventsToRegister(fs feature.Features, _ fwk.Listers) []fwk.ClusterEventWithHint {
	return []fwk.ClusterEventWithHint{
		requeue.For(fs).Event(fwk.Node, fwk.Add|fwk.UpdateNodeLabel, nodeAffinityNowMatches),
	}
}

// EventsToRegister: a bound pod using one of the pod's host ports deleted,
// or a node added.
func (*NodePorts) EventsToRegister(fs feature.Features, _ fwk.Listers) []fwk.ClusterEventWithHint {
	r := requeue.For(fs)
	return []fwk.ClusterEventWithHint{
		r.Assigned(fwk.Delete, deletedPodFreesPorts),
		r.Event(fwk.Node, fwk.Add, nil),
	}
}

// EventsToRegister: a pod sharing the pod's disks deleted, a node added,
// one of the pod's claims added.
func (*VolumeRestrictions) EventsToRegister(fs feature.Features, _ fwk.Listers) []fwk.ClusterEventWithHint {
	r := requeue.For(fs)
	return []fwk.ClusterEventWithHint{
		r.Assigned(fwk.Delete, deletedPodFreesVolumes),
		r.Event(fwk.Node, fwk.Add, nil),
		r.Event(fwk.PersistentVolumeClaim, fwk.Add, claimOfPod),
	}
}

// EventsToRegister: a CSINode added or with a raised limit, a bound pod
// with attachments deleted, one of the pod's claims (or its ephemeral
// volumes' claims) added, a VolumeAttachment deleted.
func (*NodeVolumeLimits) EventsToRegister(fs feature.Features, _ fwk.Listers) []fwk.ClusterEventWithHint {
	r := requeue.For(fs)
	return []fwk.ClusterEventWithHint{
		r.Event(fwk.CSINode, fwk.Add, nil),
		r.Event(fwk.CSINode, fwk.Update, csiNodeLimitRaised),
		r.Assigned(fwk.Delete, deletedPodFreesAttachments),
		r.Event(fwk.PersistentVolumeClaim, fwk.Add, claimOfPodOrEphemeral),
		r.Event(fwk.VolumeAttachment, fwk.Delete, volumeAttachmentDeleted),
	}
}

// EventsToRegister: a StorageClass whose topology changed, one of the
// pod's claims added or updated, any PersistentVolume, a node added or
// relabelled, a CSINode's migration changed, a CSIDriver no longer
// tracking capacity, a CSIStorageCapacity grown.
func (*VolumeBinding) EventsToRegister(fs feature.Features, _ fwk.Listers) []fwk.ClusterEventWithHint {
	r := requeue.For(fs)
	return []fwk.ClusterEventWithHint{
		r.Event(fwk.StorageClass, fwk.Add|fwk.Update, storageClassTopologyChanged),
		r.Event(fwk.PersistentVolumeClaim, fwk.Add|fwk.Update, claimOfPodOrEphemeral),
		r.Event(fwk.PersistentVolume, fwk.Add|fwk.Update, nil),
		r.Event(fwk.Node, fwk.Add|fwk.UpdateNodeLabel, nil),
		r.Event(fwk.CSINode, fwk.Add|fwk.Update, csiNodeMigrationChanged),
		r.Event(fwk.CSIDriver, fwk.Update, csiDriverCapacityDisabled),
		r.Event(fwk.CSIStorageCapacity, fwk.Add|fwk.Update, storageCapacityGrew),
	}
}

// EventsToRegister: a StorageClass added that waits for a consumer, a node
// added or relabelled, one of the pod's claims added or updated, a volume
// whose zones changed.
func (*VolumeZone) EventsToRegister(fs feature.Features, _ fwk.Listers) []fwk.ClusterEventWithHint {
	r := requeue.For(fs)
	return []fwk.ClusterEventWithHint{
		r.Event(fwk.StorageClass, fwk.Add, storageClassWaitsForConsumer),
		r.Event(fwk.Node, fwk.Add|fwk.UpdateNodeLabel, nil),
		r.Event(fwk.PersistentVolumeClaim, fwk.Add|fwk.Update, claimOfPod),
		r.Event(fwk.PersistentVolume, fwk.Add|fwk.Update, volumeTopologyChanged),
	}
}

// EventsToRegister: one of the pod's ResourceClaims created or changed in
// status, any claim deallocated (or, with ResourceClaimDeleteEvents,
// deleted while allocated), the pod's own generated claims recorded;
// nodes, DeviceClasses and ResourceSlices (a DeviceTaintRule's change
// among them, see the package doc) always. The claim and pod hints read
// the ResourceClaims through l (which claims the pod uses).
func (*DynamicResources) EventsToRegister(fs feature.Features, l fwk.Listers) []fwk.ClusterEventWithHint {
	r, h := requeue.For(fs), hintsFor(fs, l)
	claimActions := fwk.Add | fwk.Update
	if fs.ResourceClaimDeleteEvents {
		claimActions |= fwk.Delete
	}
	return []fwk.ClusterEventWithHint{
		r.Event(fwk.Node, fwk.Add|fwk.UpdateNodeLabel|fwk.UpdateNodeAllocatable, nil),
		r.Event(fwk.ResourceClaim, claimActions, h.claimChangeHelps),
		r.Target(fwk.UpdatePodGeneratedResourceClaim, h.podClaimsNowUsable),
		r.Event(fwk.DeviceClass, fwk.Add|fwk.Update, nil),
		r.Event(fwk.ResourceSlice, fwk.Add|fwk.Update, nil),
	}
}

// EventsToRegister: a node's declared features changed, or the features
// the pod needs.
func (*NodeDeclaredFeatures) EventsToRegister(fs feature.Features, _ fwk.Listers) []fwk.ClusterEventWithHint {
	r := requeue.For(fs)
	return []fwk.ClusterEventWithHint{
		r.Event(fwk.Node, fwk.Add|fwk.UpdateNodeDeclaredFeature, declaredFeaturesChanged),
		r.Target(fwk.Update, requiredFeaturesChanged),
	}
}

// EventsToRegister: a node added, or grown (allocatable of a resource the
// pod requests, or pod slots), that the pod fits when empty; a pod on a
// node deleted; a bound pod scaled down in a resource the pod requests,
// or the pod itself scaled down; a DeviceClass that now provides an
// extended resource the pod requests. The node hint reads the
// DeviceClasses through l (an extended resource a class provides is not
// needed in the node's allocatable).
func (*NodeResourcesFit) EventsToRegister(fs feature.Features, l fwk.Listers) []fwk.ClusterEventWithHint {
	r, h := requeue.For(fs), hintsFor(fs, l)
	node := r.Event(fwk.Node, fwk.Add|fwk.UpdateNodeAllocatable, h.nodeNowFitsResources)
	class := r.Event(fwk.DeviceClass, fwk.Add|fwk.Update, deviceClassProvidesRequest)
	if !fs.PodEventsByRole {
		return []fwk.ClusterEventWithHint{
			r.Event(fwk.Pod, fwk.Delete|fwk.UpdatePodScaleDown, resourcesFreedByPod), node, class,
		}
	}
	return []fwk.ClusterEventWithHint{
		r.Event(fwk.AssignedPod, fwk.Delete, podHeldPlace), node, class,
		r.Event(fwk.AssignedPod, fwk.UpdatePodScaleDown, boundPodGaveUpRequest),
		r.Event(fwk.TargetPod, fwk.UpdatePodScaleDown, requeue.AlwaysQueue),
	}
}

// EventsToRegister: a pod on a node added, deleted or relabelled that the
// pod's constraints select; a node added, deleted or changed in the
// topology keys they use; the pod's own labels or tolerations changed.
func (*PodTopologySpread) EventsToRegister(fs feature.Features, l fwk.Listers) []fwk.ClusterEventWithHint {
	r, h := requeue.For(fs), hintsFor(fs, l)
	node := r.Event(fwk.Node, fwk.Add|fwk.Delete|fwk.UpdateNodeLabel|fwk.UpdateNodeTaint, h.spreadAfterNodeChange)
	if !fs.PodEventsByRole {
		return []fwk.ClusterEventWithHint{
			r.Event(fwk.Pod, fwk.Add|fwk.UpdatePodLabel|fwk.UpdatePodToleration|fwk.Delete, h.spreadAfterPodChange),
			node,
		}
	}
	return []fwk.ClusterEventWithHint{
		r.Event(fwk.AssignedPod, fwk.Add|fwk.UpdatePodLabel|fwk.Delete, h.spreadAfterAssignedPodChange),
		r.Event(fwk.TargetPod, fwk.UpdatePodLabel|fwk.UpdatePodToleration, h.spreadAfterTargetPodChange),
		node,
	}
}

// EventsToRegister: a pod on a node added, deleted or relabelled that the
// pod's terms select; a node added or relabelled in the topology keys
// they use; the pod's own labels changed (its anti-affinity may have
// selected its old labels).
func (*InterPodAffinity) EventsToRegister(fs feature.Features, l fwk.Listers) []fwk.ClusterEventWithHint {
	r, h := requeue.For(fs), hintsFor(fs, l)
	node := r.Event(fwk.Node, fwk.Add|fwk.UpdateNodeLabel, podAffinityAfterNodeChange)
	if !fs.PodEventsByRole {
		return []fwk.ClusterEventWithHint{
			r.Event(fwk.Pod, fwk.Add|fwk.UpdatePodLabel|fwk.Delete,
				requeue.OwnUpdateOr(requeue.AlwaysQueue, h.podAffinityAfterAssignedPodChange)),
			node,
		}
	}
	return []fwk.ClusterEventWithHint{
		r.Event(fwk.AssignedPod, fwk.Add|fwk.UpdatePodLabel|fwk.Delete, h.podAffinityAfterAssignedPodChange),
		r.Event(fwk.TargetPod, fwk.UpdatePodLabel, requeue.AlwaysQueue),
		node,
	}
}
