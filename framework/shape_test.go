package framework

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesched/kubesched/internal/testcluster"
)

func TestSameShape(t *testing.T) {
	base := func() *v1.Pod { return testcluster.Pod("a", testcluster.Basic) }
	for _, tc := range []struct {
		name   string
		change func(*v1.Pod)
		same   bool
	}{
		{"a replica with another name and UID is the same shape", func(p *v1.Pod) { p.Name, p.UID = "b", "b" }, true},
		{"a request written another way is the same shape", func(p *v1.Pod) {
			p.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse("0.1")
		}, true},
		{"an empty toleration list is the same shape as none", func(p *v1.Pod) { p.Spec.Tolerations = []v1.Toleration{} }, true},
		{"a condition the other pod lacks is another shape", func(p *v1.Pod) {
			p.Status.Conditions = []v1.PodCondition{{Type: v1.PodScheduled, Status: v1.ConditionFalse}}
		}, false},
		{"a larger request is another shape", func(p *v1.Pod) {
			p.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse("101m")
		}, false},
		{"a node selector is another shape", func(p *v1.Pod) { p.Spec.NodeSelector = map[string]string{"zone": "a"} }, false},
		{"another priority is another shape", func(p *v1.Pod) { p.Spec.Priority = new(int32(7)) }, false},
		{"a pod being deleted is never the same shape", func(p *v1.Pod) { p.DeletionTimestamp = new(metav1.Now()) }, false},
		{"another nominated node is another shape", func(p *v1.Pod) { p.Status.NominatedNodeName = "n1" }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := base()
			tc.change(b)
			if got := sameShape(base(), b); got != tc.same {
				t.Fatalf("sameShape = %v, want %v", got, tc.same)
			}
		})
	}
}

func TestSameShapeIgnoresConditionTimes(t *testing.T) {
	a, b := testcluster.Pod("a", testcluster.Basic), testcluster.Pod("b", testcluster.Basic)
	a.Status.Conditions = []v1.PodCondition{{Type: v1.PodScheduled, Status: v1.ConditionFalse, LastTransitionTime: metav1.Unix(1, 0)}}
	b.Status.Conditions = []v1.PodCondition{{Type: v1.PodScheduled, Status: v1.ConditionFalse, LastTransitionTime: metav1.Unix(2, 0)}}
	if !sameShape(a, b) {
		t.Fatal("pods differing only in a condition's time are not the same shape")
	}
	b.Status.Conditions[0].Reason = "Unschedulable"
	if sameShape(a, b) {
		t.Fatal("pods whose conditions differ in reason are the same shape")
	}
}
