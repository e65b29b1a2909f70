package queue

import (
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesched/kubesched/feature"
	"github.com/kubesched/kubesched/fwk"
)

func labels(events []fwk.ClusterEvent) []string {
	var out []string
	for _, e := range events {
		out = append(out, e.Label())
	}
	return out
}

func TestNodeSchedulingPropertiesChange(t *testing.T) {
	t.Parallel()
	base := func() *v1.Node {
		return &v1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: map[string]string{"zone": "a"}, Annotations: map[string]string{"x": "1"}},
			Spec:       v1.NodeSpec{Unschedulable: true, Taints: []v1.Taint{{Key: "k", Effect: v1.TaintEffectNoSchedule}}},
			Status: v1.NodeStatus{
				Allocatable: v1.ResourceList{v1.ResourceCPU: resource.MustParse("4")},
				Conditions:  []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue, Reason: "ok"}},
			},
		}
	}
	for _, tc := range []struct {
		name   string
		before func(n *v1.Node) // changes the old node, if set
		change func(n *v1.Node)
		want   []string
	}{
		{name: "a heartbeat changes nothing that matters", change: func(n *v1.Node) {
			n.Status.Conditions[0].LastHeartbeatTime = metav1.Now()
			n.Status.Conditions[0].Reason = "still ok"
		}},
		{name: "becoming schedulable is a taint update", change: func(n *v1.Node) { n.Spec.Unschedulable = false }, want: []string{"NodeUpdateNodeTaint"}},
		{name: "becoming unschedulable is not an event", before: func(n *v1.Node) { n.Spec.Unschedulable = false }, change: func(n *v1.Node) {}},
		{name: "allocatable", change: func(n *v1.Node) { n.Status.Allocatable[v1.ResourceCPU] = resource.MustParse("8") }, want: []string{"NodeUpdateNodeAllocatable"}},
		{name: "the same allocatable written differently is no change", change: func(n *v1.Node) { n.Status.Allocatable[v1.ResourceCPU] = resource.MustParse("4000m") }},
		{name: "labels", change: func(n *v1.Node) { n.Labels["zone"] = "b" }, want: []string{"NodeUpdateNodeLabel"}},
		{name: "taints", change: func(n *v1.Node) { n.Spec.Taints = nil }, want: []string{"NodeUpdateNodeTaint"}},
		{name: "a condition's status", change: func(n *v1.Node) { n.Status.Conditions[0].Status = v1.ConditionFalse }, want: []string{"NodeUpdateNodeCondition"}},
		{name: "annotations", change: func(n *v1.Node) { n.Annotations = nil }, want: []string{"NodeUpdateNodeAnnotation"}},
		{name: "declared features", change: func(n *v1.Node) { n.Status.DeclaredFeatures = []string{"f"} }, want: []string{"NodeUpdateNodeDeclaredFeature"}},
		{name: "the pod preemption policy", change: func(n *v1.Node) {
			n.Spec.PodPreemptionPolicy = &v1.NodePodPreemptionPolicy{DisableResizePreemption: []string{"autoscaler"}}
		}, want: []string{"NodeUpdateNodePreemptionPolicy"}},
		{name: "several changes give several events, in kube-scheduler's order", change: func(n *v1.Node) {
			n.Spec.Unschedulable = false
			n.Labels = nil
			n.Spec.Taints = nil
			n.Status.DeclaredFeatures = []string{"f"}
			n.Spec.PodPreemptionPolicy = &v1.NodePodPreemptionPolicy{}
		}, want: []string{"NodeUpdateNodeTaint", "NodeUpdateNodeLabel", "NodeUpdateNodeTaint", "NodeUpdateNodePreemptionPolicy", "NodeUpdateNodeDeclaredFeature"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			old, updated := base(), base()
			if tc.before != nil {
				tc.before(old)
			}
			tc.change(updated)
			if got := labels(NodeSchedulingPropertiesChange(updated, old)); !slices.Equal(got, tc.want) {
				t.Errorf("events %v, want %v", got, tc.want)
			}
		})
	}
	if NodeSchedulingPropertiesChange(nil, base()) != nil {
		t.Error("a nil node raised events")
	}
}

