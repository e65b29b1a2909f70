package conformance

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// generateAffinityAndSpread turns on, for [Generate], the generators of
// this file: what InterPodAffinity and PodTopologySpread read. It is on
// unless KUBESCHED_CONFORMANCE_AFFINITY=0, which gives back the scenarios
// seeds gave before these generators existed.
var generateAffinityAndSpread = os.Getenv("KUBESCHED_CONFORMANCE_AFFINITY") != "0"

// Pod labels come from a few keys and values, so that affinity terms,
// spread constraints, Services and controllers select some pods and not
// others. "tier" is also a node label key; pod and node labels never meet.
const (
	labelApp     = "app"
	labelVersion = "version"
	labelEnv     = "env"
)

var (
	podNamespaces = []string{metav1.NamespaceDefault, "team-a", "team-b"}
	podLabels     = []struct {
		key    string
		values []string
	}{
		{labelApp, []string{"web", "db", "cache"}},
		{labelTier, []string{"frontend", "backend"}},
		{labelVersion, []string{"v1", "v2"}},
	}
	controllerKinds = []string{"ReplicaSet", "StatefulSet", "ReplicationController"}
	spreadActions   = []v1.UnsatisfiableConstraintAction{v1.DoNotSchedule, v1.ScheduleAnyway}
	policies        = []v1.NodeInclusionPolicy{v1.NodeInclusionPolicyHonor, v1.NodeInclusionPolicyIgnore}
	// deletionTime has whole seconds, which is all YAML keeps.
	deletionTime = metav1.NewTime(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
)

// affinityAndSpread adds to s what InterPodAffinity and PodTopologySpread
// read. The scenario gets Namespaces, Services and controllers. Every pod
// gets a namespace and usually labels, and some are owned by a controller,
// which (like a Service selecting the pod) makes upstream spread the
// incoming pod by default. Bound and incoming pods get pod affinity,
// anti-affinity and topology spread constraints, the incoming pod more
// often; a few bound pods are terminating.
func (g *generator) affinityAndSpread(s *Scenario) {
	owners := g.workloadObjects(s)
	for _, p := range s.Pods {
		g.workload(p, owners, 0.3)
		g.podAffinity(p, 0.1, 0.1)
		if g.chance(0.1) {
			p.Spec.TopologySpreadConstraints = g.spreadConstraints(p)
		}
		if g.chance(0.1) {
			// PodTopologySpread does not count terminating pods;
			// InterPodAffinity does.
			p.DeletionTimestamp = new(deletionTime)
			p.DeletionGracePeriodSeconds = new(int64(30))
		}
	}
	g.workload(s.Pod, owners, 0.4)
	// Required terms often leave no node, so they are rarer.
	g.podAffinity(s.Pod, 0.15, 0.3)
	if g.chance(0.5) {
		s.Pod.Spec.TopologySpreadConstraints = g.spreadConstraints(s.Pod)
	}
}

// workloadObjects makes s's objects the Namespaces, controllers and
// Services that pods may belong to, and returns the controllers.
func (g *generator) workloadObjects(s *Scenario) []owner {
	s.Objects = g.namespaces()
	owners := g.controllers()
	for _, o := range owners {
		s.Objects = append(s.Objects, o.object)
	}
	for i := range g.r.IntN(4) {
		s.Objects = append(s.Objects, g.service(i))
	}
	return owners
}

// namespaces returns the pods' namespaces, labelled for namespace
// selectors as the API server (kubernetes.io/metadata.name) and users
// (team, env) label them.
func (g *generator) namespaces() []runtime.Object {
	var objs []runtime.Object
	for _, name := range podNamespaces {
		ns := &v1.Namespace{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Namespace"},
			ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-namespace-" + name), Labels: map[string]string{v1.LabelMetadataName: name}},
		}
		if team, ok := strings.CutPrefix(name, "team-"); ok {
			ns.Labels[labelTeam] = team
		}
		if g.chance(0.6) {
			ns.Labels[labelEnv] = pick(g, []string{"prod", "dev"})
		}
		objs = append(objs, ns)
	}
	return objs
}

// owner is a generated controller, and what the pods it owns share.
type owner struct {
	object    runtime.Object
	ref       metav1.OwnerReference
	namespace string
	// labels satisfy the controller's selector.
	labels map[string]string
}

// controllers returns up to three ReplicaSets, StatefulSets and
// ReplicationControllers, each selecting an app (and sometimes a tier or
// version) in one namespace.
func (g *generator) controllers() []owner {
	var owners []owner
	for i := range g.r.IntN(4) {
		kind := pick(g, controllerKinds)
		labels := map[string]string{labelApp: pick(g, podLabels[0].values)}
		if g.chance(0.3) {
			labels[labelTier] = pick(g, podLabels[1].values)
		}
		selector := &metav1.LabelSelector{MatchLabels: maps.Clone(labels)}
		// Set-based selectors exist only in the apps/v1 controllers.
		if kind != "ReplicationController" && g.chance(0.3) {
			versions := podLabels[2].values
			labels[labelVersion] = pick(g, versions)
			selector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: labelVersion, Operator: metav1.LabelSelectorOpIn, Values: versions}}
		}
		name := fmt.Sprintf("%s-%d", strings.ToLower(kind), i)
		meta := metav1.ObjectMeta{Name: name, Namespace: pick(g, podNamespaces), UID: types.UID("uid-" + name), Labels: maps.Clone(labels)}
		// The API server requires a template its selector matches.
		template := v1.PodTemplateSpec{
			ObjectMeta: metav1.ObjectMeta{Labels: maps.Clone(labels)},
			Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.9"}}},
		}
		var obj runtime.Object
		switch kind {
		case "ReplicaSet":
			obj = &appsv1.ReplicaSet{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: kind}, ObjectMeta: meta,
				Spec: appsv1.ReplicaSetSpec{Selector: selector, Template: template}}
		case "StatefulSet":
			obj = &appsv1.StatefulSet{TypeMeta: metav1.TypeMeta{APIVersion: "apps/v1", Kind: kind}, ObjectMeta: meta,
				Spec: appsv1.StatefulSetSpec{Selector: selector, Template: template}}
		default:
			obj = &v1.ReplicationController{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: kind}, ObjectMeta: meta,
				Spec: v1.ReplicationControllerSpec{Selector: maps.Clone(labels), Template: &template}}
		}
		owners = append(owners, owner{
			object:    obj,
			namespace: meta.Namespace,
			labels:    labels,
			ref: metav1.OwnerReference{
				APIVersion: obj.GetObjectKind().GroupVersionKind().GroupVersion().String(), Kind: kind,
				Name: name, UID: meta.UID, Controller: new(true), BlockOwnerDeletion: new(true),
			},
		})
	}
	return owners
}

