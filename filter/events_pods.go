package filter

import (
	"errors"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	k8slabels "k8s.io/apimachinery/pkg/labels"

	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/internal/podaffinity"
	"github.com/kubesched/kubesched/internal/requeue"
	"github.com/kubesched/kubesched/internal/topologyspread"
)

// The hints of the plugins that look at other pods: PodTopologySpread and
// InterPodAffinity.

// hardSpreadConstraints are the pod's DoNotSchedule constraints, or the
// default ones (none for the system defaults, which are all
// ScheduleAnyway), as PodTopologySpread's filter reads them.
func (h clusterHints) hardSpreadConstraints(pod *v1.Pod) ([]topologyspread.Constraint, error) {
	return topologyspread.Defaults{}.Constraints(pod, v1.DoNotSchedule, h.listers)
}

// spreadAfterPodChange is PodTopologySpread's pod hint before
// PodEventsByRole, for every pod event: a pod that counts in the pod's
// spreading (the pod itself, or a pod of its namespace holding a place on
// a node) was added or deleted and its labels match a constraint's
// selector, or was updated to match or stop matching one; or the pod
// itself gained tolerations and a constraint honours taints.
func (h clusterHints) spreadAfterPodChange(pod *v1.Pod, oldObj, newObj any) (fwk.QueueingHint, error) {
	return h.spreadAfterPodEvent(pod, oldObj, newObj, true)
}

// spreadAfterAssignedPodChange is PodTopologySpread's AssignedPod hint: a
// pod of the pod's namespace holding a place on a node was added or
// deleted and its labels match a constraint's selector, or was updated to
// match or stop matching one.
func (h clusterHints) spreadAfterAssignedPodChange(pod *v1.Pod, oldObj, newObj any) (fwk.QueueingHint, error) {
	return h.spreadAfterPodEvent(pod, oldObj, newObj, false)
}

// spreadAfterTargetPodChange is PodTopologySpread's TargetPod hint: the
// updated pod (the pod itself, as the queue raises it) gained tolerations
// and a constraint honours taints, or its labels now match a constraint's
// selector differently.
func (h clusterHints) spreadAfterTargetPodChange(pod *v1.Pod, oldObj, newObj any) (fwk.QueueingHint, error) {
	old, updated, err := requeue.Objects[*v1.Pod](oldObj, newObj)
	if err != nil {
		return fwk.Queue, err
	}
	if old == nil || updated == nil {
		return fwk.Queue, requeue.ErrNoObject
	}
	constraints, err := h.hardSpreadConstraints(pod)
	if err != nil {
		return fwk.Queue, err
	}
	return spreadAfterOwnUpdate(constraints, old, updated), nil
}

// spreadAfterPodEvent is the pod hint of PodTopologySpread, for bound
// pods' events, and with self for the pod's own too.
func (h clusterHints) spreadAfterPodEvent(pod *v1.Pod, oldObj, newObj any, self bool) (fwk.QueueingHint, error) {
	old, updated, err := requeue.Objects[*v1.Pod](oldObj, newObj)
	if err != nil {
		return fwk.Queue, err
	}
	if old == nil && updated == nil {
		return fwk.Queue, requeue.ErrNoObject
	}
	involved := func(other *v1.Pod) bool {
		return self && other.UID == pod.UID || requeue.AssignedOrNominated(other) && other.Namespace == pod.Namespace
	}
	if updated != nil && !involved(updated) || old != nil && !involved(old) {
		return fwk.QueueSkip, nil
	}
	constraints, err := h.hardSpreadConstraints(pod)
	if err != nil {
		return fwk.Queue, err
	}
	matchesAny := func(podLabels map[string]string) bool {
		for _, c := range constraints {
			if c.Selector.Matches(k8slabels.Set(podLabels)) {
				return true
			}
		}
		return false
	}
	switch {
	case old != nil && updated != nil:
		if self && updated.UID == pod.UID {
			return spreadAfterOwnUpdate(constraints, old, updated), nil
		}
		return spreadLabelsChanged(constraints, old, updated), nil
	case updated != nil:
		if matchesAny(updated.Labels) {
			return fwk.Queue, nil
		}
		return fwk.QueueSkip, nil
	default:
		if matchesAny(old.Labels) {
			return fwk.Queue, nil
		}
		return fwk.QueueSkip, nil
	}
}