func TestPodSchedulingPropertiesChange(t *testing.T) {
	t.Parallel()
	base := func() *v1.Pod {
		return &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: map[string]string{"app": "a"}},
			Spec: v1.PodSpec{
				SchedulingGates: []v1.PodSchedulingGate{{Name: "g"}},
				Containers: []v1.Container{{Name: "c", Resources: v1.ResourceRequirements{Requests: v1.ResourceList{
					v1.ResourceCPU: resource.MustParse("1"), v1.ResourceMemory: resource.MustParse("1Gi"),
				}}}},
			},
		}
	}
	for _, tc := range []struct {
		name   string
		change func(p *v1.Pod)
		want   []string
	}{
		{name: "anything else is a plain update", change: func(p *v1.Pod) { p.Annotations = map[string]string{"x": "y"} }, want: []string{"UnscheduledPodUpdate"}},
		{name: "labels", change: func(p *v1.Pod) { p.Labels = nil }, want: []string{"UnscheduledPodUpdatePodLabel"}},
		{name: "a lower request", change: func(p *v1.Pod) { p.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse("500m") }, want: []string{"UnscheduledPodUpdatePodScaleDown"}},
		{name: "a request removed", change: func(p *v1.Pod) { delete(p.Spec.Containers[0].Resources.Requests, v1.ResourceMemory) }, want: []string{"UnscheduledPodUpdatePodScaleDown"}},
		{name: "a higher request", change: func(p *v1.Pod) { p.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse("2") }, want: []string{"UnscheduledPodUpdatePodScaleUp"}},
		{name: "a request added", change: func(p *v1.Pod) {
			p.Spec.Containers[0].Resources.Requests[v1.ResourceEphemeralStorage] = resource.MustParse("1Gi")
		}, want: []string{"UnscheduledPodUpdatePodScaleUp"}},
		{name: "one request down and another up", change: func(p *v1.Pod) {
			p.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse("500m")
			p.Spec.Containers[0].Resources.Requests[v1.ResourceMemory] = resource.MustParse("2Gi")
		}, want: []string{"UnscheduledPodUpdatePodScaleDown", "UnscheduledPodUpdatePodScaleUp"}},
		{name: "the last scheduling gate removed", change: func(p *v1.Pod) { p.Spec.SchedulingGates = nil }, want: []string{"UnscheduledPodUpdatePodSchedulingGatesEliminated"}},
		{name: "a toleration added", change: func(p *v1.Pod) { p.Spec.Tolerations = []v1.Toleration{{Key: "k"}} }, want: []string{"UnscheduledPodUpdatePodToleration"}},
		{name: "generated claims", change: func(p *v1.Pod) { p.Status.ResourceClaimStatuses = []v1.PodResourceClaimStatus{{Name: "c"}} }, want: []string{"UnscheduledPodUpdatePodGeneratedResourceClaim"}},
		{name: "a bound pod is an assigned pod", change: func(p *v1.Pod) { p.Spec.NodeName = "n"; p.Labels = nil }, want: []string{"AssignedPodUpdatePodLabel"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			old, updated := base(), base()
			tc.change(updated)
			if got := labels(PodSchedulingPropertiesChange(updated, old)); !slices.Equal(got, tc.want) {
				t.Errorf("events %v, want %v", got, tc.want)
			}
		})
	}
}

