package queue

import (
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func labels(events []ClusterEvent) []string {
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
		{name: "several changes give several events, in kube-scheduler's order", change: func(n *v1.Node) {
			n.Spec.Unschedulable = false
			n.Labels = nil
			n.Spec.Taints = nil
		}, want: []string{"NodeUpdateNodeTaint", "NodeUpdateNodeLabel", "NodeUpdateNodeTaint"}},
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
		{name: "anything else is a plain update", change: func(p *v1.Pod) { p.Annotations = map[string]string{"x": "y"} }, want: []string{"UnschedulablePodUpdate"}},
		{name: "labels", change: func(p *v1.Pod) { p.Labels = nil }, want: []string{"UnschedulablePodUpdatePodLabel"}},
		{name: "a lower request", change: func(p *v1.Pod) { p.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse("500m") }, want: []string{"UnschedulablePodUpdatePodScaleDown"}},
		{name: "a request removed", change: func(p *v1.Pod) { delete(p.Spec.Containers[0].Resources.Requests, v1.ResourceMemory) }, want: []string{"UnschedulablePodUpdatePodScaleDown"}},
		{name: "a higher request is a plain update", change: func(p *v1.Pod) { p.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse("2") }, want: []string{"UnschedulablePodUpdate"}},
		{name: "the last scheduling gate removed", change: func(p *v1.Pod) { p.Spec.SchedulingGates = nil }, want: []string{"UnschedulablePodUpdatePodSchedulingGatesEliminated"}},
		{name: "a toleration added", change: func(p *v1.Pod) { p.Spec.Tolerations = []v1.Toleration{{Key: "k"}} }, want: []string{"UnschedulablePodUpdatePodToleration"}},
		{name: "generated claims", change: func(p *v1.Pod) { p.Status.ResourceClaimStatuses = []v1.PodResourceClaimStatus{{Name: "c"}} }, want: []string{"UnschedulablePodUpdatePodGeneratedResourceClaim"}},
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
		registered, actual ClusterEvent
		want               bool
	}{
		{name: "the same event", registered: EventNodeAdd, actual: EventNodeAdd, want: true},
		{name: "a specific update matches a registration for any update", registered: ClusterEvent{Resource: Node, ActionType: Update}, actual: ClusterEvent{Resource: Node, ActionType: UpdateNodeLabel}, want: true},
		{name: "a general update does not match a specific registration", registered: ClusterEvent{Resource: Node, ActionType: UpdateNodeLabel}, actual: ClusterEvent{Resource: Node, ActionType: Update}},
		{name: "another resource does not match", registered: EventNodeAdd, actual: ClusterEvent{Resource: PersistentVolume, ActionType: Add}},
		{name: "Pod matches assigned pods", registered: ClusterEvent{Resource: Pod, ActionType: Delete}, actual: EventAssignedPodDelete, want: true},
		{name: "Pod matches unscheduled pods", registered: ClusterEvent{Resource: Pod, ActionType: UpdatePodLabel}, actual: ClusterEvent{Resource: unscheduledPod, ActionType: UpdatePodLabel}, want: true},
		{name: "a wildcard registration matches everything", registered: ClusterEvent{Resource: WildCard, ActionType: All}, actual: EventNodeAdd, want: true},
		{name: "a wildcard event matches only a wildcard registration", registered: ClusterEvent{Resource: Node, ActionType: All}, actual: EventUnschedulableTimeout},
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
	for e, want := range map[ClusterEvent]string{
		EventNodeAdd:              "NodeAdd",
		EventAssignedPodDelete:    "AssignedPodDelete",
		EventUnscheduledPodUpdate: "UnschedulablePodUpdate",
		EventUnschedulableTimeout: "UnschedulableTimeout",
		{Resource: Node, ActionType: UpdateNodeTaint | UpdateNodeLabel}: "Node",
	} {
		if got := e.Label(); got != want {
			t.Errorf("Label = %q, want %q", got, want)
		}
	}
}
