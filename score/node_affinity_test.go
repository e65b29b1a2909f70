package score

import (
	"context"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/nodeinfo"
)

func labelled(name string, labels map[string]string) *nodeinfo.NodeInfo {
	return nodeinfo.New(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}})
}

func preferring(terms ...v1.PreferredSchedulingTerm) *v1.Pod {
	return &v1.Pod{Spec: v1.PodSpec{Affinity: &v1.Affinity{NodeAffinity: &v1.NodeAffinity{
		PreferredDuringSchedulingIgnoredDuringExecution: terms,
	}}}}
}

func prefer(weight int32, key string, op v1.NodeSelectorOperator, values ...string) v1.PreferredSchedulingTerm {
	return v1.PreferredSchedulingTerm{Weight: weight, Preference: v1.NodeSelectorTerm{
		MatchExpressions: []v1.NodeSelectorRequirement{{Key: key, Operator: op, Values: values}}}}
}

// scoreAll runs PreScore, Score and NormalizeScore like the framework does.
func scoreAll(t *testing.T, pl fwk.NormalizeScorePlugin, pod *v1.Pod, nodes []*nodeinfo.NodeInfo) ([]int64, *fwk.Status) {
	t.Helper()
	state := fwk.NewCycleState(nodes)
	if pre, ok := pl.(fwk.PreScorePlugin); ok {
		if s := pre.PreScore(context.Background(), state, pod, nodes); !s.IsSuccess() {
			return nil, s
		}
	}
	scores := make([]int64, len(nodes))
	for i, ni := range nodes {
		s, st := pl.Score(context.Background(), state, pod, ni)
		if !st.IsSuccess() {
			t.Fatalf("Score(%s): %v", ni.Node().Name, st)
		}
		scores[i] = s
	}
	if s := pl.NormalizeScore(context.Background(), state, pod, nodes, scores); !s.IsSuccess() {
		t.Fatalf("NormalizeScore: %v", s)
	}
	return scores, nil
}

func TestNodeAffinityScore(t *testing.T) {
	t.Parallel()
	nodes := []*nodeinfo.NodeInfo{
		labelled("a", map[string]string{"zone": "a", "disk": "ssd"}),
		labelled("b", map[string]string{"zone": "b"}),
		labelled("c", nil),
	}
	tests := []struct {
		name     string
		pod      *v1.Pod
		want     []int64
		wantCode fwk.Code
	}{
		{"a pod without preferences is skipped", &v1.Pod{}, nil, fwk.Skip},
		{"the best node gets 100 and others their share",
			// raw: a = 5+3 = 8, b = 0, c = 0 -> a 100.
			preferring(prefer(5, "zone", v1.NodeSelectorOpIn, "a"), prefer(3, "disk", v1.NodeSelectorOpExists)), []int64{100, 0, 0}, fwk.Success},
		{"weights add up across matching terms",
			// raw: a = 2, b = 8 -> a 100*2/8 = 25, b 100.
			preferring(prefer(2, "zone", v1.NodeSelectorOpExists), prefer(6, "zone", v1.NodeSelectorOpIn, "b")), []int64{25, 100, 0}, fwk.Success},
		{"terms of weight zero count for nothing", preferring(prefer(0, "zone", v1.NodeSelectorOpExists)), []int64{0, 0, 0}, fwk.Success},
		{"an empty but present preference list still scores (all zero)", preferring([]v1.PreferredSchedulingTerm{}...), []int64{0, 0, 0}, fwk.Success},
		{"an unparsable preferred term is an error", preferring(prefer(1, "gen", v1.NodeSelectorOpGt, "x")), nil, fwk.Error},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, s := scoreAll(t, &NodeAffinity{}, tc.pod, nodes)
			if s.Code() != tc.wantCode {
				t.Fatalf("code = %v, want %v", s.Code(), tc.wantCode)
			}
			for i := range tc.want {
				if got[i] != tc.want[i] {
					t.Errorf("scores = %v, want %v", got, tc.want)
					break
				}
			}
		})
	}
}

func TestNodeAffinityAddedPreferences(t *testing.T) {
	t.Parallel()
	pl, err := NewNodeAffinity(&configv1.NodeAffinityArgs{AddedAffinity: &v1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.PreferredSchedulingTerm{prefer(4, "zone", v1.NodeSelectorOpIn, "b")}}})
	if err != nil {
		t.Fatal(err)
	}
	nodes := []*nodeinfo.NodeInfo{labelled("a", map[string]string{"zone": "a"}), labelled("b", map[string]string{"zone": "b"})}
	// A pod without preferences is scored by the added ones alone.
	got, s := scoreAll(t, pl, &v1.Pod{}, nodes)
	if !s.IsSuccess() || got[0] != 0 || got[1] != 100 {
		t.Errorf("scores = %v (%v), want [0 100]", got, s)
	}
	const want = `addedAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].matchExpressions[0].values[0]: Invalid value: "x": `
	if _, err := NewNodeAffinity(&configv1.NodeAffinityArgs{AddedAffinity: &v1.NodeAffinity{PreferredDuringSchedulingIgnoredDuringExecution: []v1.PreferredSchedulingTerm{prefer(1, "gen", v1.NodeSelectorOpLt, "x")}}}); err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("NewNodeAffinity(unparsable Lt value) = %v, want kube-scheduler's %q...", err, want)
	}
}
