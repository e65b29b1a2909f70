package framework_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubesched/kubesched"
	"github.com/kubesched/kubesched/cache"
	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/internal/testcluster"
	plugins "github.com/kubesched/kubesched/names"
	"github.com/kubesched/kubesched/nodeinfo"
)

// memoNodes are 120 nodes in three zones, some tainted, some small, some
// holding the image the pods run.
func memoNodes() []*v1.Node {
	nodes := testcluster.Nodes(120, testcluster.Basic) // more than minMemoNodes
	for i, n := range nodes {
		switch {
		case i%7 == 0:
			n.Spec.Taints = append(n.Spec.Taints, v1.Taint{Key: "dedicated", Value: "infra", Effect: v1.TaintEffectNoSchedule})
		case i%5 == 0:
			n.Spec.Taints = append(n.Spec.Taints, v1.Taint{Key: "spot", Value: "true", Effect: v1.TaintEffectPreferNoSchedule})
		}
		if i%11 == 0 {
			n.Status.Allocatable = v1.ResourceList{v1.ResourceCPU: resource.MustParse("1"), v1.ResourceMemory: resource.MustParse("2Gi"), v1.ResourcePods: resource.MustParse("110")}
			n.Status.Capacity = n.Status.Allocatable
		}
		if i%3 == 0 {
			n.Status.Images = []v1.ContainerImage{{Names: []string{"registry.k8s.io/pause:3.10"}, SizeBytes: 300 << 20}}
		}
	}
	return nodes
}

// memoShapes are pods of several kinds: plain, with node affinity,
// tolerations, hard and default spreading, anti-affinity, host ports, and
// too large for any node; makeShape(k, name) makes one of kind k.
func memoShape(k int, name string) *v1.Pod {
	workloads := []string{testcluster.Basic, testcluster.NodeAffinity, testcluster.Taints, testcluster.TopologySpreading, testcluster.PodAntiAffinity, testcluster.PreferredPodAffinity}
	if k < len(workloads) {
		return testcluster.Pod(name, workloads[k])
	}
	p := testcluster.Pod(name, testcluster.Basic)
	switch k - len(workloads) {
	case 0: // a ReplicaSet's replica, spread by default
		p.Labels = map[string]string{"app": "web"}
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web", UID: "uid-web", Controller: new(true)}}
	case 1: // a host port: one per node
		p.Spec.Containers[0].Ports = []v1.ContainerPort{{ContainerPort: 80, HostPort: 8080, Protocol: v1.ProtocolTCP}}
	case 2: // too large for any node
		p.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse("64")
	case 3: // large: fits only emptier nodes
		p.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse("1500m")
	}
	return p
}

const memoShapes = 10

// memoSnapshot is a NodeSnapshot over a slice nobody changes, which
// keeps its nodes' generations.
type memoSnapshot struct {
	nodes []*nodeinfo.NodeInfo
	gens  []int64
	index map[string]int
}

func (s *memoSnapshot) Generations() []int64 { return s.gens }

func (s *memoSnapshot) Nodes() []*nodeinfo.NodeInfo { return s.nodes }
func (s *memoSnapshot) Index(name string) (int, bool) {
	i, ok := s.index[name]
	return i, ok
}

