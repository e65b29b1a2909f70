package filter

import (
	"github.com/kubesched/kubesched/feature"
	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/internal/requeue"
)

// The plugins' EventsToRegister ([framework.EnqueueExtensions]) register
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
	listers framework.Listers
	// anyAntiTerm is the release's AnyAntiAffinityTermRequeues.
	anyAntiTerm bool
}

func hintsFor(fs feature.Features, l framework.Listers) clusterHints {
	return clusterHints{listers: l, anyAntiTerm: fs.AnyAntiAffinityTermRequeues}
}

// EventsToRegister: a node added schedulable or no longer unschedulable,
// or the pod gaining a toleration of node.kubernetes.io/unschedulable.
func (*NodeUnschedulable) EventsToRegister(fs feature.Features, _ framework.Listers) []framework.ClusterEventWithHint {
	r := requeue.For(fs)
	return []framework.ClusterEventWithHint{
		r.Event(framework.Node, framework.Add|framework.UpdateNodeTaint, nodeBecameSchedulable),
		r.Target(framework.UpdatePodToleration, podToleratesUnschedulable),
	}
}

// EventsToRegister: a node added.
func (*NodeName) EventsToRegister(fs feature.Features, _ framework.Listers) []framework.ClusterEventWithHint {
	return []framework.ClusterEventWithHint{requeue.For(fs).Event(framework.Node, framework.Add, nil)}
}

// EventsToRegister: a node added or updated that now has no NoSchedule or
// NoExecute taint the pod does not tolerate, or the pod gaining a
// toleration.
func (*TaintToleration) EventsToRegister(fs feature.Features, _ framework.Listers) []framework.ClusterEventWithHint {
	r := requeue.For(fs)
	return []framework.ClusterEventWithHint{
		r.Event(framework.Node, framework.Add|framework.UpdateNodeTaint, taintsNowTolerated),
		r.Target(framework.UpdatePodToleration, requeue.AlwaysQueue),
	}
}

// EventsToRegister: a node added or relabelled that now matches the pod's
// nodeSelector and required node affinity. The hint ignores the plugin's
// addedAffinity argument, which the default profile does not set: a
// profile that sets it sees more pods retried than kube-scheduler would
// retry, never fewer.
func (*NodeAffinity) EventsToRegister(fs feature.Features, _ framework.Listers) []framework.ClusterEventWithHint {
	return []framework.ClusterEventWithHint{
		requeue.For(fs).Event(framework.Node, framework.Add|framework.UpdateNodeLabel, nodeAffinityNowMatches),
	}
}

// EventsToRegister: a bound pod using one of the pod's host ports deleted,
// or a node added.
func (*NodePorts) EventsToRegister(fs feature.Features, _ framework.Listers) []framework.ClusterEventWithHint {
	r := requeue.For(fs)
	return []framework.ClusterEventWithHint{
		r.Assigned(framework.Delete, deletedPodFreesPorts),
		r.Event(framework.Node, framework.Add, nil),
	}
}

// EventsToRegister: a pod sharing the pod's disks deleted, a node added,
// one of the pod's claims added.
func (*VolumeRestrictions) EventsToRegister(fs feature.Features, _ framework.Listers) []framework.ClusterEventWithHint {
	r := requeue.For(fs)
	return []framework.ClusterEventWithHint{
		r.Assigned(framework.Delete, deletedPodFreesVolumes),
		r.Event(framework.Node, framework.Add, nil),
		r.Event(framework.PersistentVolumeClaim, framework.Add, claimOfPod),
	}
}

// EventsToRegister: a CSINode added or with a raised limit, a bound pod
// with attachments deleted, one of the pod's claims (or its ephemeral
// volumes' claims) added, a VolumeAttachment deleted.
func (*NodeVolumeLimits) EventsToRegister(fs feature.Features, _ framework.Listers) []framework.ClusterEventWithHint {
	r := requeue.For(fs)
	return []framework.ClusterEventWithHint{
		r.Event(framework.CSINode, framework.Add, nil),
		r.Event(framework.CSINode, framework.Update, csiNodeLimitRaised),
		r.Assigned(framework.Delete, deletedPodFreesAttachments),
		r.Event(framework.PersistentVolumeClaim, framework.Add, claimOfPodOrEphemeral),
		r.Event(framework.VolumeAttachment, framework.Delete, volumeAttachmentDeleted),
	}
}

