package queue

import (
	"errors"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	k8slabels "k8s.io/apimachinery/pkg/labels"

	"github.com/kubesched/kubesched/internal/podaffinity"
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

// involvedInSpreading reports whether other may count in pod's spreading:
// it is the pod itself, or a pod of its namespace holding a place on a
// node.
func involvedInSpreading(other, pod *v1.Pod) bool {
	return other.UID == pod.UID || assignedOrNominated(other) && other.Namespace == pod.Namespace
}

// spreadAfterPodChange is PodTopologySpread's pod hint: a pod that counts
// in the pod's spreading was added or deleted and its labels match a
// constraint's selector, or was updated to match or stop matching one; or
// the pod itself gained tolerations and a constraint honours taints.
func (h clusterHints) spreadAfterPodChange(pod *v1.Pod, oldObj, newObj any) (QueueingHint, error) {
	old, updated, err := objects[*v1.Pod](oldObj, newObj)
	if err != nil {
		return Queue, err
	}
	if old == nil && updated == nil {
		return Queue, errNoObject
	}
	if updated != nil && !involvedInSpreading(updated, pod) || old != nil && !involvedInSpreading(old, pod) {
		return QueueSkip, nil
	}
	constraints, err := h.hardSpreadConstraints(pod)
	if err != nil {
		return Queue, err
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
		if updated.UID == pod.UID && !equality.Semantic.DeepEqual(updated.Spec.Tolerations, old.Spec.Tolerations) {
			for _, c := range constraints {
				if c.NodeTaintsPolicy == v1.NodeInclusionPolicyHonor {
					return Queue, nil
				}
			}
		}
		if equality.Semantic.DeepEqual(updated.Labels, old.Labels) {
			return QueueSkip, nil
		}
		for _, c := range constraints {
			if c.Selector.Matches(k8slabels.Set(old.Labels)) != c.Selector.Matches(k8slabels.Set(updated.Labels)) {
				return Queue, nil
			}
		}
		return QueueSkip, nil
	case updated != nil:
		if matchesAny(updated.Labels) {
			return Queue, nil
		}
		return QueueSkip, nil
	default:
		if matchesAny(old.Labels) {
			return Queue, nil
		}
		return QueueSkip, nil
	}
}

// spreadAfterNodeChange is PodTopologySpread's node hint. A node counts in
// spreading when it has every constraint's topology key. It helps when
// added counting, deleted counting, updated to count or not to, or
// updated while counting with a topology value or its taints changed.
func (h clusterHints) spreadAfterNodeChange(pod *v1.Pod, oldObj, newObj any) (QueueingHint, error) {
	old, node, err := objects[*v1.Node](oldObj, newObj)
	if err != nil {
		return Queue, err
	}
	if old == nil && node == nil {
		return Queue, errNoObject
	}
	constraints, err := h.hardSpreadConstraints(pod)
	if err != nil {
		return Queue, err
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
			return Queue, nil
		}
		if !counts(node) {
			return QueueSkip, nil
		}
		for _, c := range constraints {
			if old.Labels[c.TopologyKey] != node.Labels[c.TopologyKey] {
				return Queue, nil
			}
		}
		if !equality.Semantic.DeepEqual(old.Spec.Taints, node.Spec.Taints) {
			return Queue, nil
		}
		return QueueSkip, nil
	case node != nil:
		if counts(node) {
			return Queue, nil
		}
		return QueueSkip, nil
	default:
		if counts(old) {
			return Queue, nil
		}
		return QueueSkip, nil
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

// podAffinityAfterPodChange is InterPodAffinity's pod hint. The pod's own
// update may help (its labels may now match its own affinity). A pod on
// a node (or nominated to one) helps when added matching all of the pod's
// affinity terms, updated to match them all or to no longer match all its
// anti-affinity terms, or deleted while matching all of the anti-affinity
// terms or having an anti-affinity the pod matches all terms of. Terms
// are matched without namespace labels, as upstream's hint does.
func podAffinityAfterPodChange(pod *v1.Pod, oldObj, newObj any) (QueueingHint, error) {
	old, updated, err := objects[*v1.Pod](oldObj, newObj)
	if err != nil {
		return Queue, err
	}
	if old == nil && updated == nil {
		return Queue, errNoObject
	}
	if old != nil && updated != nil && updated.UID == pod.UID {
		return Queue, nil
	}
	if updated != nil && !assignedOrNominated(updated) || old != nil && !assignedOrNominated(old) {
		return QueueSkip, nil
	}
	affinity, anti, affinityErr, antiErr := requiredPodAffinity(pod)
	if err := errors.Join(affinityErr, antiErr); err != nil {
		return Queue, err
	}
	switch {
	case old != nil && updated != nil:
		if !podaffinity.MatchesAll(affinity, old) && podaffinity.MatchesAll(affinity, updated) ||
			podaffinity.MatchesAll(anti, old) && !podaffinity.MatchesAll(anti, updated) {
			return Queue, nil
		}
		return QueueSkip, nil
	case updated != nil:
		if podaffinity.MatchesAll(affinity, updated) {
			return Queue, nil
		}
		return QueueSkip, nil
	}
	if podaffinity.MatchesAll(anti, old) {
		return Queue, nil
	}
	_, deletedAnti, _, err := requiredPodAffinity(old)
	if err != nil {
		return Queue, err
	}
	if podaffinity.MatchesAll(deletedAnti, pod) {
		return Queue, nil
	}
	return QueueSkip, nil
}

// podAffinityAfterNodeChange is InterPodAffinity's node hint: a node added
// with the topology key of an affinity term, or updated to have it or to
// another value of it; for anti-affinity, any node added, or a node
// updated to lose a term's topology key or change its value.
func podAffinityAfterNodeChange(pod *v1.Pod, oldObj, newObj any) (QueueingHint, error) {
	old, node, err := objects[*v1.Node](oldObj, newObj)
	if err != nil {
		return Queue, err
	}
	if node == nil {
		return Queue, errNoObject
	}
	affinity, anti, affinityErr, antiErr := requiredPodAffinity(pod)
	if err := errors.Join(affinityErr, antiErr); err != nil {
		return Queue, err
	}
	for i := range affinity {
		key := affinity[i].TopologyKey
		after, has := node.Labels[key]
		if old == nil {
			if has {
				return Queue, nil
			}
			continue
		}
		if before, had := old.Labels[key]; has && (!had || before != after) {
			return Queue, nil
		}
	}
	for i := range anti {
		if old == nil {
			return Queue, nil
		}
		key := anti[i].TopologyKey
		before, had := old.Labels[key]
		if after, has := node.Labels[key]; had && (!has || before != after) {
			return Queue, nil
		}
	}
	return QueueSkip, nil
}
