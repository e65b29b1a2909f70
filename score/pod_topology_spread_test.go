package score_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/nodeinfo"
	"github.com/kubesched/kubesched/score"
)

// spreadList is an in-memory lister of one kind.
type spreadList[T any] []T

func (l spreadList[T]) List(labels.Selector) ([]T, error) { return l, nil }

// spreadNode returns a node labelled with its hostname and, if not empty,
// its zone.
func spreadNode(name, zone string) *v1.Node {
	l := map[string]string{v1.LabelHostname: name}
	if zone != "" {
		l[v1.LabelTopologyZone] = zone
	}
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l}}
}

// spreadPods numbers pods so that each has its own name.
var spreadPods atomic.Int64

// spreadPod returns a pod in namespace "ns" labelled app=app, on node (if
// not empty).
func spreadPod(app, node string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%d", spreadPods.Add(1)), Namespace: "ns", Labels: map[string]string{"app": app}},
		Spec:       v1.PodSpec{NodeName: node},
	}
}

// softOn is a ScheduleAnyway constraint over key selecting app=web.
func softOn(key string, maxSkew int32) v1.TopologySpreadConstraint {
	return v1.TopologySpreadConstraint{MaxSkew: maxSkew, TopologyKey: key, WhenUnsatisfiable: v1.ScheduleAnyway,
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}
}

// spreadingSoftly returns the incoming pod, labelled app=web.
func spreadingSoftly(cs ...v1.TopologySpreadConstraint) *v1.Pod {
	p := spreadPod("web", "")
	p.Spec.TopologySpreadConstraints = cs
	return p
}

// threeNodes: a1 and a2 in zone a, b1 in zone b; two web pods on a1, one
// on b1.
func threeNodes() ([]*v1.Node, []*v1.Pod) {
	return []*v1.Node{spreadNode("a1", "a"), spreadNode("a2", "a"), spreadNode("b1", "b")},
		[]*v1.Pod{spreadPod("web", "a1"), spreadPod("web", "a1"), spreadPod("web", "b1"), spreadPod("db", "a2")}
}

// runSpreadScore runs PreScore over all the nodes as the feasible ones,
// then Score and NormalizeScore, and returns the PreScore code, the raw
// and the normalized scores.
func runSpreadScore(t *testing.T, pl *score.PodTopologySpread, pod *v1.Pod, nodes []*v1.Node, pods []*v1.Pod, l fwk.Listers) (string, []int64, []int64) {
	t.Helper()
	ctx := context.Background()
	infos := nodeinfo.Build(nodes, pods)
	state := fwk.NewCycleState(infos).SetListers(l)
	podOnly := pl.PodOnlyPreScore(state, pod)
	s := pl.PreScore(ctx, state, pod, infos)
	if podOnly != s.IsSkip() {
		t.Errorf("PodOnlyPreScore says %v but PreScore returned %v", podOnly, s)
	}
	if s != nil {
		return s.Code().String(), nil, nil
	}
	raw := make([]int64, len(infos))
	for i, ni := range infos {
		var st *fwk.Status
		if raw[i], st = pl.Score(ctx, state, pod, ni); st != nil {
			t.Fatal(st)
		}
	}
	normalized := slices.Clone(raw)
	if st := pl.NormalizeScore(ctx, state, pod, infos, normalized); st != nil {
		t.Fatal(st)
	}
	return "Success", raw, normalized
}