// EventsToRegister: a StorageClass whose topology changed, one of the
// pod's claims added or updated, any PersistentVolume, a node added or
// relabelled, a CSINode's migration changed, a CSIDriver no longer
// tracking capacity, a CSIStorageCapacity grown.
func (*VolumeBinding) EventsToRegister(fs feature.Features, _ framework.Listers) []framework.ClusterEventWithHint {
	r := requeue.For(fs)
	return []framework.ClusterEventWithHint{
		r.Event(framework.StorageClass, framework.Add|framework.Update, storageClassTopologyChanged),
		r.Event(framework.PersistentVolumeClaim, framework.Add|framework.Update, claimOfPodOrEphemeral),
		r.Event(framework.PersistentVolume, framework.Add|framework.Update, nil),
		r.Event(framework.Node, framework.Add|framework.UpdateNodeLabel, nil),
		r.Event(framework.CSINode, framework.Add|framework.Update, csiNodeMigrationChanged),
		r.Event(framework.CSIDriver, framework.Update, csiDriverCapacityDisabled),
		r.Event(framework.CSIStorageCapacity, framework.Add|framework.Update, storageCapacityGrew),
	}
}

// EventsToRegister: a StorageClass added that waits for a consumer, a node
// added or relabelled, one of the pod's claims added or updated, a volume
// whose zones changed.
func (*VolumeZone) EventsToRegister(fs feature.Features, _ framework.Listers) []framework.ClusterEventWithHint {
	r := requeue.For(fs)
	return []framework.ClusterEventWithHint{
		r.Event(framework.StorageClass, framework.Add, storageClassWaitsForConsumer),
		r.Event(framework.Node, framework.Add|framework.UpdateNodeLabel, nil),
		r.Event(framework.PersistentVolumeClaim, framework.Add|framework.Update, claimOfPod),
		r.Event(framework.PersistentVolume, framework.Add|framework.Update, volumeTopologyChanged),
	}
}

// EventsToRegister: one of the pod's ResourceClaims created or changed in
// status, any claim deallocated (or, with ResourceClaimDeleteEvents,
// deleted while allocated), the pod's own generated claims recorded;
// nodes, DeviceClasses and ResourceSlices (a DeviceTaintRule's change
// among them, see the package doc) always. The claim and pod hints read
// the ResourceClaims through l (which claims the pod uses).
func (*DynamicResources) EventsToRegister(fs feature.Features, l framework.Listers) []framework.ClusterEventWithHint {
	r, h := requeue.For(fs), hintsFor(fs, l)
	claimActions := framework.Add | framework.Update
	if fs.ResourceClaimDeleteEvents {
		claimActions |= framework.Delete
	}
	return []framework.ClusterEventWithHint{
		r.Event(framework.Node, framework.Add|framework.UpdateNodeLabel|framework.UpdateNodeAllocatable, nil),
		r.Event(framework.ResourceClaim, claimActions, h.claimChangeHelps),
		r.Target(framework.UpdatePodGeneratedResourceClaim, h.podClaimsNowUsable),
		r.Event(framework.DeviceClass, framework.Add|framework.Update, nil),
		r.Event(framework.ResourceSlice, framework.Add|framework.Update, nil),
	}
}

// EventsToRegister: a node's declared features changed, or the features
// the pod needs.
func (*NodeDeclaredFeatures) EventsToRegister(fs feature.Features, _ framework.Listers) []framework.ClusterEventWithHint {
	r := requeue.For(fs)
	return []framework.ClusterEventWithHint{
		r.Event(framework.Node, framework.Add|framework.UpdateNodeDeclaredFeature, declaredFeaturesChanged),
		r.Target(framework.Update, requiredFeaturesChanged),
	}
}