func TestCyclesWithMemosDecideAsCyclesWithout(t *testing.T) {
	t.Parallel()
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-web"},
		Spec:       appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
	}
	for _, tc := range []struct {
		name string
		// inPlace changes a node's NodeInfo in place, through a plain
		// slice; otherwise a changed node gets a new NodeInfo and every
		// other cycle runs over a snapshot.
		inPlace    bool
		percentage int32
		// prefer starts without PreferNoSchedule taints, for which
		// TaintToleration scores every node alike, and the in-place
		// change adds or removes one.
		prefer bool
	}{
		{name: "snapshots and plain slices, new NodeInfos for changed nodes, every node scored", percentage: 100},
		{name: "plain slices changed in place, every node scored", inPlace: true, percentage: 100},
		{name: "snapshots and plain slices at an adaptive percentage", percentage: 0},
		{name: "a PreferNoSchedule taint that comes and goes, every node scored", inPlace: true, prefer: true, percentage: 100},
		{name: "a PreferNoSchedule taint that comes and goes, at an adaptive percentage", inPlace: true, prefer: true, percentage: 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// Pods nominated to nodes, filtered with on those nodes.
			noms := []*framework.Nominations{framework.NewNominations(), framework.NewNominations()}
			var nominated []*v1.Pod
			frameworks := make([]*framework.Framework, 2)
			for i := range frameworks {
				// One worker when the search stops early: which nodes it
				// finds depends on the workers' timing otherwise.
				opts := []framework.Option{framework.WithRandSource(rand.NewPCG(7, 8)),
					framework.WithPercentageOfNodesToScore(tc.percentage), framework.WithObjects(rs), framework.WithNominator(noms[i])}
				if tc.percentage != 100 {
					opts = append(opts, framework.WithParallelism(1))
				}
				f, err := kubesched.DefaultFramework(opts...)
				if err != nil {
					t.Fatal(err)
				}
				frameworks[i] = f
			}
			with, without := frameworks[0], framework.WithoutMemos(frameworks[1])
			all := memoNodes()
			if tc.prefer {
				for _, n := range all {
					n.Spec.Taints = slices.DeleteFunc(n.Spec.Taints, func(t v1.Taint) bool { return t.Effect == v1.TaintEffectPreferNoSchedule })
				}
			}
			nodes := nodeinfo.Build(all, testcluster.ExistingPods(200, all, testcluster.Basic))
			r := rand.New(rand.NewPCG(9, 10))
			shape := 0
			for step := range 400 {
				// Mostly runs of one shape, as replicas come.
				if r.IntN(4) == 0 {
					shape = r.IntN(memoShapes)
				}
				switch r.IntN(10) {
				case 0: // a preemptor nominated to a node
					p := memoShape(memoShapes-1, fmt.Sprintf("nominated-%d", step))
					p.Spec.Priority = new(int32(10))
					node := nodes[r.IntN(len(nodes))].Name()
					for _, n := range noms {
						n.Add(p, node)
					}
					nominated = append(nominated, p)
				case 1: // a nomination dropped
					if len(nominated) > 0 {
						j := r.IntN(len(nominated))
						for _, n := range noms {
							n.Delete(nominated[j])
						}
						nominated = slices.Delete(nominated, j, j+1)
					}
				}
				pod := memoShape(shape, fmt.Sprintf("p-%d", step))
				snapshot := !tc.inPlace && step%2 == 0
				var results [2]*framework.Result
				var errs [2]error
				for i, f := range []*framework.Framework{with, without} {
					if snapshot {
						s := &memoSnapshot{nodes: nodes, index: map[string]int{}}
						for j, ni := range nodes {
							s.index[ni.Name()] = j
							s.gens = append(s.gens, ni.Generation())
						}
						results[i], errs[i] = f.ScheduleSnapshot(context.Background(), pod, s)
					} else {
						results[i], errs[i] = f.Schedule(context.Background(), pod, nodes)
					}
				}
				compareMemoCycles(t, step, shape, results, errs)
				if errs[0] != nil {
					continue
				}
				at := slices.IndexFunc(nodes, func(ni *nodeinfo.NodeInfo) bool { return ni.Name() == results[0].SuggestedHost })
				pod.Spec.NodeName = nodes[at].Name()
				if tc.inPlace {
					nodes[at].AddPod(pod)
					// A NodeInfo changed in place gets a new generation:
					// one of them is tainted or untainted each step.
					ni := nodes[11*r.IntN(len(nodes)/11)]
					effect := v1.TaintEffectNoSchedule
					if tc.prefer {
						// Another node, kept in the memo.
						ni, effect = nodes[1+11*r.IntN(len(nodes)/11)], v1.TaintEffectPreferNoSchedule
					}
					node := ni.Node().DeepCopy()
					if len(node.Spec.Taints) > 0 {
						node.Spec.Taints = nil
					} else {
						node.Spec.Taints = []v1.Taint{{Key: "drain", Effect: effect}}
					}
					ni.SetNode(node)
				} else {
					nodes = slices.Clone(nodes)
					nodes[at] = nodes[at].Clone()
					nodes[at].AddPod(pod)
				}
			}
		})
	}
}

