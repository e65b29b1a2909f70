package conformance

import (
	"fmt"
	"math/rand/v2"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// preemptionByDefault is whether [Generate] gives scenarios what makes
// preemption matter when KUBESCHED_GEN_PREEMPTION is unset: on, now that
// kubesched has DefaultPreemption (TestPreemption compares its decisions;
// TestDifferential the cycles of such scenarios).
const preemptionByDefault = true

// generatePreemption turns on, for [Generate], the generators of this
// file: KUBESCHED_GEN_PREEMPTION=1 turns them on, =0 off, and otherwise
// [preemptionByDefault] decides.
var generatePreemption = envSwitch("KUBESCHED_GEN_PREEMPTION", preemptionByDefault)

// preemptionStream is the second word of the preemption generators'
// random source, so that a seed's scenario is the same with them as
// without, apart from what they add.
const preemptionStream = 0x707265656d7074

// appLabel is the label PodDisruptionBudgets and the incoming pod's
// anti-affinity and spreading select on; apps are its values.
const appLabel = "app"

var apps = []string{"web", "db", "batch"}

// priorities are those of running pods: mostly low, some equal to the
// incoming pod's usual ones, a few negative.
var priorities = []int32{0, 0, 0, 100, 100, 500, 1000, 2000, -10}

// podsStarted is when the first generated pods started; others started
// an hour or two later.
var podsStarted = time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)

// addPreemption gives s what upstream's DefaultPreemption decides on: it
// gives running pods
// priorities (often equal ones), start times (not always) and app
// labels, fills most nodes with alike lower-priority pods, and gives the
// pod to schedule a higher priority (sometimes equal,
// sometimes with preemptionPolicy Never) and a request that rarely fits.
// It adds PodDisruptionBudgets over the apps, allowing 0, 1 or several
// disruptions, some already counting a pod as disrupted; sometimes a
// pending pod nominated to a node, a running pod being deleted by an
// earlier preemption on the pod's nominated node, or anti-affinity and
// topology spreading against an app, so that evicting a pod changes more
// than the free resources. Its randomness comes from a stream of its own.
func addPreemption(s *Scenario) {
	g := &generator{r: rand.New(rand.NewPCG(s.Seed, preemptionStream))}
	for i, p := range s.Pods {
		if g.chance(0.9) {
			p.Spec.Priority = ptrTo(pick(g, priorities))
		}
		if g.chance(0.85) {
			// Few distinct start times, so that nodes tie on them too.
			p.Status.StartTime = &metav1.Time{Time: podsStarted.Add(time.Duration(g.r.IntN(3)) * time.Hour)}
		}
		if g.chance(0.8) {
			if p.Labels == nil {
				p.Labels = map[string]string{}
			}
			p.Labels[appLabel] = apps[i%len(apps)]
			if g.chance(0.3) {
				p.Labels[appLabel] = pick(g, apps)
			}
		}
	}
	// Fillers alike on every node, so that nodes tie as candidates.
	count, priority, app := 1+g.r.IntN(3), pick(g, priorities[:6]), pick(g, apps)
	for _, n := range s.Nodes {
		if g.chance(0.85) {
			s.Pods = append(s.Pods, fillers(n, count, priority, app)...)
		}
	}
	g.preemptor(s)
	for i := range g.r.IntN(5) {
		s.Objects = append(s.Objects, g.disruptionBudget(s, i))
	}
	if g.chance(0.2) {
		g.nominatedPod(s)
	}
	if g.chance(0.1) {
		g.terminatingVictim(s)
	}
}

func ptrTo[T any](v T) *T { return &v }

// fillers returns count pods of app bound to n, at priority, which
// together take about all of its cpu.
func fillers(n *v1.Node, count int, priority int32, app string) []*v1.Pod {
	cpu := n.Status.Allocatable.Cpu().MilliValue()
	if cpu <= 0 {
		return nil
	}
	var pods []*v1.Pod
	for i := range count {
		name := fmt.Sprintf("filler-%s-%d", n.Name, i)
		p := &v1.Pod{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
			ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceDefault, UID: types.UID("uid-" + name), Labels: map[string]string{appLabel: app}},
			Spec: v1.PodSpec{
				NodeName: n.Name,
				Priority: &priority,
				Containers: []v1.Container{{Name: "c", Image: "registry.k8s.io/pause:3.9", Resources: v1.ResourceRequirements{Requests: v1.ResourceList{
					v1.ResourceCPU:    *resource.NewMilliQuantity(cpu/int64(count), resource.DecimalSI),
					v1.ResourceMemory: *resource.NewQuantity(64*1024*1024, resource.BinarySI),
				}}}},
			},
			Status: v1.PodStatus{StartTime: &metav1.Time{Time: podsStarted}},
		}
		pods = append(pods, p)
	}
	return pods
}

