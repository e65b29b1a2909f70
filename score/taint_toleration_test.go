package score

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesched/kubesched/nodeinfo"
)

func TestTaintTolerationScore(t *testing.T) {
	t.Parallel()
	taint := func(key string, effect v1.TaintEffect) v1.Taint {
		return v1.Taint{Key: key, Value: "v", Effect: effect}
	}
	node := func(name string, taints ...v1.Taint) *nodeinfo.NodeInfo {
		return nodeinfo.New(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: v1.NodeSpec{Taints: taints}})
	}
	nodes := []*nodeinfo.NodeInfo{
		node("clean"),
		node("one", taint("a", v1.TaintEffectPreferNoSchedule)),
		node("two", taint("a", v1.TaintEffectPreferNoSchedule), taint("b", v1.TaintEffectPreferNoSchedule), taint("c", v1.TaintEffectNoSchedule)),
	}
	tests := []struct {
		name string
		pod  *v1.Pod
		want []int64
	}{
		// raw 0, 1, 2 -> 100 - 100*raw/2.
		{"fewer untolerated PreferNoSchedule taints score higher", &v1.Pod{}, []int64{100, 50, 0}},
		// raw 0, 0, 1 -> 100, 100, 0.
		{"tolerated taints do not count", &v1.Pod{Spec: v1.PodSpec{Tolerations: []v1.Toleration{{Key: "a", Operator: v1.TolerationOpExists}}}}, []int64{100, 100, 0}},
		{"tolerations for another effect do not count", &v1.Pod{Spec: v1.PodSpec{Tolerations: []v1.Toleration{{Key: "a", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule}}}}, []int64{100, 50, 0}},
		{"when every node is clean every node gets 100", &v1.Pod{Spec: v1.PodSpec{Tolerations: []v1.Toleration{{Operator: v1.TolerationOpExists}}}}, []int64{100, 100, 100}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, s := scoreAll(t, &TaintToleration{}, tc.pod, nodes)
			if !s.IsSuccess() {
				t.Fatal(s)
			}
			for i := range tc.want {
				if got[i] != tc.want[i] {
					t.Fatalf("scores = %v, want %v", got, tc.want)
				}
			}
		})
	}
}