// service returns a Service selecting an app (and sometimes a tier) in one
// namespace, or rarely none: a Service without a selector selects no pods.
func (g *generator) service(i int) *v1.Service {
	name := fmt.Sprintf("service-%d", i)
	svc := &v1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: pick(g, podNamespaces), UID: types.UID("uid-" + name)},
		Spec:       v1.ServiceSpec{Ports: []v1.ServicePort{{Port: 80, Protocol: v1.ProtocolTCP}}},
	}
	if g.chance(0.1) {
		return svc
	}
	svc.Spec.Selector = map[string]string{labelApp: pick(g, podLabels[0].values)}
	if g.chance(0.3) {
		svc.Spec.Selector[labelTier] = pick(g, podLabels[1].values)
	}
	return svc
}

// workload gives p a namespace and labels and, with probability pOwned, a
// controller among owners, whose namespace and labels p then has.
func (g *generator) workload(p *v1.Pod, owners []owner, pOwned float64) {
	p.Namespace = pick(g, podNamespaces)
	p.Labels = nil
	for _, l := range podLabels {
		if g.chance(0.7) {
			if p.Labels == nil {
				p.Labels = map[string]string{}
			}
			p.Labels[l.key] = pick(g, l.values)
		}
	}
	if !g.chance(pOwned) {
		return
	}
	if len(owners) == 0 || g.chance(0.1) {
		// A controller that is gone, or of a kind default spreading
		// ignores.
		kind := pick(g, []string{"ReplicaSet", "DaemonSet"})
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: kind, Name: "gone", UID: "uid-gone", Controller: new(true)}}
		return
	}
	o := pick(g, owners)
	p.Namespace = o.namespace
	if p.Labels == nil {
		p.Labels = map[string]string{}
	}
	maps.Copy(p.Labels, o.labels)
	ref := o.ref
	if g.chance(0.1) {
		// An owner that is not the controller does not make default
		// spreading apply.
		ref.Controller = nil
	}
	p.OwnerReferences = []metav1.OwnerReference{ref}
}