func TestPodTopologySpreadScore(t *testing.T) {
	t.Parallel()
	nodes, pods := threeNodes()
	webService := fwk.Listers{Services: spreadList[*v1.Service]{{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"},
		Spec:       v1.ServiceSpec{Selector: map[string]string{"app": "web"}},
	}}}
	webReplicaSet := fwk.Listers{ReplicaSets: spreadList[*appsv1.ReplicaSet]{{
		ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "ns"},
		Spec:       appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
	}}}
	yes := true
	ownedByWebReplicaSet := spreadingSoftly()
	ownedByWebReplicaSet.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-1", Controller: &yes}}

	tests := []struct {
		name          string
		args          *configv1.PodTopologySpreadArgs
		pod           *v1.Pod
		nodes         []*v1.Node
		pods          []*v1.Pod
		listers       fwk.Listers
		wantPreScore  string
		wantRaw, want []int64
	}{
		{
			// Two zones weigh log(4) = 1.386: zone a's 2 pods give
			// round(2.77) = 3, zone b's 1 gives 1. Normalized:
			// 100*(3+1-3)/3 = 33 and 100*(3+1-1)/3 = 100.
			name:  "nodes in the zone with fewer matching pods score higher",
			pod:   spreadingSoftly(softOn(v1.LabelTopologyZone, 1)),
			nodes: nodes, pods: pods,
			wantPreScore: "Success", wantRaw: []int64{3, 3, 1}, want: []int64{33, 33, 100},
		},
		{
			// Three hosts weigh log(5) = 1.609, plus maxSkew-1 = 1: a1
			// round(4.22) = 4, a2 1, b1 round(2.61) = 3. Normalized over
			// [1, 4]: 100*(5-4)/4 = 25, 100*(5-1)/4 = 100, 100*(5-3)/4 = 50.
			name:  "hostname spreading counts each node's own pods",
			pod:   spreadingSoftly(softOn(v1.LabelHostname, 2)),
			nodes: nodes, pods: pods,
			wantPreScore: "Success", wantRaw: []int64{4, 1, 3}, want: []int64{25, 100, 50},
		},
		{
			// a1: 2.773+4.219 = 6.99 -> 7; a2: 2.773+1 -> 4; b1:
			// 1.386+2.609 = 3.996 -> 4. Normalized over [4, 7]:
			// 100*(11-7)/7 = 57, 100*(11-4)/7 = 100.
			name:  "constraints add up before rounding",
			pod:   spreadingSoftly(softOn(v1.LabelTopologyZone, 1), softOn(v1.LabelHostname, 2)),
			nodes: nodes, pods: pods,
			wantPreScore: "Success", wantRaw: []int64{7, 4, 4}, want: []int64{57, 100, 100},
		},
		{
			name:  "with the pod's own constraints a node missing a topology key scores 0",
			pod:   spreadingSoftly(softOn(v1.LabelTopologyZone, 1)),
			nodes: append(slices.Clone(nodes), spreadNode("bare", "")),
			pods:  pods,
			// "bare" does not make a domain, so the weight is still log(4).
			wantPreScore: "Success", wantRaw: []int64{3, 3, 1, 0}, want: []int64{33, 33, 100, 0},
		},
		{
			name:         "when no node holds a matching pod every node scores 100",
			pod:          spreadingSoftly(softOn(v1.LabelTopologyZone, 1)),
			nodes:        nodes,
			wantPreScore: "Success", wantRaw: []int64{0, 0, 0}, want: []int64{100, 100, 100},
		},
		{
			// Hosts weigh log(5), zones log(4), maxSkews 3 and 5:
			// a1 2*1.609+2 + 2*1.386+4 = 11.99 -> 12; a2 2 + 6.77 -> 9;
			// b1 3.61 + 5.39 = 8.996 -> 9. Normalized over [9, 12]:
			// 100*(21-12)/12 = 75, then 100.
			name:  "system default constraints take the selector of the Service selecting the pod",
			pod:   spreadingSoftly(),
			nodes: nodes, pods: pods,
			listers:      webService,
			wantPreScore: "Success", wantRaw: []int64{12, 9, 9}, want: []int64{75, 100, 100},
		},
		{
			name:  "system default constraints take the selector of the pod's ReplicaSet",
			pod:   ownedByWebReplicaSet,
			nodes: nodes, pods: pods,
			listers:      webReplicaSet,
			wantPreScore: "Success", wantRaw: []int64{12, 9, 9}, want: []int64{75, 100, 100},
		},
		{
			// Four hosts weigh log(6) = 1.792. "bare" is scored by
			// hostname alone: 0*1.792+2 = 2. Its missing zone reads as
			// the zone "", a third domain, so zones weigh log(5) = 1.609:
			// a1 2*1.792+2 + 2*1.609+4 = 12.80 -> 13, a2 2+7.22 -> 9, b1
			// 3.79+5.61 -> 9. Normalized over [2, 13]: 100*(15-13)/13 =
			// 15, 100*(15-9)/13 = 46, 100*(15-2)/13 = 100.
			name:         "system default constraints still score a node without a zone by hostname",
			pod:          spreadingSoftly(),
			nodes:        append(slices.Clone(nodes), spreadNode("bare", "")),
			pods:         pods,
			listers:      webService,
			wantPreScore: "Success", wantRaw: []int64{13, 9, 9, 2}, want: []int64{15, 46, 46, 100},
		},
		{
			name:  "system default constraints are skipped for a pod nothing selects",
			pod:   spreadingSoftly(),
			nodes: nodes, pods: pods,
			wantPreScore: "Skip",
		},
		{
			name: "a pod with only DoNotSchedule constraints is skipped",
			pod: spreadingSoftly(func() v1.TopologySpreadConstraint {
				c := softOn(v1.LabelTopologyZone, 1)
				c.WhenUnsatisfiable = v1.DoNotSchedule
				return c
			}()),
			nodes: nodes, pods: pods,
			wantPreScore: "Skip",
		},
		{
			name:  "list defaults without constraints of their own skip every pod without constraints",
			args:  &configv1.PodTopologySpreadArgs{DefaultingType: configv1.ListDefaulting},
			pod:   spreadingSoftly(),
			nodes: nodes, pods: pods, listers: webService,
			wantPreScore: "Skip",
		},
		{
			name: "a selector that does not parse is an error",
			pod: spreadingSoftly(func() v1.TopologySpreadConstraint {
				c := softOn(v1.LabelTopologyZone, 1)
				c.LabelSelector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Near"}}
				return c
			}()),
			nodes: nodes, pods: pods,
			wantPreScore: "Error",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pl, err := score.NewPodTopologySpread(tc.args)
			if err != nil {
				t.Fatal(err)
			}
			code, raw, got := runSpreadScore(t, pl, tc.pod, tc.nodes, tc.pods, tc.listers)
			if code != tc.wantPreScore || !slices.Equal(raw, tc.wantRaw) || !slices.Equal(got, tc.want) {
				t.Errorf("got %s, raw %v, normalized %v; want %s, raw %v, normalized %v", code, raw, got, tc.wantPreScore, tc.wantRaw, tc.want)
			}
		})
	}
}