// compareMemoCycles fails the test unless the two cycles, with and
// without memos, decided alike: the same error, node, counts, rejections
// and scores.
func compareMemoCycles(t *testing.T, step, shape int, results [2]*framework.Result, errs [2]error) {
	t.Helper()
	if (errs[0] == nil) != (errs[1] == nil) || (errs[0] != nil && errs[0].Error() != errs[1].Error()) {
		t.Fatalf("step %d, shape %d: with memos error %v, without %v", step, shape, errs[0], errs[1])
	}
	if errs[0] != nil {
		var fe [2]*framework.FitError
		if !errors.As(errs[0], &fe[0]) || !errors.As(errs[1], &fe[1]) {
			t.Fatalf("step %d, shape %d: errors are not FitErrors: %v", step, shape, errs[0])
		}
		if got, want := rejections(&fe[0].Diagnosis), rejections(&fe[1].Diagnosis); !reflect.DeepEqual(got, want) {
			t.Fatalf("step %d, shape %d: with memos rejections %v, without %v", step, shape, got, want)
		}
		return
	}
	a, b := results[0], results[1]
	if a.SuggestedHost != b.SuggestedHost || a.EvaluatedNodes != b.EvaluatedNodes || a.FeasibleNodes != b.FeasibleNodes {
		t.Fatalf("step %d, shape %d: with memos %s (%d evaluated, %d feasible), without %s (%d, %d)", step, shape,
			a.SuggestedHost, a.EvaluatedNodes, a.FeasibleNodes, b.SuggestedHost, b.EvaluatedNodes, b.FeasibleNodes)
	}
	if got, want := rejections(&a.Diagnosis), rejections(&b.Diagnosis); !reflect.DeepEqual(got, want) {
		t.Fatalf("step %d, shape %d: with memos rejections %v, without %v", step, shape, got, want)
	}
	if got, want := sets.List(a.Diagnosis.UnschedulablePlugins), sets.List(b.Diagnosis.UnschedulablePlugins); !slices.Equal(got, want) {
		t.Fatalf("step %d, shape %d: with memos plugins rejecting %v, without %v", step, shape, got, want)
	}
	got, want := a.NodeScores(), b.NodeScores()
	for i := range max(len(got), len(want)) {
		if i >= len(got) || i >= len(want) || !reflect.DeepEqual(got[i], want[i]) {
			t.Fatalf("step %d, shape %d: with memos %d nodes scored, without %d; the first that differ: %v and %v", step, shape,
				len(got), len(want), got[min(i, len(got)-1)], want[min(i, len(want)-1)])
		}
	}
}

// rejections maps each rejected node to its plugin, code and reasons.
func rejections(d *framework.Diagnosis) map[string]string {
	out := map[string]string{}
	for name, s := range d.Rejected() {
		out[name] = fmt.Sprintf("%s %v %v", s.Plugin(), s.Code(), s.Reasons())
	}
	return out
}

// TestAMemoIsCheapOnceItsCyclesJudgeFewNodesAfresh: the memo a shape
// gets the second time it comes judges every node afresh, so the next
// cycle is not expected to be cheap and takes workers; once a cycle has
// judged few nodes afresh, the next is expected to be cheap; a change to
// many nodes makes it expensive again.
func TestAMemoIsCheapOnceItsCyclesJudgeFewNodesAfresh(t *testing.T) {
	t.Parallel()
	f, err := kubesched.DefaultFramework(framework.WithPercentageOfNodesToScore(100))
	if err != nil {
		t.Fatal(err)
	}
	nodes := nodeinfo.Build(memoNodes(), nil)
	schedule := func(name string) {
		t.Helper()
		if _, err := f.Schedule(context.Background(), memoShape(0, name), nodes); err != nil {
			t.Fatal(err)
		}
	}
	cheap := func(want ...bool) {
		t.Helper()
		if got := framework.MemosCheap(f); !slices.Equal(got, want) {
			t.Fatalf("memos cheap: %v, want %v", got, want)
		}
	}
	schedule("first")
	cheap() // the shape is seen once: no memo yet
	schedule("second")
	cheap(false) // every node judged afresh
	schedule("third")
	cheap(true)
	schedule("fourth")
	cheap(true)
	// Every node changes: each is judged afresh.
	nodes = nodeinfo.Build(memoNodes(), testcluster.ExistingPods(100, memoNodes(), testcluster.Basic))
	schedule("fifth")
	cheap(false)
	schedule("sixth")
	cheap(true)
}

