package preemption

import (
	"context"
	"errors"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubesched/kubesched/filter"
	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/nodeinfo"
)

// TestAVictimWithoutAStartTimeStartedNow: kube-scheduler takes a pod
// without status.startTime as started at the moment of the decision. Of
// two nodes alike but for when their victim started, preemption prefers
// the one whose victim started later (less work lost): the victim
// without a start time when the clock is past the other's, the other
// when the clock is before it.
func TestAVictimWithoutAStartTimeStartedNow(t *testing.T) {
	t.Parallel()
	started := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		name     string
		now      time.Time
		wantNode string
	}{
		{name: "the clock after the other victim's start: the victim without one is the newer", now: started.Add(time.Hour), wantNode: "b"},
		{name: "the clock before the other victim's start: that victim is the newer", now: started.Add(-time.Hour), wantNode: "a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fit, err := filter.NewNodeResourcesFit(nil)
			if err != nil {
				t.Fatal(err)
			}
			fw, err := framework.New(
				framework.WithPlugin(fit, 1),
				framework.WithPlugin(&DefaultPreemption{now: func() time.Time { return tc.now }}, 0),
			)
			if err != nil {
				t.Fatal(err)
			}
			onA := clockPod("on-a", "a", 0)
			onA.Status.StartTime = &metav1.Time{Time: started}
			onB := clockPod("on-b", "b", 0) // no start time
			_, err = fw.Schedule(context.Background(), clockPod("preemptor", "", 1000), nodeinfo.Build(
				[]*v1.Node{clockNode("a"), clockNode("b")}, []*v1.Pod{onA, onB}))
			var fitErr *framework.FitError
			if !errors.As(err, &fitErr) || fitErr.Preemption == nil {
				t.Fatalf("Schedule: %v, want a FitError with a preemption", err)
			}
			if got := fitErr.Preemption.NominatedNodeName; got != tc.wantNode {
				t.Errorf("nominated to %s, want %s", got, tc.wantNode)
			}
		})
	}
}

func clockNode(name string) *v1.Node {
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Status: v1.NodeStatus{Allocatable: v1.ResourceList{
		v1.ResourceCPU: resource.MustParse("2"), v1.ResourceMemory: resource.MustParse("8Gi"), v1.ResourcePods: resource.MustParse("110"),
	}}}
}

func clockPod(name, nodeName string, priority int32) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)},
		Spec: v1.PodSpec{NodeName: nodeName, Priority: &priority, Containers: []v1.Container{{Name: "c",
			Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("2")}}}}},
	}
}
