package framework_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/nodeinfo"
)

// sliceSnapshot is a framework.NodeSnapshot over a slice nobody changes.
type sliceSnapshot struct {
	nodes []*nodeinfo.NodeInfo
	index map[string]int
}

func snapshotOf(nodes []*nodeinfo.NodeInfo) *sliceSnapshot {
	s := &sliceSnapshot{nodes: nodes, index: map[string]int{}}
	for i, ni := range nodes {
		s.index[ni.Name()] = i
	}
	return s
}

func (s *sliceSnapshot) Nodes() []*nodeinfo.NodeInfo { return s.nodes }
func (s *sliceSnapshot) Index(name string) (int, bool) {
	i, ok := s.index[name]
	return i, ok
}

// narrowTo is a PreFilter plugin that keeps only the named nodes.
func narrowTo(names ...string) *fakeFilter {
	return &fakeFilter{name: "Narrow", pre: &fwk.PreFilterResult{NodeNames: sets.New(names...)}}
}

func TestNarrowedNodesShareOneVerdict(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		keep        []string
		reject      map[string]string
		wantHost    string
		wantErr     string
		wantStatus  map[string]string // node: Status.String(); absent means nil
		wantRejects []string
	}{{
		name:     "a pod narrowed to one node that fits goes there, and every other node carries the narrowing plugin's verdict",
		keep:     []string{"n3"},
		wantHost: "n3",
		wantStatus: map[string]string{
			"n1": "UnschedulableAndUnresolvable: node(s) didn't satisfy plugin(s) [Narrow]",
			"n2": "UnschedulableAndUnresolvable: node(s) didn't satisfy plugin(s) [Narrow]",
			"n4": "UnschedulableAndUnresolvable: node(s) didn't satisfy plugin(s) [Narrow]",
		},
		wantRejects: []string{"n1", "n2", "n4"},
	}, {
		name:   "a pod narrowed to a node that a filter rejects fits nowhere, and the message counts the others once each",
		keep:   []string{"n2"},
		reject: map[string]string{"n2": "busy"},
		// As in kube-scheduler, the shared verdict names the plugins that
		// had rejected when PreFilter narrowed, before the filters ran.
		wantErr: "0/4 nodes are available: 1 busy, 3 node(s) didn't satisfy plugin(s) [Narrow].",
		wantStatus: map[string]string{
			"n1": "UnschedulableAndUnresolvable: node(s) didn't satisfy plugin(s) [Narrow]",
			"n2": "Unschedulable (F): busy",
		},
		wantRejects: []string{"n1", "n2", "n3", "n4"},
	}, {
		name:     "names a PreFilterResult gives that are not nodes are ignored",
		keep:     []string{"n4", "gone"},
		wantHost: "n4",
		wantStatus: map[string]string{
			"n1": "UnschedulableAndUnresolvable: node(s) didn't satisfy plugin(s) [Narrow]",
		},
		wantRejects: []string{"n1", "n2", "n3"},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			narrow := narrowTo(tc.keep...)
			f := mustNew(t, framework.WithPlugin(narrow, 0), framework.WithPlugin(&fakeFilter{name: "F", reject: tc.reject}, 0))
			cluster := nodes("n1", "n2", "n3", "n4")
			for _, call := range []string{"Schedule", "ScheduleSnapshot"} {
				var res *framework.Result
				var err error
				if call == "Schedule" {
					res, err = f.Schedule(context.Background(), testPod, cluster)
				} else {
					res, err = f.ScheduleSnapshot(context.Background(), testPod, snapshotOf(cluster))
				}
				var d framework.Diagnosis
				var fitErr *framework.FitError
				switch {
				case tc.wantErr != "":
					if !errors.As(err, &fitErr) || err.Error() != tc.wantErr {
						t.Fatalf("%s: err = %v, want %q", call, err, tc.wantErr)
					}
					d = fitErr.Diagnosis
				case err != nil:
					t.Fatalf("%s: %v", call, err)
				default:
					if res.SuggestedHost != tc.wantHost || res.EvaluatedNodes != 1 || res.FeasibleNodes != 1 {
						t.Errorf("%s: host %q, %d of %d evaluated feasible; want %s, 1 of 1", call, res.SuggestedHost, res.FeasibleNodes, res.EvaluatedNodes, tc.wantHost)
					}
					d = res.Diagnosis
				}
				for _, name := range []string{"n1", "n2", "n3", "n4", "gone"} {
					got := ""
					if s := d.NodeStatus(name); s != nil {
						got = s.String()
					}
					if want, ok := tc.wantStatus[name]; ok && got != want {
						t.Errorf("%s: NodeStatus(%s) = %q, want %q", call, name, got, want)
					}
					if name == tc.wantHost && got != "" || name == "gone" && got != "" {
						t.Errorf("%s: NodeStatus(%s) = %q, want nil", call, name, got)
					}
				}
				var rejected []string
				for name, s := range d.Rejected() {
					if s == nil {
						t.Errorf("%s: Rejected yields %s with a nil status", call, name)
					}
					rejected = append(rejected, name)
				}
				if !slices.Equal(rejected, tc.wantRejects) {
					t.Errorf("%s: Rejected = %v, want %v in node order", call, rejected, tc.wantRejects)
				}
			}
		})
	}
}