// podAffinity gives p required pod affinity and anti-affinity terms, with
// probability pRequired each, and preferred ones, with probability
// pPreferred each.
func (g *generator) podAffinity(p *v1.Pod, pRequired, pPreferred float64) {
	var affinity v1.PodAffinity
	var anti v1.PodAntiAffinity
	if g.chance(pRequired) {
		affinity.RequiredDuringSchedulingIgnoredDuringExecution = g.affinityTerms(p)
	}
	if g.chance(pPreferred) {
		affinity.PreferredDuringSchedulingIgnoredDuringExecution = g.weightedAffinityTerms(p)
	}
	if g.chance(pRequired) {
		anti.RequiredDuringSchedulingIgnoredDuringExecution = g.affinityTerms(p)
	}
	if g.chance(pPreferred) {
		anti.PreferredDuringSchedulingIgnoredDuringExecution = g.weightedAffinityTerms(p)
	}
	if affinity.RequiredDuringSchedulingIgnoredDuringExecution != nil || affinity.PreferredDuringSchedulingIgnoredDuringExecution != nil {
		ensureAffinity(p).PodAffinity = &affinity
	}
	if anti.RequiredDuringSchedulingIgnoredDuringExecution != nil || anti.PreferredDuringSchedulingIgnoredDuringExecution != nil {
		ensureAffinity(p).PodAntiAffinity = &anti
	}
}

func (g *generator) affinityTerms(p *v1.Pod) []v1.PodAffinityTerm {
	var terms []v1.PodAffinityTerm
	for range 1 + g.r.IntN(2) {
		terms = append(terms, g.podAffinityTerm(p))
	}
	return terms
}

func (g *generator) weightedAffinityTerms(p *v1.Pod) []v1.WeightedPodAffinityTerm {
	var terms []v1.WeightedPodAffinityTerm
	for range 1 + g.r.IntN(3) {
		terms = append(terms, v1.WeightedPodAffinityTerm{Weight: 1 + g.r.Int32N(100), PodAffinityTerm: g.podAffinityTerm(p)})
	}
	return terms
}

// podAffinityTerm returns a term of pod p. It selects pods in p's namespace
// unless it lists namespaces or has a namespace selector (or both, which
// selects the union).
func (g *generator) podAffinityTerm(p *v1.Pod) v1.PodAffinityTerm {
	t := v1.PodAffinityTerm{LabelSelector: g.podSelector(p), TopologyKey: g.topologyKey()}
	if g.chance(0.2) {
		t.Namespaces = []string{pick(g, podNamespaces)}
		if other := pick(g, podNamespaces); g.chance(0.5) && other != t.Namespaces[0] {
			t.Namespaces = append(t.Namespaces, other)
		}
	}
	if g.chance(0.2) {
		t.NamespaceSelector = g.namespaceSelector()
	}
	if g.chance(0.25) {
		t.MatchLabelKeys, t.MismatchLabelKeys = g.labelKeys(t.LabelSelector, true)
		// kubesched's callers may build pods in Go, without the API
		// server: then upstream ignores the keys.
		if g.chance(0.9) {
			mergeLabelKeys(t.LabelSelector, t.MatchLabelKeys, metav1.LabelSelectorOpIn, p.Labels)
			mergeLabelKeys(t.LabelSelector, t.MismatchLabelKeys, metav1.LabelSelectorOpNotIn, p.Labels)
		}
	}
	return t
}

// topologyKey returns a key every node (hostname) or most nodes (zone,
// region) have, or rarely one that no node has.
func (g *generator) topologyKey() string {
	if g.chance(0.05) {
		return "absent"
	}
	return pick(g, []string{v1.LabelHostname, v1.LabelTopologyZone, v1.LabelTopologyRegion})
}

// podSelector returns a selector of pods: often one of p's own labels, so
// that p selects its own workload; otherwise one label or a few
// expressions; rarely empty (every pod) or nil (no pod).
func (g *generator) podSelector(p *v1.Pod) *metav1.LabelSelector {
	switch {
	case g.chance(0.04):
		return nil
	case g.chance(0.04):
		return &metav1.LabelSelector{}
	case len(p.Labels) > 0 && g.chance(0.4):
		key := pick(g, slices.Sorted(maps.Keys(p.Labels)))
		return &metav1.LabelSelector{MatchLabels: map[string]string{key: p.Labels[key]}}
	case g.chance(0.5):
		l := pick(g, podLabels)
		return &metav1.LabelSelector{MatchLabels: map[string]string{l.key: pick(g, l.values)}}
	}
	sel := &metav1.LabelSelector{}
	for range 1 + g.r.IntN(2) {
		l := pick(g, podLabels)
		req := metav1.LabelSelectorRequirement{Key: l.key, Operator: pick(g, []metav1.LabelSelectorOperator{
			metav1.LabelSelectorOpIn, metav1.LabelSelectorOpNotIn, metav1.LabelSelectorOpExists, metav1.LabelSelectorOpDoesNotExist,
		})}
		if req.Operator == metav1.LabelSelectorOpIn || req.Operator == metav1.LabelSelectorOpNotIn {
			req.Values = []string{pick(g, l.values)}
			if g.chance(0.3) {
				req.Values = l.values
			}
		}
		sel.MatchExpressions = append(sel.MatchExpressions, req)
	}
	return sel
}