func TestPodTopologySpreadScoreCountsPodsOnNodesThatAreNotFeasible(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	nodes, pods := threeNodes()
	infos := nodeinfo.Build(nodes, pods)
	pl := &score.PodTopologySpread{}
	pod := spreadingSoftly(softOn(v1.LabelTopologyZone, 1))
	state := fwk.NewCycleState(infos)
	if pl.PodOnlyPreScore(state, pod) {
		t.Fatal("PodOnlyPreScore is true for a pod PreScore does not skip")
	}
	// Only a2 and b1 passed filtering; a1's pods still count for zone a.
	feasible := infos[1:]
	if s := pl.PreScore(ctx, state, pod, feasible); s != nil {
		t.Fatal(s)
	}
	var got []int64
	for _, ni := range feasible {
		n, _ := pl.Score(ctx, state, pod, ni)
		got = append(got, n)
	}
	if want := []int64{3, 1}; !slices.Equal(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestPodTopologySpreadScoreWithoutState(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pl := &score.PodTopologySpread{}
	pod := spreadingSoftly(softOn(v1.LabelHostname, 2))
	// Alone, the node is its own domain: 2 pods * log(3) + 1 = 3.2 -> 3.
	node := nodeinfo.New(spreadNode("a1", "a"), spreadPod("web", "a1"), spreadPod("web", "a1"))
	if n, s := pl.Score(ctx, nil, pod, node); n != 3 || s != nil {
		t.Errorf("got %d, %v; want 3", n, s)
	}
	if _, s := pl.Score(ctx, nil, pod, nodeinfo.New(nil)); s.Code() != fwk.Error {
		t.Errorf("a NodeInfo without a node: got %v, want Error", s)
	}
	nodes, pods := threeNodes()
	infos := nodeinfo.Build(nodes, pods)
	scores := []int64{4, 1, 3}
	if s := pl.NormalizeScore(ctx, nil, pod, infos, scores); s != nil || !slices.Equal(scores, []int64{25, 100, 50}) {
		t.Errorf("got %v, %v; want [25 100 50]", scores, s)
	}
}

func TestPodTopologySpreadPreScoreErrorIsWordedAsKubeScheduler(t *testing.T) {
	t.Parallel()
	c := softOn(v1.LabelTopologyZone, 1)
	c.LabelSelector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Near"}}
	nodes, _ := threeNodes()
	infos := nodeinfo.Build(nodes, nil)
	s := (&score.PodTopologySpread{}).PreScore(context.Background(), fwk.NewCycleState(infos), spreadingSoftly(c), infos)
	if s.Code() != fwk.Error || !strings.HasPrefix(s.Message(), "calculating preScoreState: obtaining pod's soft topology spread constraints: ") {
		t.Errorf("got %v", s)
	}
}

func TestNewPodTopologySpreadScoreRejectsBadArgs(t *testing.T) {
	t.Parallel()
	_, err := score.NewPodTopologySpread(&configv1.PodTopologySpreadArgs{
		DefaultConstraints: []v1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: "zone", WhenUnsatisfiable: v1.ScheduleAnyway}},
	})
	if err == nil || !strings.Contains(err.Error(), "defaultingType") {
		t.Errorf("got %v, want an error about defaultingType", err)
	}
}

func BenchmarkPodTopologySpreadScore(b *testing.B) {
	for _, n := range []int{100, 5000} {
		var nodes []*v1.Node
		var pods []*v1.Pod
		for i := range n {
			name := fmt.Sprintf("n%d", i)
			nodes = append(nodes, spreadNode(name, fmt.Sprint(i%3)))
			if i%2 == 0 {
				pods = append(pods, spreadPod("web", name), spreadPod("db", name))
			}
		}
		infos := nodeinfo.Build(nodes, pods)
		pl := &score.PodTopologySpread{}
		pod := spreadingSoftly(softOn(v1.LabelTopologyZone, 1), softOn(v1.LabelHostname, 1))
		ctx := context.Background()
		b.Run(fmt.Sprintf("%dnodes/PreScore+Score", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				state := fwk.NewCycleState(infos)
				if s := pl.PreScore(ctx, state, pod, infos); s != nil {
					b.Fatal(s)
				}
				for _, ni := range infos {
					pl.Score(ctx, state, pod, ni)
				}
			}
		})
	}
}