func TestAPreFilterRejectionIsEveryNodesVerdict(t *testing.T) {
	t.Parallel()
	reject := fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "pod is odd")
	f := mustNew(t, framework.WithPlugin(&fakeFilter{name: "F", preStatus: reject}, 0))
	_, err := f.ScheduleSnapshot(context.Background(), testPod, snapshotOf(manyNodes(300)))
	var fitErr *framework.FitError
	if !errors.As(err, &fitErr) || err.Error() != "0/300 nodes are available: pod is odd." {
		t.Fatalf("err = %v, want the PreFilter message", err)
	}
	d := fitErr.Diagnosis
	if s := d.NodeStatus("node-0123"); s.Plugin() != "F" || s.Message() != "pod is odd" {
		t.Errorf("NodeStatus(node-0123) = %v, want F's rejection", s)
	}
	if s := d.NodeStatus("not-a-node"); s != nil {
		t.Errorf("NodeStatus(not-a-node) = %v, want nil", s)
	}
	if n := len(maps.Collect(d.Rejected())); n != 300 {
		t.Errorf("Rejected yields %d nodes, want 300", n)
	}
}

func TestScheduleSnapshotDecidesAsSchedule(t *testing.T) {
	t.Parallel()
	build := func() *framework.Framework {
		return mustNew(t,
			framework.WithPlugin(&fakeFilter{name: "F", reject: map[string]string{"node-0003": "no", "node-0150": "no"}}, 0),
			framework.WithPlugin(&fakeScore{name: "S", scores: map[string]int64{"node-0001": 10, "node-0002": 30, "node-0099": 30}}, 2),
			framework.WithPercentageOfNodesToScore(30),
			framework.WithRandSource(rand.NewPCG(1, 2)),
			// One worker: where a partial search stops is then fixed.
			framework.WithParallelism(1),
		)
	}
	cluster := manyNodes(400)
	plain, snap := build(), build()
	snapshot := snapshotOf(cluster)
	for i := range 5 {
		want, err := plain.Schedule(context.Background(), testPod, cluster)
		if err != nil {
			t.Fatal(err)
		}
		got, err := snap.ScheduleSnapshot(context.Background(), testPod, snapshot)
		if err != nil {
			t.Fatal(err)
		}
		if got.SuggestedHost != want.SuggestedHost || got.EvaluatedNodes != want.EvaluatedNodes || got.FeasibleNodes != want.FeasibleNodes {
			t.Errorf("call %d: ScheduleSnapshot = %s %d/%d, Schedule = %s %d/%d", i, got.SuggestedHost, got.FeasibleNodes, got.EvaluatedNodes, want.SuggestedHost, want.FeasibleNodes, want.EvaluatedNodes)
		}
		if !reflect.DeepEqual(got.NodeScores(), want.NodeScores()) {
			t.Errorf("call %d: the scores differ", i)
		}
		if !maps.EqualFunc(maps.Collect(got.Diagnosis.Rejected()), maps.Collect(want.Diagnosis.Rejected()), func(a, b *fwk.Status) bool { return a.String() == b.String() }) {
			t.Errorf("call %d: the rejections differ", i)
		}
	}
}