// localScore is a node-local score plugin (for the memo) that gives one
// node a score out of range.
type localScore struct{ bad string }

func (*localScore) Name() string { return "LocalScore" }

func (l *localScore) Score(_ context.Context, _ *fwk.CycleState, _ *v1.Pod, ni *nodeinfo.NodeInfo) (int64, *fwk.Status) {
	if ni.Name() == l.bad {
		return 101, nil
	}
	return 50, nil
}

func (*localScore) NodeLocal(*v1.Pod) bool { return true }

// TestAMemoNeverKeepsAScoreOutOfRange: a node-local plugin's scores are
// weighed from the memo unchecked, so a score out of range must never be
// kept there: every cycle, the first with the memo and those after, fails
// as kube-scheduler does.
func TestAMemoNeverKeepsAScoreOutOfRange(t *testing.T) {
	t.Parallel()
	nodes := manyNodes(100)
	f := mustNew(t, framework.WithPlugin(&localScore{bad: "node-0042"}, 1), framework.WithPercentageOfNodesToScore(100))
	for i := range 5 {
		pod := testPod.DeepCopy()
		pod.Name = fmt.Sprintf("p-%d", i)
		_, err := f.Schedule(context.Background(), pod, nodes)
		if err == nil || !strings.Contains(err.Error(), `plugin "LocalScore" returns an invalid score 101`) {
			t.Fatalf("cycle %d: error %v, want the invalid score", i, err)
		}
	}
}

// TestAMemoWeighsEveryNodeAsACycleWithout: when every node fits, a memo
// cycle takes the weighted sum of the plugins that do not normalize, and
// their scores, straight from the memo, and weighs a plugin that scores
// every node 0 once. Under weights other than the defaults, as nodes
// fill, and as a PreferNoSchedule taint comes to a node and goes, the
// scores and choices are those of a framework without memos.
func TestAMemoWeighsEveryNodeAsACycleWithout(t *testing.T) {
	t.Parallel()
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-web"},
		Spec:       appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
	}
	weights := map[string]int32{plugins.NodeResourcesFit: 3, plugins.NodeResourcesBalancedAllocation: 5, plugins.ImageLocality: 7, plugins.TaintToleration: 4}
	frameworks := make([]*framework.Framework, 2)
	for i := range frameworks {
		ps := kubesched.DefaultPlugins()
		for j := range ps {
			if _, scores := ps[j].Plugin.(fwk.ScorePlugin); scores {
				if w, ok := weights[ps[j].Plugin.Name()]; ok {
					ps[j].Weight = w
				}
			}
		}
		f, err := ps.Framework(framework.WithRandSource(rand.NewPCG(3, 4)), framework.WithPercentageOfNodesToScore(100), framework.WithObjects(rs))
		if err != nil {
			t.Fatal(err)
		}
		frameworks[i] = f
	}
	with, without := frameworks[0], framework.WithoutMemos(frameworks[1])
	all := testcluster.Nodes(150, testcluster.Basic)
	for i, n := range all {
		if i%3 == 0 {
			n.Status.Images = []v1.ContainerImage{{Names: []string{"registry.k8s.io/pause:3.10"}, SizeBytes: 300 << 20}}
		}
	}
	nodes := nodeinfo.Build(all, testcluster.ExistingPods(100, all, testcluster.Basic))
	r := rand.New(rand.NewPCG(5, 6))
	tainted := -1
	for step := range 300 {
		pod := memoShape(memoShapes-4, fmt.Sprintf("p-%d", step))
		var results [2]*framework.Result
		var errs [2]error
		for i, f := range []*framework.Framework{with, without} {
			results[i], errs[i] = f.Schedule(context.Background(), pod, nodes)
		}
		compareMemoCycles(t, step, memoShapes-4, results, errs)
		if errs[0] != nil {
			t.Fatalf("step %d: %v", step, errs[0])
		}
		if results[0].FeasibleNodes != len(nodes) {
			t.Fatalf("step %d: %d nodes feasible, want every one of %d", step, results[0].FeasibleNodes, len(nodes))
		}
		// TaintToleration and DynamicResources score 0 everywhere, but
		// TaintToleration while a node is tainted. (The first cycle
		// makes no memo.)
		want := []int{2}
		if tainted >= 0 {
			want = []int{1}
		}
		if got := framework.MemosZeroColumns(with); step > 0 && !slices.Equal(got, want) {
			t.Fatalf("step %d, tainted node %d (-1: none): memos' plugins scoring 0 everywhere %v, want %v", step, tainted, got, want)
		}
		nodes = slices.Clone(nodes)
		at := slices.IndexFunc(nodes, func(ni *nodeinfo.NodeInfo) bool { return ni.Name() == results[0].SuggestedHost })
		pod.Spec.NodeName = nodes[at].Name()
		nodes[at] = nodes[at].Clone()
		nodes[at].AddPod(pod)
		if step%10 == 9 {
			// One node at a time tainted, then none.
			if tainted >= 0 {
				nodes[tainted] = nodes[tainted].Clone()
				node := nodes[tainted].Node().DeepCopy()
				node.Spec.Taints = nil
				nodes[tainted].SetNode(node)
				tainted = -1
			} else {
				tainted = r.IntN(len(nodes))
				nodes[tainted] = nodes[tainted].Clone()
				node := nodes[tainted].Node().DeepCopy()
				node.Spec.Taints = []v1.Taint{{Key: "spot", Effect: v1.TaintEffectPreferNoSchedule}}
				nodes[tainted].SetNode(node)
			}
		}
	}
}

