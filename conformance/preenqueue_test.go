package conformance

import (
	"context"
	"errors"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesched/kubesched"
	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/nodeinfo"
)

// TestGatedPodsAreTurnedDownAsUpstreamDoes runs upstream's PreEnqueue
// plugins on gated pods and checks that kubesched refuses the same pods
// with the same plugin and message.
func TestGatedPodsAreTurnedDownAsUpstreamDoes(t *testing.T) {
	linkedOnly(t)
	t.Parallel()
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Status: v1.NodeStatus{Allocatable: v1.ResourceList{v1.ResourcePods: resource.MustParse("10")}}}
	nodes := nodeinfo.Build([]*v1.Node{node}, nil)
	for _, gates := range [][]string{nil, {"one"}, {"example.com/b", "example.com/a"}, {"x", "x"}} {
		pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: "p"}}
		for _, g := range gates {
			pod.Spec.SchedulingGates = append(pod.Spec.SchedulingGates, v1.PodSchedulingGate{Name: g})
		}
		var wantPlugin, wantMsg string
		for _, pl := range testOracle.fw.PreEnqueuePlugins() {
			if s := pl.PreEnqueue(context.Background(), pod); !s.IsSuccess() {
				wantPlugin, wantMsg = pl.Name(), s.Message()
				break
			}
		}
		_, err := kubesched.Schedule(context.Background(), pod, nodes)
		var notTried *framework.NotTriedError
		switch {
		case wantMsg == "" && err != nil:
			t.Errorf("gates %v: upstream admits the pod, kubesched: %v", gates, err)
		case wantMsg != "" && (!errors.As(err, &notTried) || notTried.Plugin != wantPlugin || err.Error() != wantMsg):
			t.Errorf("gates %v: kubesched %v, upstream's %s: %q", gates, err, wantPlugin, wantMsg)
		}
	}
}