func TestScheduleSnapshotRefusesWhatNoCycleStartsWith(t *testing.T) {
	t.Parallel()
	f := mustNew(t, framework.WithPlugin(&fakeFilter{name: "F"}, 0))
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		pod  bool
		snap framework.NodeSnapshot
		want error
	}{
		{name: "a nil snapshot is an error", ctx: context.Background(), pod: true, snap: nil},
		{name: "a snapshot without nodes has no nodes available", ctx: context.Background(), pod: true, snap: snapshotOf(nil), want: framework.ErrNoNodesAvailable},
		{name: "a nil pod is an error", ctx: context.Background(), snap: snapshotOf(nodes("a"))},
		{name: "a cancelled context is its error", ctx: cancelled, pod: true, snap: snapshotOf(nodes("a")), want: context.Canceled},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pod := testPod
			if !tc.pod {
				pod = nil
			}
			res, err := f.ScheduleSnapshot(tc.ctx, pod, tc.snap)
			if err == nil || res != nil || tc.want != nil && !errors.Is(err, tc.want) {
				t.Errorf("ScheduleSnapshot = %v, %v; want error %v", res, err, tc.want)
			}
		})
	}
}

// A pod narrowed to one node costs the same in any cluster over a
// snapshot: nothing is done, or allocated, per node left out.
func TestANarrowedPodCostsTheSameWhateverTheClusterSize(t *testing.T) {
	f := mustNew(t,
		framework.WithPlugin(narrowTo("node-0007"), 0),
		framework.WithPlugin(&fakeScore{name: "S"}, 1),
	)
	allocs := map[int]float64{}
	for _, n := range []int{100, 5000} {
		snap := snapshotOf(manyNodes(n))
		if res, err := f.ScheduleSnapshot(context.Background(), testPod, snap); err != nil || res.SuggestedHost != "node-0007" {
			t.Fatalf("%d nodes: %v, %v", n, res, err)
		}
		allocs[n] = testing.AllocsPerRun(200, func() {
			if _, err := f.ScheduleSnapshot(context.Background(), testPod, snap); err != nil {
				t.Fatal(err)
			}
		})
	}
	// A little slack: under -race sync.Pool drops some of what it is given,
	// so a cycle now and then allocates its scratch space anew.
	if allocs[5000] > allocs[100]+2 {
		t.Errorf("allocations per decision: %v at 100 nodes, %v at 5000; want no more for the larger cluster", allocs[100], allocs[5000])
	}
}

func TestTheSearchStartAdvancesPastTheNodesGivenAVerdictAmongAllNodes(t *testing.T) {
	t.Parallel()
	// 300 nodes, 100 feasible wanted: each search stops after 100 nodes, and
	// the next starts 100 further on.
	f := mustNew(t, framework.WithPlugin(&fakeScore{name: "S"}, 1), framework.WithParallelism(1), framework.WithPercentageOfNodesToScore(1))
	cluster := manyNodes(300)
	var starts []string
	for range 4 {
		res, err := f.ScheduleSnapshot(context.Background(), testPod, snapshotOf(cluster))
		if err != nil {
			t.Fatal(err)
		}
		starts = append(starts, res.NodeScores()[0].Name)
	}
	want := []string{"node-0000", "node-0100", "node-0200", "node-0000"}
	if !slices.Equal(starts, want) {
		t.Errorf("searches started at %v, want %v", starts, want)
	}
}

func ExampleDiagnosis_Rejected() {
	f, err := framework.New(framework.WithPlugin(narrowTo("b"), 0))
	if err != nil {
		fmt.Println(err)
		return
	}
	res, err := f.Schedule(context.Background(), testPod, nodes("a", "b", "c"))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.SuggestedHost)
	for name, status := range res.Diagnosis.Rejected() {
		fmt.Println(name, status.Message())
	}
	// Output:
	// b
	// a node(s) didn't satisfy plugin(s) [Narrow]
	// c node(s) didn't satisfy plugin(s) [Narrow]
}

func TestRejectedListsNodesInTheirOrder(t *testing.T) {
	t.Parallel()
	f := mustNew(t, framework.WithPlugin(&fakeFilter{name: "F", reject: map[string]string{"z": "no", "b": "no", "m": "no"}}, 0))
	res, err := f.Schedule(context.Background(), testPod, nodes("z", "a", "m", "b"))
	if err != nil {
		t.Fatal(err)
	}
	var inOrder []string
	for name := range res.Diagnosis.Rejected() {
		inOrder = append(inOrder, name)
	}
	if want := []string{"z", "m", "b"}; !slices.Equal(inOrder, want) {
		t.Errorf("a cycle's Rejected = %v, want %v, the order of the nodes given", inOrder, want)
	}

	var byHand framework.Diagnosis
	for _, name := range []string{"z", "b", "m"} {
		byHand.SetNodeStatus(name, fwk.NewStatus(fwk.Unschedulable, "no"))
	}
	byHand.SetNodeStatus("m", nil)
	inOrder = nil
	for name := range byHand.Rejected() {
		inOrder = append(inOrder, name)
	}
	if want := []string{"b", "z"}; !slices.Equal(inOrder, want) {
		t.Errorf("a hand-built Rejected = %v, want %v, by name, without the removed node", inOrder, want)
	}
}