// spreadAfterOwnUpdate is the verdict on the pod's own update: new
// tolerations help when a constraint honours taints; otherwise as
// spreadLabelsChanged.
func spreadAfterOwnUpdate(constraints []topologyspread.Constraint, old, updated *v1.Pod) fwk.QueueingHint {
	if !equality.Semantic.DeepEqual(updated.Spec.Tolerations, old.Spec.Tolerations) {
		for _, c := range constraints {
			if c.NodeTaintsPolicy == v1.NodeInclusionPolicyHonor {
				return fwk.Queue
			}
		}
	}
	return spreadLabelsChanged(constraints, old, updated)
}

// spreadLabelsChanged reports Queue when the update changed the pod's
// labels so that a constraint's selector matches them differently.
func spreadLabelsChanged(constraints []topologyspread.Constraint, old, updated *v1.Pod) fwk.QueueingHint {
	if equality.Semantic.DeepEqual(updated.Labels, old.Labels) {
		return fwk.QueueSkip
	}
	for _, c := range constraints {
		if c.Selector.Matches(k8slabels.Set(old.Labels)) != c.Selector.Matches(k8slabels.Set(updated.Labels)) {
			return fwk.Queue
		}
	}
	return fwk.QueueSkip
}

// spreadAfterNodeChange is PodTopologySpread's node hint. A node counts in
// spreading when it has every constraint's topology key. It helps when
// added counting, deleted counting, updated to count or not to, or
// updated while counting with a topology value or its taints changed.
func (h clusterHints) spreadAfterNodeChange(pod *v1.Pod, oldObj, newObj any) (fwk.QueueingHint, error) {
	old, node, err := requeue.Objects[*v1.Node](oldObj, newObj)
	if err != nil {
		return fwk.Queue, err
	}
	if old == nil && node == nil {
		return fwk.Queue, requeue.ErrNoObject
	}
	constraints, err := h.hardSpreadConstraints(pod)
	if err != nil {
		return fwk.Queue, err
	}
	counts := func(n *v1.Node) bool {
		if n == nil {
			return false
		}
		for _, c := range constraints {
			if _, ok := n.Labels[c.TopologyKey]; !ok {
				return false
			}
		}
		return true
	}
	switch {
	case old != nil && node != nil:
		if counts(old) != counts(node) {
			return fwk.Queue, nil
		}
		if !counts(node) {
			return fwk.QueueSkip, nil
		}
		for _, c := range constraints {
			if old.Labels[c.TopologyKey] != node.Labels[c.TopologyKey] {
				return fwk.Queue, nil
			}
		}
		if !equality.Semantic.DeepEqual(old.Spec.Taints, node.Spec.Taints) {
			return fwk.Queue, nil
		}
		return fwk.QueueSkip, nil
	case node != nil:
		if counts(node) {
			return fwk.Queue, nil
		}
		return fwk.QueueSkip, nil
	default:
		if counts(old) {
			return fwk.Queue, nil
		}
		return fwk.QueueSkip, nil
	}
}

// requiredPodAffinity parses the pod's required affinity and
// anti-affinity terms, as upstream's hints do: without resolving their
// namespace selectors. affinityErr and antiErr are set when that list does
// not parse; the preferred terms do not matter here.
func requiredPodAffinity(pod *v1.Pod) (affinity, anti []podaffinity.Term, affinityErr, antiErr error) {
	terms, err := podaffinity.Parse(pod)
	if err == nil {
		return terms.RequiredAffinity, terms.RequiredAntiAffinity, nil, nil
	}
	// Parse leaves a list that does not parse empty.
	if a := pod.Spec.Affinity; a != nil {
		if a.PodAffinity != nil && len(terms.RequiredAffinity) != len(a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution) {
			affinityErr = err
		}
		if a.PodAntiAffinity != nil && len(terms.RequiredAntiAffinity) != len(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) {
			antiErr = err
		}
	}
	return terms.RequiredAffinity, terms.RequiredAntiAffinity, affinityErr, antiErr
}