func TestClusterEventMatch(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name               string
		registered, actual fwk.ClusterEvent
		want               bool
	}{
		{name: "the same event", registered: fwk.EventNodeAdd, actual: fwk.EventNodeAdd, want: true},
		{name: "a specific update matches a registration for any update", registered: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Update}, actual: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.UpdateNodeLabel}, want: true},
		{name: "a general update does not match a specific registration", registered: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.UpdateNodeLabel}, actual: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.Update}},
		{name: "another resource does not match", registered: fwk.EventNodeAdd, actual: fwk.ClusterEvent{Resource: fwk.PersistentVolume, ActionType: fwk.Add}},
		{name: "Pod matches assigned pods", registered: fwk.ClusterEvent{Resource: fwk.Pod, ActionType: fwk.Delete}, actual: fwk.EventAssignedPodDelete, want: true},
		{name: "Pod matches unscheduled pods", registered: fwk.ClusterEvent{Resource: fwk.Pod, ActionType: fwk.UpdatePodLabel}, actual: fwk.ClusterEvent{Resource: fwk.UnscheduledPod, ActionType: fwk.UpdatePodLabel}, want: true},
		{name: "Pod matches the target pod", registered: fwk.ClusterEvent{Resource: fwk.Pod, ActionType: fwk.UpdatePodLabel}, actual: fwk.ClusterEvent{Resource: fwk.TargetPod, ActionType: fwk.UpdatePodLabel}, want: true},
		{name: "AssignedPod does not match the target pod", registered: fwk.ClusterEvent{Resource: fwk.AssignedPod, ActionType: fwk.UpdatePodLabel}, actual: fwk.ClusterEvent{Resource: fwk.TargetPod, ActionType: fwk.UpdatePodLabel}},
		{name: "TargetPod does not match another pending pod", registered: fwk.ClusterEvent{Resource: fwk.TargetPod, ActionType: fwk.Update}, actual: fwk.ClusterEvent{Resource: fwk.UnscheduledPod, ActionType: fwk.UpdatePodLabel}},
		{name: "a registration for any update matches a scale up", registered: fwk.ClusterEvent{Resource: fwk.TargetPod, ActionType: fwk.Update}, actual: fwk.ClusterEvent{Resource: fwk.TargetPod, ActionType: fwk.UpdatePodScaleUp}, want: true},
		{name: "a wildcard registration matches everything", registered: fwk.ClusterEvent{Resource: fwk.WildCard, ActionType: fwk.All}, actual: fwk.EventNodeAdd, want: true},
		{name: "a wildcard event matches only a wildcard registration", registered: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.All}, actual: fwk.EventUnschedulableTimeout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := tc.registered.Match(tc.actual); got != tc.want {
				t.Errorf("%s.Match(%s) = %v, want %v", tc.registered.Label(), tc.actual.Label(), got, tc.want)
			}
		})
	}
}

func TestEventLabelsAreKubeSchedulers(t *testing.T) {
	t.Parallel()
	for e, want := range map[fwk.ClusterEvent]string{
		fwk.EventNodeAdd:              "NodeAdd",
		fwk.EventAssignedPodDelete:    "AssignedPodDelete",
		fwk.EventUnscheduledPodUpdate: "UnscheduledPodUpdate",
		{Resource: fwk.TargetPod, ActionType: fwk.UpdatePodScaleUp}:                 "TargetPodUpdatePodScaleUp",
		{Resource: fwk.Node, ActionType: fwk.UpdateNodePreemptionPolicy}:            "NodeUpdateNodePreemptionPolicy",
		fwk.EventUnschedulableTimeout:                                               "UnschedulableTimeout",
		{Resource: fwk.Node, ActionType: fwk.UpdateNodeTaint | fwk.UpdateNodeLabel}: "Node",
	} {
		if got := e.Label(); got != want {
			t.Errorf("Label = %q, want %q", got, want)
		}
	}
}

// releaseFeatures are the supported releases' features, by version.
func releaseFeatures(t *testing.T, version string) feature.Features {
	t.Helper()
	r, err := feature.ReleaseFor(version)
	if err != nil {
		t.Fatal(err)
	}
	return r.Features
}