func TestAPlainSliceChangedInPlaceIsSeenByTheNextCall(t *testing.T) {
	t.Parallel()
	f := mustNew(t, framework.WithPlugin(&fakeFilter{name: "F", reject: map[string]string{"full": "no room"}}, 0), framework.WithPlugin(&fakeScore{name: "S"}, 1))
	cluster := nodes("a", "b", "c")
	// Built before the first call, so that swapping them in changes no
	// NodeInfo: only the slice tells.
	spare := nodes("d", "full")
	scored := func(res *framework.Result) []string {
		var names []string
		for _, ns := range res.NodeScores() {
			names = append(names, ns.Name)
		}
		slices.Sort(names)
		return names
	}
	if res, err := f.Schedule(context.Background(), testPod, cluster); err != nil || !slices.Equal(scored(res), []string{"a", "b", "c"}) {
		t.Fatalf("before: %v, %v", res, err)
	}
	cluster[1] = spare[0]
	if res, err := f.Schedule(context.Background(), testPod, cluster); err != nil || !slices.Equal(scored(res), []string{"a", "c", "d"}) {
		t.Fatalf("after swapping b for d: %v, %v; want a, c and d scored", res, err)
	}
	cluster[1] = spare[1]
	if res, err := f.Schedule(context.Background(), testPod, cluster); err != nil || res.Diagnosis.NodeStatus("full") == nil || !slices.Equal(scored(res), []string{"a", "c"}) {
		t.Fatalf("after swapping d for full: %v, %v; want full rejected", res, err)
	}
	cluster[2] = nil
	if _, err := f.Schedule(context.Background(), testPod, cluster); err == nil {
		t.Error("a nil node put in place of a checked one was accepted")
	}
}

// gate is a PreEnqueue plugin that turns down pods labelled gated=true.
type gate struct{}

func (gate) Name() string { return "Gate" }
func (gate) PreEnqueue(_ context.Context, _ fwk.Listers, pod *v1.Pod) *fwk.Status {
	if pod.Labels["gated"] == "true" {
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "gated")
	}
	return nil
}

func TestPodsKubeSchedulerNeverTriesAreNotPlaced(t *testing.T) {
	t.Parallel()
	f := mustNew(t, framework.WithPlugin(gate{}, 0), framework.WithPlugin(&fakeFilter{name: "F"}, 0))
	deleting := metav1.Now()
	tests := []struct {
		name       string
		pod        *v1.Pod
		nodes      []*nodeinfo.NodeInfo
		wantPlugin string
		wantMsg    string // empty: the pod is placed
	}{
		{name: "an ordinary pod is placed", pod: testPod, nodes: nodes("a")},
		{name: "a pod a PreEnqueue plugin turns down is not tried", pod: &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "g", Namespace: "default", Labels: map[string]string{"gated": "true"}}}, nodes: nodes("a"), wantPlugin: "Gate", wantMsg: "gated"},
		{name: "it is turned down before anything is said about the nodes", pod: &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "g", Namespace: "default", Labels: map[string]string{"gated": "true"}}}, wantPlugin: "Gate", wantMsg: "gated"},
		{name: "a pod being deleted is not tried", pod: &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "d", Namespace: "ns", DeletionTimestamp: &deleting}}, nodes: nodes("a"), wantMsg: "skip schedule deleting pod: ns/d"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			for _, call := range []string{"Schedule", "ScheduleSnapshot"} {
				var res *framework.Result
				var err error
				if call == "Schedule" {
					res, err = f.Schedule(context.Background(), tc.pod, tc.nodes)
				} else {
					res, err = f.ScheduleSnapshot(context.Background(), tc.pod, snapshotOf(tc.nodes))
				}
				var notTried *framework.NotTriedError
				switch {
				case tc.wantMsg == "":
					if err != nil || res.SuggestedHost != "a" {
						t.Errorf("%s = %v, %v; want a", call, res, err)
					}
				case !errors.As(err, &notTried) || err.Error() != tc.wantMsg || notTried.Plugin != tc.wantPlugin || notTried.Status.Plugin() != tc.wantPlugin || notTried.Pod != tc.pod:
					t.Errorf("%s: err = %#v, want a NotTriedError %q from %q", call, err, tc.wantMsg, tc.wantPlugin)
				}
			}
		})
	}
}
