// Package feature holds what kube-scheduler releases decide differently,
// as one value a plugin reads: the feature gates the plugins consult, at a
// release's defaults, and behaviour a release changed without a gate.
//
// Every plugin that reads one has a Features field; nil there means
// [Default], the newest supported release. The releases' values are in
// releases.go, the one place to read what differs between them.
package feature

// Features are the switches kubesched's plugins read. A field named after
// a kube-scheduler feature gate follows that gate; the others name
// behaviour a release changed, true from the release named.
type Features struct {
	// StorageCapacityScoring (feature gate; beta and on from v1.37): the
	// VolumeBinding score plugin ranks nodes by how full the pod's claims
	// would make their storage. Off, it scores nothing.
	StorageCapacityScoring bool
	// VolumeLimitScaling (feature gate; beta and on from v1.37):
	// NodeVolumeLimits rejects a node whose CSINode does not list a CSI
	// driver the pod's volumes need when the driver's CSIDriver object
	// asks for that.
	VolumeLimitScaling bool
	// DRADeviceTaintRules (feature gate; GA from v1.37): DeviceTaintRules
	// taint the devices they select.
	DRADeviceTaintRules bool
	// TaintTolerationComparisonOperators (feature gate; alpha, off): Gt and
	// Lt tolerations match numeric taint values.
	TaintTolerationComparisonOperators bool

	// NodeNamePreFilter (v1.37): NodeName's PreFilter narrows a pod with
	// spec.nodeName to that node, so the other nodes count as excluded by
	// PreFilter ("didn't satisfy plugin(s) [NodeName]") instead of as
	// rejected by NodeName's Filter.
	NodeNamePreFilter bool
	// ListedNamespacesOnly (v1.37): once the namespaces an incoming pod's
	// affinity term selects are listed, its namespaceSelector matches
	// nothing more. Before, it kept matching, so a selector that matches
	// empty labels (DoesNotExist, NotIn) matched pods in every namespace.
	ListedNamespacesOnly bool
	// ImageVolumesInThreshold (v1.37): ImageLocality's upper threshold
	// counts image volumes as well as containers.
	ImageVolumesInThreshold bool
	// PreemptionMessageNamesVictims (v1.37): a successful preemption's
	// PostFilter message says "preemption: found a potential placement
	// for pod on node X, preempting N victims", DynamicResources' does
	// not say "no new claims to deallocate, ", and victims are listed
	// most important first.
	PreemptionMessageNamesVictims bool
	// BudgetStopsAtFirstViolation (v1.37): a potential victim counts
	// against the PodDisruptionBudgets matching it, in the order they are
	// listed, only until one has no disruption left; it then violates
	// that budget, and the later ones do not count it. Before, it counted
	// against every budget matching it. The two differ only where
	// budgets overlap.
	BudgetStopsAtFirstViolation bool
	// CELErrorsNameTheDevice (v1.37, dynamic-resource-allocation v0.37):
	// a DeviceClass's or claim's CEL selector that fails at run time is
	// reported as "selector #N on device D: CEL runtime error: …", with a
	// hint on optional chaining after a missing map key. Before,
	// "selector #N: CEL runtime error: …" and no hint.
	CELErrorsNameTheDevice bool

	// PodEventsByRole (v1.37): the scheduling queue tells pod events apart
	// by the pod's role: AssignedPod (a bound pod), TargetPod (the
	// pending pod itself, updated) and UnscheduledPod (another pending
	// pod). The default plugins register for AssignedPod and TargetPod
	// events instead of Pod ones, and their TargetPod hints no longer
	// check that the update is the pending pod's own. Before, every pod
	// event matched a registration for Pod.
	PodEventsByRole bool
	// AnyAntiAffinityTermRequeues (v1.37): InterPodAffinity's hint retries
	// a pending pod when a bound pod matching any one of its required
	// anti-affinity terms is deleted or relabelled not to match, or when a
	// deleted pod had an anti-affinity term the pending pod matches. Before,
	// the pod had to match all of the terms.
	AnyAntiAffinityTermRequeues bool
	// RegisteredEventsOnly (v1.37): a plugin's rejections are retried only
	// on the events it registers. Before, a plugin that registered node
	// additions but not node taint updates was retried on every taint
	// update too, without a hint.
	RegisteredEventsOnly bool
	// ScaleUpAndPreemptionPolicyEvents (v1.37): an update that raises a
	// pod's requests is an UpdatePodScaleUp event, and one that changes a
	// node's spec.podPreemptionPolicy an UpdateNodePreemptionPolicy event.
	// Before, neither was told apart from other updates.
	ScaleUpAndPreemptionPolicyEvents bool
	// ResourceClaimDeleteEvents (v1.37): DynamicResources registers
	// ResourceClaim deletions; deleting a claim that was still allocated
	// retries the pods it rejected.
	ResourceClaimDeleteEvents bool
	// NominationRecordedOnAdd (v1.37): the scheduling queue records a
	// pending pod's status.nominatedNodeName when the pod is added, gated
	// or not. Before, only when it entered the active queue on its
	// addition or on a plain update.
	NominationRecordedOnAdd bool
}

// Of returns *f, or [Default] when f is nil: how a plugin reads its
// Features field.
func Of(f *Features) Features {
	if f == nil {
		return Default()
	}
	return *f
}
