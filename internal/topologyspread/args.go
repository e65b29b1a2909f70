// Package topologyspread is the logic of the PodTopologySpread plugin that
// its filter (package filter) and its scorer (package score) share, so that
// the two can never disagree about which constraints a pod has, which nodes
// take part in spreading, or how many matching pods a domain holds:
//
//   - [Args] and [Defaults]: the plugin's arguments, with kube-scheduler's
//     validation and its system default constraints;
//   - [Defaults.Constraints]: a pod's hard or soft constraints, with
//     matchLabelKeys merged in, or the default constraints with the selector
//     of the Services and controllers that select the pod ([DefaultSelector]);
//   - [Domains]: per-domain counts of matching pods and the skew check
//     behind Filter;
//   - [Scores]: the per-domain counts, topology weights and normalization
//     behind Score.
//
// The semantics are those of kube-scheduler v1.36.3 with its default feature
// gates: NodeInclusionPolicyInPodTopologySpread (GA) and
// MatchLabelKeysInPodTopologySpread (beta) on, TaintTolerationComparisonOperators
// (alpha) off. MinDomains has been GA since v1.30 and is always honoured.
package topologyspread

import (
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
	metavalidation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// DefaultingType says where the default constraints of pods without
// constraints of their own come from.
type DefaultingType string

// The defaulting types of kube-scheduler's PodTopologySpreadArgs.
const (
	// SystemDefaulting spreads over hostnames (maxSkew 3) and zones
	// (maxSkew 5), both ScheduleAnyway; see [SystemDefaultConstraints].
	SystemDefaulting DefaultingType = "System"
	// ListDefaulting uses Args.DefaultConstraints, which may be empty.
	ListDefaulting DefaultingType = "List"
)

// Args configures PodTopologySpread like kube-scheduler's
// PodTopologySpreadArgs. The zero value is kube-scheduler's default: system
// defaulting.
type Args struct {
	// DefaultConstraints apply to pods without constraints of their own,
	// with the selector deduced from the Services and controllers that
	// select the pod. They must not set labelSelector, and need
	// DefaultingType List.
	DefaultConstraints []v1.TopologySpreadConstraint
	// DefaultingType is System (also when empty) or List.
	DefaultingType DefaultingType
}

// SystemDefaultConstraints returns the constraints of [SystemDefaulting]:
// kube-scheduler v1.36.3's, in its order.
func SystemDefaultConstraints() []v1.TopologySpreadConstraint {
	return []v1.TopologySpreadConstraint{
		{TopologyKey: v1.LabelHostname, WhenUnsatisfiable: v1.ScheduleAnyway, MaxSkew: 3},
		{TopologyKey: v1.LabelTopologyZone, WhenUnsatisfiable: v1.ScheduleAnyway, MaxSkew: 5},
	}
}

// systemDefaults is shared by every Defaults, which never modify it.
var systemDefaults = SystemDefaultConstraints()

// Validate reports every problem kube-scheduler's validation of
// PodTopologySpreadArgs would, each with its field path, or returns nil.
func (a Args) Validate() error {
	var errs field.ErrorList
	typ := a.DefaultingType
	if typ == "" {
		typ = SystemDefaulting
	}
	switch {
	case typ != SystemDefaulting && typ != ListDefaulting:
		errs = append(errs, field.NotSupported(field.NewPath("defaultingType"), a.DefaultingType, []string{string(SystemDefaulting), string(ListDefaulting)}))
	case typ == SystemDefaulting && len(a.DefaultConstraints) > 0:
		errs = append(errs, field.Invalid(field.NewPath("defaultingType"), typ, "must be List when defaultConstraints are set"))
	}
	path := field.NewPath("defaultConstraints")
	for i, c := range a.DefaultConstraints {
		p := path.Index(i)
		if c.MaxSkew <= 0 {
			errs = append(errs, field.Invalid(p.Child("maxSkew"), c.MaxSkew, "must be greater than zero"))
		}
		if c.TopologyKey == "" {
			errs = append(errs, field.Required(p.Child("topologyKey"), "must not be empty"))
		} else {
			errs = append(errs, metavalidation.ValidateLabelName(c.TopologyKey, p.Child("topologyKey"))...)
		}
		switch c.WhenUnsatisfiable {
		case v1.DoNotSchedule, v1.ScheduleAnyway:
		case "":
			errs = append(errs, field.Required(p.Child("whenUnsatisfiable"), "must not be empty"))
		default:
			errs = append(errs, field.NotSupported(p.Child("whenUnsatisfiable"), c.WhenUnsatisfiable, []string{string(v1.DoNotSchedule), string(v1.ScheduleAnyway)}))
		}
		if c.LabelSelector != nil {
			errs = append(errs, field.Forbidden(p.Child("labelSelector"), "must be unset: the selector is deduced for each pod"))
		}
		for j := range i {
			o := &a.DefaultConstraints[j]
			if o.TopologyKey == c.TopologyKey && o.WhenUnsatisfiable == c.WhenUnsatisfiable {
				errs = append(errs, field.Duplicate(p, fmt.Sprintf("{%v, %v}", c.TopologyKey, c.WhenUnsatisfiable)))
				break
			}
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("invalid PodTopologySpread arguments: %w", errors.Join(errsOf(errs)...))
}

func errsOf(l field.ErrorList) []error {
	out := make([]error, len(l))
	for i, e := range l {
		out[i] = e
	}
	return out
}

// Defaults are validated arguments: the default constraints and how they
// were chosen. The zero value is system defaulting.
type Defaults struct {
	// list is set for ListDefaulting; constraints then holds the list.
	list        bool
	constraints []v1.TopologySpreadConstraint
}

// NewDefaults validates args (see [Args.Validate]).
func NewDefaults(args Args) (Defaults, error) {
	if err := args.Validate(); err != nil {
		return Defaults{}, err
	}
	if args.DefaultingType != ListDefaulting {
		return Defaults{}, nil
	}
	return Defaults{list: true, constraints: append([]v1.TopologySpreadConstraint(nil), args.DefaultConstraints...)}, nil
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
