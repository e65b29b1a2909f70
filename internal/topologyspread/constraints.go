package topologyspread

import (
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/kubesched/kubesched/fwk"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Constraint is a topology spread constraint ready to evaluate: its label
// selector parsed (with matchLabelKeys merged in) and its optional fields
// defaulted.
type Constraint struct {
	MaxSkew     int32
	TopologyKey string
	// Selector picks the pods that count; never nil.
	Selector labels.Selector
	// MinDomains is 1 when unset.
	MinDomains int32
	// NodeAffinityPolicy is Honor when unset, NodeTaintsPolicy Ignore.
	// Any value but Honor means Ignore.
	NodeAffinityPolicy v1.NodeInclusionPolicy
	NodeTaintsPolicy   v1.NodeInclusionPolicy
}

// Constraints returns pod's constraints whose whenUnsatisfiable is action
// (DoNotSchedule for Filter, ScheduleAnyway for Score): the pod's own if it
// has any, otherwise d's defaults with the selector [DefaultSelector] deduces
// from l. Defaults are dropped altogether when that selector is empty (the
// pod belongs to no Service or controller).
//
// It returns an error, worded as kube-scheduler's, when a selector of the
// pod's does not parse. It does not modify pod.
func (d Defaults) Constraints(pod *v1.Pod, action v1.UnsatisfiableConstraintAction, l fwk.Listers) ([]Constraint, error) {
	kind := "hard"
	if action == v1.ScheduleAnyway {
		kind = "soft"
	}
	if len(pod.Spec.TopologySpreadConstraints) > 0 {
		cs, err := compile(pod.Spec.TopologySpreadConstraints, pod.Labels, action)
		if err != nil {
			return nil, fmt.Errorf("obtaining pod's %s topology spread constraints: %w", kind, err)
		}
		return cs, nil
	}
	cs, err := compile(d.defaultConstraints(), pod.Labels, action)
	if err != nil {
		return nil, fmt.Errorf("setting default %s topology spread constraints: %w", kind, err)
	}
	if len(cs) == 0 {
		return nil, nil
	}
	// Listing Services and controllers is the costly part: only for pods
	// that have default constraints of this kind.
	sel := DefaultSelector(pod, l)
	if sel.Empty() {
		return nil, nil
	}
	for i := range cs {
		cs[i].Selector = sel
	}
	return cs, nil
}

// compile keeps the constraints whose whenUnsatisfiable is action, in order.
func compile(in []v1.TopologySpreadConstraint, podLabels map[string]string, action v1.UnsatisfiableConstraintAction) ([]Constraint, error) {
	var out []Constraint
	for i := range in {
		c := &in[i]
		if c.WhenUnsatisfiable != action {
			continue
		}
		sel, err := metav1.LabelSelectorAsSelector(c.LabelSelector)
		if err != nil {
			return nil, err
		}
		sel = withMatchLabelKeys(sel, c.MatchLabelKeys, podLabels)
		cc := Constraint{
			MaxSkew:            c.MaxSkew,
			TopologyKey:        c.TopologyKey,
			Selector:           sel,
			MinDomains:         1,
			NodeAffinityPolicy: v1.NodeInclusionPolicyHonor,
			NodeTaintsPolicy:   v1.NodeInclusionPolicyIgnore,
		}
		if c.MinDomains != nil {
			cc.MinDomains = *c.MinDomains
		}
		if c.NodeAffinityPolicy != nil {
			cc.NodeAffinityPolicy = *c.NodeAffinityPolicy
		}
		if c.NodeTaintsPolicy != nil {
			cc.NodeTaintsPolicy = *c.NodeTaintsPolicy
		}
		out = append(out, cc)
	}
	return out, nil
}

// withMatchLabelKeys adds to sel an equality requirement for each key of
// keys that the pod has a label for. A selector that matches nothing (a nil
// labelSelector) stays as it is.
func withMatchLabelKeys(sel labels.Selector, keys []string, podLabels map[string]string) labels.Selector {
	var set labels.Set
	for _, k := range keys {
		if v, ok := podLabels[k]; ok {
			if set == nil {
				set = labels.Set{}
			}
			set[k] = v
		}
	}
	if set == nil {
		return sel
	}
	reqs, selectable := sel.Requirements()
	if !selectable {
		return sel
	}
	return labels.SelectorFromSet(set).Add(reqs...)
}

var (
	replicationControllerKind = v1.SchemeGroupVersion.WithKind("ReplicationController")
	replicaSetKind            = appsv1.SchemeGroupVersion.WithKind("ReplicaSet")
	statefulSetKind           = appsv1.SchemeGroupVersion.WithKind("StatefulSet")
)

// DefaultSelector returns the selector of the pods that default constraints
// count for pod, as kube-scheduler deduces it: the union of the selectors
// of the Services in pod's namespace that select it, then, if the pod's
// controller is a ReplicationController, its selector merged in, or if it
// is a ReplicaSet or StatefulSet, the requirements of its label selector
// added. A controller that cannot be found, and lister errors, are ignored;
// nil listers are empty. The result is empty when nothing selects the pod.
func DefaultSelector(pod *v1.Pod, l fwk.Listers) labels.Selector {
	set := labels.Set{}
	// Selectors of objects that select the same pod cannot conflict, so a
	// plain merge is safe.
	if l.Services != nil {
		if services, err := l.Services.List(labels.Everything()); err == nil {
			for _, s := range services {
				// A Service without a selector selects nothing. Like a
				// client-go lister, the empty namespace means all of them.
				if (pod.Namespace != "" && s.Namespace != pod.Namespace) || s.Spec.Selector == nil {
					continue
				}
				// As kube-scheduler's selector of the set, without
				// building one per Service and pod.
				if labels.ValidatedSetSelector(s.Spec.Selector).Matches(labels.Set(pod.Labels)) {
					set = labels.Merge(set, s.Spec.Selector)
				}
			}
		}
	}
	sel := labels.SelectorFromSet(set)

	owner := metav1.GetControllerOfNoCopy(pod)
	if owner == nil {
		return sel
	}
	gv, err := schema.ParseGroupVersion(owner.APIVersion)
	if err != nil {
		return sel
	}
	switch gv.WithKind(owner.Kind) {
	case replicationControllerKind:
		if l.ReplicationControllers == nil {
			break
		}
		if rc := find(l.ReplicationControllers.List, pod.Namespace, owner.Name); rc != nil {
			return labels.SelectorFromSet(labels.Merge(set, rc.Spec.Selector))
		}
	case replicaSetKind:
		if l.ReplicaSets == nil {
			break
		}
		if rs := find(l.ReplicaSets.List, pod.Namespace, owner.Name); rs != nil {
			return withRequirementsOf(sel, rs.Spec.Selector)
		}
	case statefulSetKind:
		if l.StatefulSets == nil {
			break
		}
		if ss := find(l.StatefulSets.List, pod.Namespace, owner.Name); ss != nil {
			return withRequirementsOf(sel, ss.Spec.Selector)
		}
	}
	return sel
}

// withRequirementsOf adds the requirements of a controller's label
// selector to sel; one that does not parse, or a nil one, adds nothing.
func withRequirementsOf(sel labels.Selector, ls *metav1.LabelSelector) labels.Selector {
	parsed, ok := controllerSelector(ls)
	if !ok {
		return sel
	}
	if sel.Empty() {
		return parsed
	}
	reqs, _ := parsed.Requirements()
	return sel.Add(reqs...)
}

// controllerSelectors keeps controllers' label selectors parsed, by
// selector, so that the replicas of one controller, placed one after
// another, do not parse its selector each time. An entry holds a copy of
// what it parsed, so that a selector changed in place is parsed again.
var controllerSelectors struct {
	sync.Mutex
	parsed map[*metav1.LabelSelector]parsedSelector
}

type parsedSelector struct {
	from metav1.LabelSelector
	sel  labels.Selector
	ok   bool
}

// maxControllerSelectors bounds controllerSelectors; past it, it starts
// over.
const maxControllerSelectors = 1024

// controllerSelector returns ls parsed as a selector, and false when it
// is nil, does not parse, or selects nothing.
func controllerSelector(ls *metav1.LabelSelector) (labels.Selector, bool) {
	if ls == nil {
		return nil, false
	}
	cache := &controllerSelectors
	cache.Lock()
	defer cache.Unlock()
	if p, ok := cache.parsed[ls]; ok && sameLabelSelector(&p.from, ls) {
		return p.sel, p.ok
	}
	p := parsedSelector{from: *ls.DeepCopy()}
	if sel, err := metav1.LabelSelectorAsSelector(ls); err == nil {
		if reqs, selectable := sel.Requirements(); selectable {
			p.sel, p.ok = labels.NewSelector().Add(reqs...), true
		}
	}
	if cache.parsed == nil || len(cache.parsed) >= maxControllerSelectors {
		cache.parsed = map[*metav1.LabelSelector]parsedSelector{}
	}
	cache.parsed[ls] = p
	return p.sel, p.ok
}

// sameLabelSelector reports whether a and b are written alike.
func sameLabelSelector(a, b *metav1.LabelSelector) bool {
	return maps.Equal(a.MatchLabels, b.MatchLabels) &&
		slices.EqualFunc(a.MatchExpressions, b.MatchExpressions, func(x, y metav1.LabelSelectorRequirement) bool {
			return x.Key == y.Key && x.Operator == y.Operator && slices.Equal(x.Values, y.Values)
		})
}

// find returns the object named name in namespace ns, or nil when there is
// none or listing fails.
func find[T interface {
	comparable
	GetNamespace() string
	GetName() string
}](list func(labels.Selector) ([]T, error), ns, name string) T {
	var zero T
	objs, err := list(labels.Everything())
	if err != nil {
		return zero
	}
	for _, o := range objs {
		if o != zero && o.GetNamespace() == ns && o.GetName() == name {
			return o
		}
	}
	return zero
}