// TestASettledMemoDecidesAsACycleWithout: over a snapshot updated in
// place, a memo that knows every node's verdict judges only the nodes
// changed since; some nodes are always rejected, and as pods are placed,
// nodes come, and a node is tainted and untainted, its cycles decide as a
// framework's without memos, and most of them take that way.
func TestASettledMemoDecidesAsACycleWithout(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		percentage int32
		nodes      int
	}{
		{"every node scored", 100, 150},
		// Searches that stop early take up 100 of 150 nodes, wrapping
		// round every other cycle, or 420 of 1000.
		{"an adaptive percentage", 0, 150},
		{"an adaptive percentage over more nodes", 0, 1000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			testSettledMemo(t, tc.percentage, tc.nodes)
		})
	}
}

func testSettledMemo(t *testing.T, percentage int32, nodes int) {
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "uid-web"},
		Spec:       appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
	}
	frameworks := make([]*framework.Framework, 2)
	for i := range frameworks {
		// One worker: which nodes a search that stops early finds
		// depends on the workers' timing otherwise.
		f, err := kubesched.DefaultFramework(framework.WithRandSource(rand.NewPCG(11, 12)), framework.WithPercentageOfNodesToScore(percentage),
			framework.WithObjects(rs), framework.WithParallelism(1))
		if err != nil {
			t.Fatal(err)
		}
		frameworks[i] = f
	}
	with, without := frameworks[0], framework.WithoutMemos(frameworks[1])
	c, err := cache.New()
	if err != nil {
		t.Fatal(err)
	}
	all := testcluster.Nodes(nodes, testcluster.Basic)
	for i, n := range all {
		switch {
		case i%17 == 3: // too small for any pod here
			n.Status.Allocatable[v1.ResourceCPU] = resource.MustParse("10m")
		case i%23 == 7:
			n.Spec.Taints = []v1.Taint{{Key: "dedicated", Value: "infra", Effect: v1.TaintEffectNoSchedule}}
		}
		if _, err := c.AddNode(n); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range testcluster.ExistingPods(100, all, testcluster.Basic) {
		if err := c.AddPod(p); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	snap := c.UpdateSnapshot(nil)
	r := rand.New(rand.NewPCG(13, 14))
	tainted, settled := -1, 0
	for step := range 300 {
		shape := memoShapes - 4 // a replica
		if step%9 == 8 {
			shape = 0 // a plain pod between them, with a memo of its own
		}
		pod := memoShape(shape, fmt.Sprintf("p-%d", step))
		if step%25 == 12 {
			// A pod for three nodes, which moves where the next search
			// over every node starts.
			pod = memoShape(0, fmt.Sprintf("p-%d", step))
			var terms []v1.NodeSelectorTerm
			for _, node := range []*v1.Node{all[5], all[40], all[90]} {
				terms = append(terms, v1.NodeSelectorTerm{MatchFields: []v1.NodeSelectorRequirement{{
					Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: []string{node.Name},
				}}})
			}
			pod.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: terms}}}
		}
		var results [2]*framework.Result
		var errs [2]error
		for i, f := range []*framework.Framework{with, without} {
			results[i], errs[i] = f.ScheduleSnapshot(ctx, pod, snap)
		}
		compareMemoCycles(t, step, shape, results, errs)
		if errs[0] != nil {
			t.Fatalf("step %d: %v", step, errs[0])
		}
		if shape != 0 && slices.Contains(framework.MemosSettled(with), true) {
			settled++
		}
		pod.Spec.NodeName = results[0].SuggestedHost
		if err := c.AssumePod(pod); err != nil {
			t.Fatal(err)
		}
		switch {
		case step%20 == 5: // a node tainted, or untainted
			node := all[max(tainted, 0)]
			if tainted < 0 {
				tainted = r.IntN(len(all))
				node = all[tainted].DeepCopy()
				node.Spec.Taints = []v1.Taint{{Key: "drain", Effect: v1.TaintEffectNoSchedule}}
			} else {
				tainted = -1
			}
			if _, err := c.UpdateNode(node); err != nil {
				t.Fatal(err)
			}
		case step == 100: // a node joins: a new list
			node := testcluster.Nodes(len(all)+1, testcluster.Basic)[len(all)]
			all = append(all, node)
			if _, err := c.AddNode(node); err != nil {
				t.Fatal(err)
			}
		case step == 200: // more nodes change than the snapshot logs
			for i, node := range all[:100] {
				p := testcluster.Pod(fmt.Sprintf("burst-%d", i), testcluster.Basic)
				p.Spec.NodeName = node.Name
				if err := c.AddPod(p); err != nil {
					t.Fatal(err)
				}
			}
		}
		snap = c.UpdateSnapshot(snap)
	}
	if settled < 150 {
		t.Fatalf("%d of 300 cycles found the replicas' memo settled, want most", settled)
	}
}