func TestPodUpdateEventsClassifyByRoleAndRelease(t *testing.T) {
	t.Parallel()
	pending := func(mods ...func(*v1.Pod)) *v1.Pod {
		p := &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "p", Labels: map[string]string{"app": "a"}},
			Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Resources: v1.ResourceRequirements{Requests: v1.ResourceList{
				v1.ResourceCPU: resource.MustParse("1"),
			}}}}},
		}
		for _, m := range mods {
			m(p)
		}
		return p
	}
	bound := func(p *v1.Pod) { p.Spec.NodeName = "n" }
	relabelled := func(p *v1.Pod) { p.Labels = nil }
	grown := func(p *v1.Pod) { p.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse("2") }
	for _, tc := range []struct {
		name         string
		release      string
		old, updated *v1.Pod
		target       bool
		want         []string
	}{
		{name: "the pending pod's own update is a TargetPod event from v1.37",
			release: "1.37", old: pending(), updated: pending(relabelled), target: true, want: []string{"TargetPodUpdatePodLabel"}},
		{name: "another pending pod's update is an UnscheduledPod event",
			release: "1.37", old: pending(), updated: pending(relabelled), want: []string{"UnscheduledPodUpdatePodLabel"}},
		{name: "a bound pod's update is an AssignedPod event even as the target",
			release: "1.37", old: pending(bound), updated: pending(bound, relabelled), target: true, want: []string{"AssignedPodUpdatePodLabel"}},
		{name: "the pending pod's own update is an UnscheduledPod event in v1.36",
			release: "1.36", old: pending(), updated: pending(relabelled), target: true, want: []string{"UnscheduledPodUpdatePodLabel"}},
		{name: "a bound pod's update is an AssignedPod event in v1.36",
			release: "1.36", old: pending(bound), updated: pending(bound, relabelled), want: []string{"AssignedPodUpdatePodLabel"}},
		{name: "a higher request is a scale up from v1.37",
			release: "1.37", old: pending(bound), updated: pending(bound, grown), want: []string{"AssignedPodUpdatePodScaleUp"}},
		{name: "a higher request is a plain update in v1.36",
			release: "1.36", old: pending(), updated: pending(grown), target: true, want: []string{"UnscheduledPodUpdate"}},
		{name: "a higher request beside new labels is a label update only in v1.36",
			release: "1.36", old: pending(), updated: pending(grown, relabelled), want: []string{"UnscheduledPodUpdatePodLabel"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := labels(PodUpdateEvents(releaseFeatures(t, tc.release), tc.updated, tc.old, tc.target))
			if !slices.Equal(got, tc.want) {
				t.Errorf("events %v, want %v", got, tc.want)
			}
		})
	}
	if PodUpdateEvents(feature.Default(), nil, pending(), true) != nil {
		t.Error("a nil pod raised events")
	}
}

func TestNodeUpdateEventsByRelease(t *testing.T) {
	t.Parallel()
	old := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}}
	updated := old.DeepCopy()
	updated.Spec.PodPreemptionPolicy = &v1.NodePodPreemptionPolicy{DisableResizePreemption: []string{"autoscaler"}}
	updated.Labels = map[string]string{"zone": "a"}
	for _, tc := range []struct {
		name, release string
		want          []string
	}{
		{name: "v1.37 reports a pod preemption policy change", release: "1.37", want: []string{"NodeUpdateNodeLabel", "NodeUpdateNodePreemptionPolicy"}},
		{name: "v1.36 does not", release: "1.36", want: []string{"NodeUpdateNodeLabel"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := labels(NodeUpdateEvents(releaseFeatures(t, tc.release), updated, old)); !slices.Equal(got, tc.want) {
				t.Errorf("events %v, want %v", got, tc.want)
			}
		})
	}
}

func TestActionTypeNames(t *testing.T) {
	t.Parallel()
	for a, want := range map[fwk.ActionType]string{
		fwk.UpdateNodePreemptionPolicy:                "UpdateNodePreemptionPolicy",
		fwk.UpdatePodScaleUp:                          "UpdatePodScaleUp",
		fwk.UpdatePodScaleDown | fwk.UpdatePodScaleUp: "",
	} {
		if got := a.String(); got != want {
			t.Errorf("String() = %q, want %q", got, want)
		}
	}
	if fwk.Update&(fwk.UpdateNodePreemptionPolicy|fwk.UpdatePodScaleUp) != fwk.UpdateNodePreemptionPolicy|fwk.UpdatePodScaleUp || fwk.Update&(fwk.Add|fwk.Delete) != 0 {
		t.Errorf("Update is %b, want every update kind and nothing else", fwk.Update)
	}
}
