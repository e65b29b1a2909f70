package cycle

import (
	"context"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/nodeinfo"
)

func node(name string, pods ...*v1.Pod) *nodeinfo.NodeInfo {
	return nodeinfo.New(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}, pods...)
}

func TestAStateNoFrameworkMadeAnswersFromItsNodes(t *testing.T) {
	anti := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "anti", Namespace: "default", UID: "anti"}, Spec: v1.PodSpec{
		Affinity: &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
			TopologyKey: v1.LabelHostname, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
		}}}},
	}}
	nodes := []*nodeinfo.NodeInfo{node("a"), node("b", anti), node("c")}
	h := Of(fwk.NewCycleState(nodes))
	if ni, ok := h.NodeInfo("b"); !ok || ni != nodes[1] {
		t.Errorf("NodeInfo(b) = %v, %v; want the state's b", ni, ok)
	}
	if _, ok := h.NodeInfo("z"); ok {
		t.Error("NodeInfo found a node the state does not have")
	}
	if pos, ok := h.NodePositions(nodes); !ok || !slices.Equal(pos, []int32{0, 1, 2}) {
		t.Errorf("NodePositions(all) = %v, %v", pos, ok)
	}
	if pos, ok := h.NodePositions([]*nodeinfo.NodeInfo{nodes[2], nodes[0]}); !ok || !slices.Equal(pos, []int32{2, 0}) {
		t.Errorf("NodePositions(c, a) = %v, %v; want [2 0]", pos, ok)
	}
	if _, ok := h.NodePositions([]*nodeinfo.NodeInfo{node("a")}); ok {
		t.Error("NodePositions placed a NodeInfo the state does not hold")
	}
	if got := h.NodesWithRequiredPodAntiAffinity(nodes); len(got) != 1 || got[0] != nodes[1] {
		t.Errorf("NodesWithRequiredPodAntiAffinity = %v, want b", got)
	}
	if got := h.NodesWithPodAffinity(nodes); len(got) != 1 || got[0] != nodes[1] {
		t.Errorf("NodesWithPodAffinity = %v, want b", got)
	}
	if h.NodeGenerations(nodes) != nil {
		t.Error("NodeGenerations answered for a state that keeps none")
	}
	if _, _, ok := h.ChangedNodes(nodes, Version{}); ok {
		t.Error("ChangedNodes told which nodes changed for a state that cannot tell")
	}
	if h.OnCycleEnd(func() {}) {
		t.Error("OnCycleEnd promised to run for a state no cycle ends")
	}
	if got := h.Workers(100000); got != 1 {
		t.Errorf("Workers = %d, want 1", got)
	}
	var chunks [][3]int
	h.ParallelChunks(context.Background(), 10, func(w, start, end int) { chunks = append(chunks, [3]int{w, start, end}) })
	covered := 0
	for _, c := range chunks {
		if c[0] != 0 || c[1] != covered {
			t.Errorf("chunks %v: want worker 0 over consecutive pieces", chunks)
			break
		}
		covered = c[2]
	}
	if covered != 10 {
		t.Errorf("chunks %v cover %d pieces, want 10", chunks, covered)
	}
}

func TestANilStateHasHooksToo(t *testing.T) {
	h := Of(nil)
	if _, ok := h.NodeInfo("a"); ok {
		t.Error("a nil state found a node")
	}
	if h.OnCycleEnd(func() {}) {
		t.Error("a nil state's cycle promised to end")
	}
}
