// Package topologyspread is the logic of the PodTopologySpread plugin that
// its filter (package filter) and its scorer (package score) share, so that
// the two can never disagree about which constraints a pod has, which nodes
// take part in spreading, or how many matching pods a domain holds:
//
//   - [Defaults]: the plugin's default constraints, from its checked
//     arguments or the system's;
//   - [Defaults.Constraints]: a pod's hard or soft constraints, with
//     matchLabelKeys merged in, or the default constraints with the selector
//     of the Services and controllers that select the pod ([DefaultSelector]);
//   - [Domains]: per-domain counts of matching pods and the skew check
//     behind Filter;
//   - [Scores]: the per-domain counts, topology weights and normalization
//     behind Score.
//
// The semantics are those of kube-scheduler with its default feature
// gates: NodeInclusionPolicyInPodTopologySpread (GA) and
// MatchLabelKeysInPodTopologySpread (beta) on, TaintTolerationComparisonOperators
// (alpha) off. MinDomains has been GA since v1.30 and is always honoured.
package topologyspread

import (
	v1 "k8s.io/api/core/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"
)

// SystemDefaultConstraints returns the constraints of System defaulting,
// hostnames (maxSkew 3) and zones (maxSkew 5), both ScheduleAnyway:
// kube-scheduler's, in its order.
func SystemDefaultConstraints() []v1.TopologySpreadConstraint {
	return []v1.TopologySpreadConstraint{
		{TopologyKey: v1.LabelHostname, WhenUnsatisfiable: v1.ScheduleAnyway, MaxSkew: 3},
		{TopologyKey: v1.LabelTopologyZone, WhenUnsatisfiable: v1.ScheduleAnyway, MaxSkew: 5},
	}
}

// systemDefaults is shared by every Defaults, which never modify it.
var systemDefaults = SystemDefaultConstraints()

// Defaults are the default constraints and how they were chosen. The zero value is system defaulting.
type Defaults struct {
	// list is set for ListDefaulting; constraints then holds the list.
	list        bool
	constraints []v1.TopologySpreadConstraint
}

// NewDefaults returns the defaults of args, defaulted and checked as
// kube-scheduler checks them.
func NewDefaults(args *configv1.PodTopologySpreadArgs) Defaults {
	if args.DefaultingType != configv1.ListDefaulting {
		return Defaults{}
	}
	return Defaults{list: true, constraints: append([]v1.TopologySpreadConstraint(nil), args.DefaultConstraints...)}
}

// System reports whether the defaults are the system's. Scoring then lets
// nodes missing some topology label still be scored on the others.
func (d Defaults) System() bool { return !d.list }

func (d Defaults) defaultConstraints() []v1.TopologySpreadConstraint {
	if d.list {
		return d.constraints
	}
	return systemDefaults
}