// EventsToRegister: a node added, or grown (allocatable of a resource the
// pod requests, or pod slots), that the pod fits when empty; a pod on a
// node deleted; a bound pod scaled down in a resource the pod requests,
// or the pod itself scaled down; a DeviceClass that now provides an
// extended resource the pod requests. The node hint reads the
// DeviceClasses through l (an extended resource a class provides is not
// needed in the node's allocatable).
func (*NodeResourcesFit) EventsToRegister(fs feature.Features, l framework.Listers) []framework.ClusterEventWithHint {
	r, h := requeue.For(fs), hintsFor(fs, l)
	node := r.Event(framework.Node, framework.Add|framework.UpdateNodeAllocatable, h.nodeNowFitsResources)
	class := r.Event(framework.DeviceClass, framework.Add|framework.Update, deviceClassProvidesRequest)
	if !fs.PodEventsByRole {
		return []framework.ClusterEventWithHint{
			r.Event(framework.Pod, framework.Delete|framework.UpdatePodScaleDown, resourcesFreedByPod), node, class,
		}
	}
	return []framework.ClusterEventWithHint{
		r.Event(framework.AssignedPod, framework.Delete, podHeldPlace), node, class,
		r.Event(framework.AssignedPod, framework.UpdatePodScaleDown, boundPodGaveUpRequest),
		r.Event(framework.TargetPod, framework.UpdatePodScaleDown, requeue.AlwaysQueue),
	}
}

// EventsToRegister: a pod on a node added, deleted or relabelled that the
// pod's constraints select; a node added, deleted or changed in the
// topology keys they use; the pod's own labels or tolerations changed.
func (*PodTopologySpread) EventsToRegister(fs feature.Features, l framework.Listers) []framework.ClusterEventWithHint {
	r, h := requeue.For(fs), hintsFor(fs, l)
	node := r.Event(framework.Node, framework.Add|framework.Delete|framework.UpdateNodeLabel|framework.UpdateNodeTaint, h.spreadAfterNodeChange)
	if !fs.PodEventsByRole {
		return []framework.ClusterEventWithHint{
			r.Event(framework.Pod, framework.Add|framework.UpdatePodLabel|framework.UpdatePodToleration|framework.Delete, h.spreadAfterPodChange),
			node,
		}
	}
	return []framework.ClusterEventWithHint{
		r.Event(framework.AssignedPod, framework.Add|framework.UpdatePodLabel|framework.Delete, h.spreadAfterAssignedPodChange),
		r.Event(framework.TargetPod, framework.UpdatePodLabel|framework.UpdatePodToleration, h.spreadAfterTargetPodChange),
		node,
	}
}

// EventsToRegister: a pod on a node added, deleted or relabelled that the
// pod's terms select; a node added or relabelled in the topology keys
// they use; the pod's own labels changed (its anti-affinity may have
// selected its old labels).
func (*InterPodAffinity) EventsToRegister(fs feature.Features, l framework.Listers) []framework.ClusterEventWithHint {
	r, h := requeue.For(fs), hintsFor(fs, l)
	node := r.Event(framework.Node, framework.Add|framework.UpdateNodeLabel, podAffinityAfterNodeChange)
	if !fs.PodEventsByRole {
		return []framework.ClusterEventWithHint{
			r.Event(framework.Pod, framework.Add|framework.UpdatePodLabel|framework.Delete,
				requeue.OwnUpdateOr(requeue.AlwaysQueue, h.podAffinityAfterAssignedPodChange)),
			node,
		}
	}
	return []framework.ClusterEventWithHint{
		r.Event(framework.AssignedPod, framework.Add|framework.UpdatePodLabel|framework.Delete, h.podAffinityAfterAssignedPodChange),
		r.Event(framework.TargetPod, framework.UpdatePodLabel, requeue.AlwaysQueue),
		node,
	}
}