// TestAMemoMostNodesRejectTriesToSettleRarely: judging every node to
// settle a memo repays only when it settles; for a pod most nodes reject,
// which never does, the searches that stop early try again far less
// often than every time they may have taken up every node.
func TestAMemoMostNodesRejectTriesToSettleRarely(t *testing.T) {
	t.Parallel()
	f, err := kubesched.DefaultFramework(framework.WithParallelism(1))
	if err != nil {
		t.Fatal(err)
	}
	c, err := cache.New()
	if err != nil {
		t.Fatal(err)
	}
	// 1000 nodes, 420 searched a cycle (the default percentage), two in
	// three tainted: more rejected than a settled memo keeps.
	for i, n := range testcluster.Nodes(1000, testcluster.Basic) {
		if i%3 != 0 {
			n.Spec.Taints = []v1.Taint{{Key: "dedicated", Value: "infra", Effect: v1.TaintEffectNoSchedule}}
		}
		if _, err := c.AddNode(n); err != nil {
			t.Fatal(err)
		}
	}
	snap := c.UpdateSnapshot(nil)
	tries, last := 0, 0
	for step := range 24 {
		pod := memoShape(0, fmt.Sprintf("p-%d", step))
		res, err := f.ScheduleSnapshot(context.Background(), pod, snap)
		if err != nil {
			t.Fatal(err)
		}
		pod.Spec.NodeName = res.SuggestedHost
		if err := c.AssumePod(pod); err != nil {
			t.Fatal(err)
		}
		snap = c.UpdateSnapshot(snap)
		if slices.Contains(framework.MemosSettled(f), true) {
			t.Fatalf("step %d: the memo settled with two nodes in three rejected", step)
		}
		if partial := framework.MemosPartial(f); len(partial) == 1 {
			if partial[0] < 0 && last >= 0 {
				tries++
			}
			last = partial[0]
		}
	}
	// The first try once three searches may have taken up every node,
	// then one after twelve more: not one every three or four.
	if tries < 1 || tries > 2 {
		t.Fatalf("judged every node %d times in 24 cycles, want 1 or 2", tries)
	}
}