// preemptor makes s's pod one that wants to preempt: a higher priority
// than most running pods, and a cpu request that a node has room for only
// once pods are evicted.
func (g *generator) preemptor(s *Scenario) {
	p := s.Pod
	p.Spec.Priority = ptrTo(pick(g, []int32{1000, 1000, 2000, 500, 100, 0}))
	if g.chance(0.15) {
		p.Spec.PreemptionPolicy = ptrTo(v1.PreemptNever)
	}
	if g.chance(0.8) {
		c := &p.Spec.Containers[0]
		if c.Resources.Requests == nil {
			c.Resources.Requests = v1.ResourceList{}
		}
		c.Resources.Requests[v1.ResourceCPU] = *resource.NewMilliQuantity(pick(g, []int64{500, 1000, 2000, 3000}), resource.DecimalSI)
		if c.Resources.Limits != nil {
			c.Resources.Limits[v1.ResourceCPU] = c.Resources.Requests[v1.ResourceCPU]
		}
	}
	app := pick(g, apps)
	switch {
	case g.chance(0.15):
		// Evicting the app's pods from a node lets the pod onto it.
		a := ensureAffinity(p)
		if a.PodAntiAffinity == nil {
			a.PodAntiAffinity = &v1.PodAntiAffinity{}
		}
		a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution,
			v1.PodAffinityTerm{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{appLabel: app}}, TopologyKey: v1.LabelHostname})
	case g.chance(0.1):
		// Evicting the app's pods evens out the skew.
		if p.Labels == nil {
			p.Labels = map[string]string{}
		}
		p.Labels[appLabel] = app
		p.Spec.TopologySpreadConstraints = append(p.Spec.TopologySpreadConstraints, v1.TopologySpreadConstraint{
			MaxSkew: 1, TopologyKey: v1.LabelHostname, WhenUnsatisfiable: v1.DoNotSchedule,
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{appLabel: app}},
		})
	}
}

// disruptionBudget returns a PodDisruptionBudget over one app, in the
// namespace of one of s's pods, allowing 0, 1 or several disruptions,
// sometimes with pods already disrupted, rarely with a selector that
// matches nothing.
func (g *generator) disruptionBudget(s *Scenario, i int) *policyv1.PodDisruptionBudget {
	namespace := metav1.NamespaceDefault
	if len(s.Pods) > 0 && g.chance(0.3) {
		namespace = g.pickPod(s.Pods).Namespace
	}
	selector := &metav1.LabelSelector{MatchLabels: map[string]string{appLabel: pick(g, apps)}}
	switch {
	case g.chance(0.2):
		selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{
			Key: appLabel, Operator: metav1.LabelSelectorOpIn, Values: []string{pick(g, apps), pick(g, apps)},
		}}}
	case g.chance(0.05):
		// An empty selector: upstream's preemption takes it to match
		// nothing.
		selector = &metav1.LabelSelector{}
	}
	minAvailable := intstr.FromInt32(1)
	b := &policyv1.PodDisruptionBudget{
		TypeMeta:   metav1.TypeMeta{APIVersion: "policy/v1", Kind: "PodDisruptionBudget"},
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("budget-%d", i), Namespace: namespace},
		Spec:       policyv1.PodDisruptionBudgetSpec{MinAvailable: &minAvailable, Selector: selector},
		Status:     policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: pick(g, []int32{0, 0, 1, 1, 3})},
	}
	if len(s.Pods) > 0 && g.chance(0.2) {
		b.Status.DisruptedPods = map[string]metav1.Time{g.pickPod(s.Pods).Name: {Time: podsStarted}}
	}
	return b
}

func (g *generator) pickPod(pods []*v1.Pod) *v1.Pod { return pick(g, pods) }

// nominatedPod adds a pending pod nominated to a node by an earlier
// preemption, at a priority that may be above, equal to or below the
// incoming pod's.
func (g *generator) nominatedPod(s *Scenario) {
	p := g.pod("nominated", 0.01)
	p.Spec.Priority = ptrTo(pick(g, []int32{0, 500, 1000, 2000, 5000}))
	p.Status.NominatedNodeName = g.pick(s.Nodes).Name
	s.Pods = append(s.Pods, p)
}

// terminatingVictim marks a lower-priority pod as being deleted by an
// earlier preemption and nominates the incoming pod to its node, where
// upstream then waits rather than preempting again.
func (g *generator) terminatingVictim(s *Scenario) {
	var bound []*v1.Pod
	for _, p := range s.Pods {
		if p.Spec.NodeName != "" {
			bound = append(bound, p)
		}
	}
	if len(bound) == 0 {
		return
	}
	victim := g.pickPod(bound)
	victim.DeletionTimestamp = &metav1.Time{Time: podsStarted.Add(24 * time.Hour)}
	victim.DeletionGracePeriodSeconds = ptrTo(int64(30))
	victim.Status.Conditions = append(victim.Status.Conditions, v1.PodCondition{
		Type: v1.DisruptionTarget, Status: v1.ConditionTrue, Reason: v1.PodReasonPreemptionByScheduler,
	})
	if g.chance(0.8) {
		s.Pod.Status.NominatedNodeName = victim.Spec.NodeName
	}
}