// podAffinityAfterAssignedPodChange is InterPodAffinity's hint for bound
// pods' events. A pod on a node (or nominated to one) helps when added
// matching all of the pod's affinity terms, updated to match them all or
// to no longer match its anti-affinity terms, or deleted while matching
// its anti-affinity terms or having an anti-affinity the pod matches.
// Matching anti-affinity terms is matching all of them, or any one of
// them with AnyAntiAffinityTermRequeues. Terms are matched without
// namespace labels, as upstream's hint does.
func (h clusterHints) podAffinityAfterAssignedPodChange(pod *v1.Pod, oldObj, newObj any) (fwk.QueueingHint, error) {
	old, updated, err := requeue.Objects[*v1.Pod](oldObj, newObj)
	if err != nil {
		return fwk.Queue, err
	}
	if old == nil && updated == nil {
		return fwk.Queue, requeue.ErrNoObject
	}
	if updated != nil && !requeue.AssignedOrNominated(updated) || old != nil && !requeue.AssignedOrNominated(old) {
		return fwk.QueueSkip, nil
	}
	affinity, anti, affinityErr, antiErr := requiredPodAffinity(pod)
	if err := errors.Join(affinityErr, antiErr); err != nil {
		return fwk.Queue, err
	}
	matchesAnti := podaffinity.MatchesAll
	if h.anyAntiTerm {
		matchesAnti = matchesAnyTerm
	}
	switch {
	case old != nil && updated != nil:
		if !podaffinity.MatchesAll(affinity, old) && podaffinity.MatchesAll(affinity, updated) ||
			matchesAnti(anti, old) && !matchesAnti(anti, updated) {
			return fwk.Queue, nil
		}
		return fwk.QueueSkip, nil
	case updated != nil:
		if podaffinity.MatchesAll(affinity, updated) {
			return fwk.Queue, nil
		}
		return fwk.QueueSkip, nil
	}
	if matchesAnti(anti, old) {
		return fwk.Queue, nil
	}
	_, deletedAnti, _, err := requiredPodAffinity(old)
	if err != nil {
		return fwk.Queue, err
	}
	if matchesAnti(deletedAnti, pod) {
		return fwk.Queue, nil
	}
	return fwk.QueueSkip, nil
}

// matchesAnyTerm reports whether pod matches one of terms, matched with
// no namespace labels.
func matchesAnyTerm(terms []podaffinity.Term, pod *v1.Pod) bool {
	for i := range terms {
		if terms[i].Matches(pod, nil) {
			return true
		}
	}
	return false
}

// podAffinityAfterNodeChange is InterPodAffinity's node hint: a node added
// with the topology key of an affinity term, or updated to have it or to
// another value of it; for anti-affinity, any node added, or a node
// updated to lose a term's topology key or change its value.
func podAffinityAfterNodeChange(pod *v1.Pod, oldObj, newObj any) (fwk.QueueingHint, error) {
	old, node, err := requeue.Objects[*v1.Node](oldObj, newObj)
	if err != nil {
		return fwk.Queue, err
	}
	if node == nil {
		return fwk.Queue, requeue.ErrNoObject
	}
	affinity, anti, affinityErr, antiErr := requiredPodAffinity(pod)
	if err := errors.Join(affinityErr, antiErr); err != nil {
		return fwk.Queue, err
	}
	for i := range affinity {
		key := affinity[i].TopologyKey
		after, has := node.Labels[key]
		if old == nil {
			if has {
				return fwk.Queue, nil
			}
			continue
		}
		if before, had := old.Labels[key]; has && (!had || before != after) {
			return fwk.Queue, nil
		}
	}
	for i := range anti {
		if old == nil {
			return fwk.Queue, nil
		}
		key := anti[i].TopologyKey
		before, had := old.Labels[key]
		if after, has := node.Labels[key]; had && (!has || before != after) {
			return fwk.Queue, nil
		}
	}
	return fwk.QueueSkip, nil
}