// namespaceSelector selects every namespace, or some by their labels.
func (g *generator) namespaceSelector() *metav1.LabelSelector {
	switch g.r.IntN(4) {
	case 0:
		return &metav1.LabelSelector{}
	case 1:
		return &metav1.LabelSelector{MatchLabels: map[string]string{labelTeam: pick(g, []string{"a", "b"})}}
	case 2:
		return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: labelEnv, Operator: metav1.LabelSelectorOpIn, Values: []string{"prod"}},
		}}
	default:
		return &metav1.LabelSelector{MatchLabels: map[string]string{v1.LabelMetadataName: pick(g, podNamespaces)}}
	}
}

// labelKeys returns matchLabelKeys and, when mismatch is set,
// mismatchLabelKeys, as the API server accepts them: none without a
// selector, no key in both, and no matchLabelKeys key in the selector.
func (g *generator) labelKeys(selector *metav1.LabelSelector, mismatch bool) (matchKeys, mismatchKeys []string) {
	if selector == nil {
		return nil, nil
	}
	inSelector := map[string]bool{}
	for key := range selector.MatchLabels {
		inSelector[key] = true
	}
	for _, req := range selector.MatchExpressions {
		inSelector[req.Key] = true
	}
	for _, l := range podLabels {
		switch {
		case !inSelector[l.key] && g.chance(0.4):
			matchKeys = append(matchKeys, l.key)
		case mismatch && g.chance(0.3):
			mismatchKeys = append(mismatchKeys, l.key)
		}
	}
	return matchKeys, mismatchKeys
}

// mergeLabelKeys does to selector what the API server does when it
// creates a pod with matchLabelKeys (op In) or mismatchLabelKeys (op
// NotIn): for each of keys that the pod has a label for, it adds the
// requirement "key op (value)". Keys come with a selector (see
// [generator.labelKeys]).
func mergeLabelKeys(selector *metav1.LabelSelector, keys []string, op metav1.LabelSelectorOperator, podLabels map[string]string) {
	for _, key := range keys {
		if value, ok := podLabels[key]; ok {
			selector.MatchExpressions = append(selector.MatchExpressions, metav1.LabelSelectorRequirement{Key: key, Operator: op, Values: []string{value}})
		}
	}
}

// spreadConstraints returns one to three constraints for p, with distinct
// topology key and action pairs as the API server requires, and minDomains
// only where it is allowed (DoNotSchedule).
func (g *generator) spreadConstraints(p *v1.Pod) []v1.TopologySpreadConstraint {
	var constraints []v1.TopologySpreadConstraint
	for range 1 + g.r.IntN(3) {
		c := v1.TopologySpreadConstraint{
			MaxSkew:           1 + g.r.Int32N(3),
			TopologyKey:       g.topologyKey(),
			WhenUnsatisfiable: pick(g, spreadActions),
			LabelSelector:     g.podSelector(p),
		}
		if c.WhenUnsatisfiable == v1.DoNotSchedule && g.chance(0.25) {
			c.MinDomains = new(1 + g.r.Int32N(4))
		}
		if g.chance(0.3) {
			c.NodeAffinityPolicy = new(pick(g, policies))
		}
		if g.chance(0.3) {
			c.NodeTaintsPolicy = new(pick(g, policies))
		}
		if g.chance(0.25) {
			c.MatchLabelKeys, _ = g.labelKeys(c.LabelSelector, false)
			// Upstream merges the keys itself too, so both forms occur.
			if g.chance(0.9) {
				mergeLabelKeys(c.LabelSelector, c.MatchLabelKeys, metav1.LabelSelectorOpIn, p.Labels)
			}
		}
		duplicate := slices.ContainsFunc(constraints, func(o v1.TopologySpreadConstraint) bool {
			return o.TopologyKey == c.TopologyKey && o.WhenUnsatisfiable == c.WhenUnsatisfiable
		})
		if !duplicate {
			constraints = append(constraints, c)
		}
	}
	return constraints
}
