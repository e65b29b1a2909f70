package framework_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/nodeinfo"
)

// fakeFilter rejects the nodes named in reject with the given code and reason.
type fakeFilter struct {
	name   string
	reject map[string]string
	code   fwk.Code
	// pre, if set, is returned from PreFilter.
	pre       *fwk.PreFilterResult
	preStatus *fwk.Status
	calls     sync.Map
}

func (f *fakeFilter) Name() string { return f.name }

func (f *fakeFilter) PreFilter(context.Context, *fwk.CycleState, *v1.Pod, []*nodeinfo.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	return f.pre, f.preStatus
}

func (f *fakeFilter) Filter(_ context.Context, _ *fwk.CycleState, _ *v1.Pod, ni *nodeinfo.NodeInfo) *fwk.Status {
	f.calls.Store(ni.Node().Name, true)
	if reason, ok := f.reject[ni.Node().Name]; ok {
		code := f.code
		if code == fwk.Success {
			code = fwk.Unschedulable
		}
		return fwk.NewStatus(code, reason)
	}
	return nil
}

// fakeScore scores nodes from a table (missing nodes score 0).
type fakeScore struct {
	name      string
	scores    map[string]int64
	preStatus *fwk.Status
	normalize bool
}

func (f *fakeScore) Name() string { return f.name }

func (f *fakeScore) PreScore(context.Context, *fwk.CycleState, *v1.Pod, []*nodeinfo.NodeInfo) *fwk.Status {
	return f.preStatus
}

func (f *fakeScore) Score(_ context.Context, _ *fwk.CycleState, _ *v1.Pod, ni *nodeinfo.NodeInfo) (int64, *fwk.Status) {
	return f.scores[ni.Node().Name], nil
}

// halving normalizes by halving every score, to show normalization runs before weights.
type halving struct{ fakeScore }

func (h *halving) NormalizeScore(_ context.Context, _ *fwk.CycleState, _ *v1.Pod, _ []*nodeinfo.NodeInfo, scores []int64) *fwk.Status {
	for i := range scores {
		scores[i] /= 2
	}
	return nil
}

func nodes(names ...string) []*nodeinfo.NodeInfo {
	out := make([]*nodeinfo.NodeInfo, len(names))
	for i, n := range names {
		out[i] = nodeinfo.New(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}})
	}
	return out
}

func manyNodes(n int) []*nodeinfo.NodeInfo {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("node-%04d", i)
	}
	return nodes(names...)
}

var testPod = &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default"}}

func mustNew(t *testing.T, opts ...framework.Option) *framework.Framework {
	t.Helper()
	f, err := framework.New(opts...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return f
}

func TestScheduleChoosesTheHighestWeightedTotal(t *testing.T) {
	t.Parallel()
	f := mustNew(t,
		framework.WithPlugin(&fakeScore{name: "A", scores: map[string]int64{"n1": 100, "n2": 0, "n3": 50}}, 1),
		framework.WithPlugin(&halving{fakeScore{name: "B", scores: map[string]int64{"n1": 0, "n2": 100, "n3": 60}}}, 3),
	)
	res, err := f.Schedule(context.Background(), testPod, nodes("n1", "n2", "n3"))
	if err != nil {
		t.Fatal(err)
	}
	// n1: 100*1 + 0*3 = 100; n2: 0 + 50*3 = 150; n3: 50 + 30*3 = 140.
	if res.SuggestedHost != "n2" {
		t.Errorf("SuggestedHost = %q, want n2", res.SuggestedHost)
	}
	want := map[string]int64{"n1": 100, "n2": 150, "n3": 140}
	for _, ns := range res.NodeScores() {
		if ns.TotalScore != want[ns.Name] {
			t.Errorf("%s total = %d, want %d", ns.Name, ns.TotalScore, want[ns.Name])
		}
		if len(ns.Scores) != 2 || ns.Scores[0].Name != "A" || ns.Scores[1].Name != "B" {
			t.Errorf("%s plugin scores = %+v, want A then B", ns.Name, ns.Scores)
		}
	}
	if res.FeasibleNodes != 3 || res.EvaluatedNodes != 3 {
		t.Errorf("feasible/evaluated = %d/%d, want 3/3", res.FeasibleNodes, res.EvaluatedNodes)
	}
}

// TestANegativeWeightCountsAgainstANode: kube-scheduler's configuration
// accepts a negative weight, which subtracts the plugin's scores.
func TestANegativeWeightCountsAgainstANode(t *testing.T) {
	t.Parallel()
	f := mustNew(t,
		framework.WithPlugin(&fakeScore{name: "A", scores: map[string]int64{"n1": 100, "n2": 0, "n3": 50}}, -2),
		framework.WithPlugin(&fakeScore{name: "B", scores: map[string]int64{"n1": 30, "n2": 20, "n3": 10}}, 1),
	)
	res, err := f.Schedule(context.Background(), testPod, nodes("n1", "n2", "n3"))
	if err != nil {
		t.Fatal(err)
	}
	// n1: -200 + 30; n2: 0 + 20; n3: -100 + 10.
	want := map[string]int64{"n1": -170, "n2": 20, "n3": -90}
	for _, ns := range res.NodeScores() {
		if ns.TotalScore != want[ns.Name] {
			t.Errorf("%s total = %d, want %d", ns.Name, ns.TotalScore, want[ns.Name])
		}
	}
	if res.SuggestedHost != "n2" {
		t.Errorf("SuggestedHost = %q, want n2", res.SuggestedHost)
	}
}

func TestScheduleSkipsScoringWhenOneNodeIsFeasible(t *testing.T) {
	t.Parallel()
	f := mustNew(t,
		framework.WithPlugin(&fakeFilter{name: "F", reject: map[string]string{"n1": "no", "n3": "no"}}, 0),
		framework.WithPlugin(&fakeScore{name: "S"}, 1),
	)
	res, err := f.Schedule(context.Background(), testPod, nodes("n1", "n2", "n3"))
	if err != nil {
		t.Fatal(err)
	}
	if res.SuggestedHost != "n2" || len(res.NodeScores()) != 0 || res.EvaluatedNodes != 3 || res.FeasibleNodes != 1 {
		t.Errorf("got %+v, want n2 unscored with 3 evaluated", res)
	}
}

func TestScheduleLeavesSkippedScorePluginsOutOfTheScores(t *testing.T) {
	t.Parallel()
	f := mustNew(t,
		framework.WithPlugin(&fakeScore{name: "Skipped", preStatus: fwk.NewStatus(fwk.Skip), scores: map[string]int64{"n1": 100}}, 1),
		framework.WithPlugin(&fakeScore{name: "Kept", scores: map[string]int64{"n2": 10}}, 1),
	)
	res, err := f.Schedule(context.Background(), testPod, nodes("n1", "n2"))
	if err != nil {
		t.Fatal(err)
	}
	if res.SuggestedHost != "n2" {
		t.Errorf("SuggestedHost = %q; the skipped plugin's score must not count", res.SuggestedHost)
	}
	for _, ns := range res.NodeScores() {
		if len(ns.Scores) != 1 || ns.Scores[0].Name != "Kept" {
			t.Errorf("%s scores = %+v, want only Kept", ns.Name, ns.Scores)
		}
	}
}

func TestScheduleBreaksTiesAtRandomAmongTheTopNodesOnly(t *testing.T) {
	t.Parallel()
	f := mustNew(t,
		framework.WithPlugin(&fakeScore{name: "S", scores: map[string]int64{"a": 90, "b": 90, "c": 90, "d": 10}}, 1),
		framework.WithRandSource(rand.NewPCG(1, 2)),
	)
	seen := map[string]int{}
	for range 300 {
		res, err := f.Schedule(context.Background(), testPod, nodes("a", "b", "c", "d"))
		if err != nil {
			t.Fatal(err)
		}
		seen[res.SuggestedHost]++
	}
	if seen["d"] != 0 {
		t.Errorf("a lower-scored node was chosen %d times", seen["d"])
	}
	for _, n := range []string{"a", "b", "c"} {
		if seen[n] < 50 {
			t.Errorf("top node %s chosen %d/300 times; ties should be broken evenly", n, seen[n])
		}
	}
}

func TestScheduleWithTheSameSeedChoosesTheSameNodes(t *testing.T) {
	t.Parallel()
	run := func() []string {
		f := mustNew(t,
			framework.WithPlugin(&fakeScore{name: "S"}, 1),
			framework.WithRandSource(rand.NewPCG(7, 7)),
			framework.WithPercentageOfNodesToScore(100),
		)
		var hosts []string
		for range 20 {
			res, err := f.Schedule(context.Background(), testPod, manyNodes(50))
			if err != nil {
				t.Fatal(err)
			}
			hosts = append(hosts, res.SuggestedHost)
		}
		return hosts
	}
	a, b := run(), run()
	if strings.Join(a, ",") != strings.Join(b, ",") {
		t.Errorf("seeded runs differ:\n%v\n%v", a, b)
	}
}

func TestScheduleReportsKubeSchedulersFitErrorWhenNothingFits(t *testing.T) {
	t.Parallel()
	f := mustNew(t,
		framework.WithPlugin(&fakeFilter{name: "Taints", code: fwk.UnschedulableAndUnresolvable,
			reject: map[string]string{"n1": "node(s) had untolerated taint(s)", "n2": "node(s) had untolerated taint(s)"}}, 0),
		framework.WithPlugin(&fakeFilter{name: "Fit", reject: map[string]string{"n3": "Insufficient cpu", "n1": "Insufficient cpu"}}, 0),
	)
	_, err := f.Schedule(context.Background(), testPod, nodes("n1", "n2", "n3"))
	var fitErr *framework.FitError
	if !errors.As(err, &fitErr) {
		t.Fatalf("err = %v, want a FitError", err)
	}
	// Filters stop at the first rejection: n1 is reported by Taints only.
	want := "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) had untolerated taint(s)."
	if err.Error() != want {
		t.Errorf("message = %q, want %q", err.Error(), want)
	}
	if s := fitErr.Diagnosis.NodeStatus("n1"); s.Plugin() != "Taints" || s.Code() != fwk.UnschedulableAndUnresolvable {
		t.Errorf("n1 status = %v, want Taints/UnschedulableAndUnresolvable", s)
	}
	if !fitErr.Diagnosis.UnschedulablePlugins.Equal(sets.New("Taints", "Fit")) {
		t.Errorf("UnschedulablePlugins = %v", sets.List(fitErr.Diagnosis.UnschedulablePlugins))
	}
}

func TestPreFilter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		plugins   []*fakeFilter
		wantErr   string // FitError message
		wantHosts sets.Set[string]
		// wantEvaluated excludes nodes a PreFilterResult left out.
		wantEvaluated int
	}{
		{
			name:    "a PreFilter rejection rejects the pod on every node with its own message",
			plugins: []*fakeFilter{{name: "P", preStatus: fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "pod is broken")}},
			wantErr: "0/3 nodes are available: pod is broken.",
		},
		{
			name: "an Unschedulable PreFilter does not stop later PreFilters but still rejects",
			plugins: []*fakeFilter{
				{name: "P1", preStatus: fwk.NewStatus(fwk.Unschedulable, "first")},
				{name: "P2"},
			},
			wantErr: "0/3 nodes are available: first.",
		},
		{
			name:          "a PreFilterResult limits filtering to the nodes it names",
			plugins:       []*fakeFilter{{name: "P", pre: &fwk.PreFilterResult{NodeNames: sets.New("n2", "missing")}}},
			wantHosts:     sets.New("n2"),
			wantEvaluated: 1,
		},
		{
			name: "disjoint PreFilterResults reject every node",
			plugins: []*fakeFilter{
				{name: "P1", pre: &fwk.PreFilterResult{NodeNames: sets.New("n1")}},
				{name: "P2", pre: &fwk.PreFilterResult{NodeNames: sets.New("n2")}},
			},
			wantErr: "0/3 nodes are available: node(s) didn't satisfy plugin(s) [P1 P2] simultaneously.",
		},
		{
			name:    "a PreFilterResult naming no existing node rejects all with the plugin named",
			plugins: []*fakeFilter{{name: "P", pre: &fwk.PreFilterResult{NodeNames: sets.New("elsewhere")}}},
			wantErr: "0/3 nodes are available: 3 node(s) didn't satisfy plugin(s) [P].",
		},
		{
			name:          "a PreFilter Skip disables that plugin's Filter",
			plugins:       []*fakeFilter{{name: "P", preStatus: fwk.NewStatus(fwk.Skip), reject: map[string]string{"n1": "x", "n2": "x", "n3": "x"}}},
			wantHosts:     sets.New("n1", "n2", "n3"),
			wantEvaluated: 3,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var opts []framework.Option
			for _, p := range tc.plugins {
				opts = append(opts, framework.WithPlugin(p, 0))
			}
			f := mustNew(t, append(opts, framework.WithPlugin(&fakeScore{name: "S"}, 1))...)
			res, err := f.Schedule(context.Background(), testPod, nodes("n1", "n2", "n3"))
			if tc.wantErr != "" {
				var fitErr *framework.FitError
				if !errors.As(err, &fitErr) || err.Error() != tc.wantErr {
					t.Fatalf("err = %v, want FitError %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tc.wantHosts.Has(res.SuggestedHost) || res.FeasibleNodes != tc.wantHosts.Len() {
				t.Errorf("host %q with %d feasible, want one of %v", res.SuggestedHost, res.FeasibleNodes, sets.List(tc.wantHosts))
			}
			if res.EvaluatedNodes != tc.wantEvaluated {
				t.Errorf("EvaluatedNodes = %d, want %d", res.EvaluatedNodes, tc.wantEvaluated)
			}
		})
	}
}

type badScore struct{ fakeScore }

func (b *badScore) Score(context.Context, *fwk.CycleState, *v1.Pod, *nodeinfo.NodeInfo) (int64, *fwk.Status) {
	return 101, nil
}

func TestScheduleErrors(t *testing.T) {
	t.Parallel()
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	dup := nodes("a", "b", "a")
	withNil := append(nodes("a"), nil)
	tests := []struct {
		name    string
		ctx     context.Context
		pod     *v1.Pod
		nodes   []*nodeinfo.NodeInfo
		plugins []framework.Option
		wantErr string
	}{
		{name: "a nil pod is an error", pod: nil, nodes: nodes("a"), wantErr: "nil pod"},
		{name: "no nodes is an error", pod: testPod, nodes: nil, wantErr: "no nodes available"},
		{name: "a nil NodeInfo is an error", pod: testPod, nodes: withNil, wantErr: "nil or has no Node"},
		{name: "a NodeInfo without a node is an error", pod: testPod, nodes: []*nodeinfo.NodeInfo{nodeinfo.New(nil)}, wantErr: "nil or has no Node"},
		{name: "duplicate node names are an error", pod: testPod, nodes: dup, wantErr: `"a" appears more than once`},
		{name: "a cancelled context is an error", ctx: cancelled, pod: testPod, nodes: nodes("a", "b"), wantErr: "context canceled"},
		{
			name: "a filter returning Error fails scheduling", pod: testPod, nodes: nodes("a", "b"),
			plugins: []framework.Option{framework.WithPlugin(&fakeFilter{name: "F", code: fwk.Error, reject: map[string]string{"b": "boom"}}, 0)},
			wantErr: `running "F" filter plugin: boom`,
		},
		{
			name: "a score outside [0, 100] fails scheduling", pod: testPod, nodes: nodes("a", "b"),
			plugins: []framework.Option{framework.WithPlugin(&badScore{fakeScore{name: "Bad"}}, 1)},
			wantErr: `plugin "Bad" returns an invalid score 101`,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := tc.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			f := mustNew(t, tc.plugins...)
			_, err := f.Schedule(ctx, tc.pod, tc.nodes)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
			}
			var fitErr *framework.FitError
			if errors.As(err, &fitErr) {
				t.Errorf("bad input reported as a FitError: %v", err)
			}
		})
	}
}

func TestNewRejectsBadConfiguration(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		opts    []framework.Option
		wantErr string
	}{
		{"a score plugin needs a weight", []framework.Option{framework.WithPlugin(&fakeScore{name: "S"}, 0)}, `"S" has weight 0; give it 1 or more`},
		{"two filters may not share a name", []framework.Option{framework.WithPlugin(&fakeFilter{name: "F"}, 0), framework.WithPlugin(&fakeFilter{name: "F"}, 0)}, `plugins named "F"`},
		{"a nil plugin is refused", []framework.Option{framework.WithPlugin(nil, 0)}, "nil plugin"},
		{"percentages above 100 are refused", []framework.Option{framework.WithPercentageOfNodesToScore(101)}, "not in [0, 100]"},
		{"negative percentages are refused", []framework.Option{framework.WithPercentageOfNodesToScore(-1)}, "not in [0, 100]"},
		{"parallelism must be positive", []framework.Option{framework.WithParallelism(0)}, "at least 1"},
		{"a nil random source is refused", []framework.Option{framework.WithRandSource(nil)}, "nil source"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := framework.New(tc.opts...)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
			}
		})
	}
}

func TestPercentageOfNodesToScoreStopsTheSearchEarly(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name          string
		nodes         int
		percentage    int32
		wantEvaluated int
	}{
		{"clusters under 100 nodes are searched whole", 99, 10, 99},
		{"at least 100 feasible nodes are searched for", 500, 10, 100},
		{"a percentage stops at that share of the cluster", 1000, 30, 300},
		{"the adaptive rule searches 42% of 1000 nodes", 1000, 0, 420},
		{"the adaptive rule never goes below 5%", 6000, 0, 300},
		{"100 percent searches every node", 1000, 100, 1000},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := mustNew(t, framework.WithPlugin(&fakeFilter{name: "F"}, 0), framework.WithPlugin(&fakeScore{name: "S"}, 1),
				framework.WithPercentageOfNodesToScore(tc.percentage))
			res, err := f.Schedule(context.Background(), testPod, manyNodes(tc.nodes))
			if err != nil {
				t.Fatal(err)
			}
			if res.FeasibleNodes != tc.wantEvaluated || res.EvaluatedNodes != tc.wantEvaluated {
				t.Errorf("feasible/evaluated = %d/%d, want %d", res.FeasibleNodes, res.EvaluatedNodes, tc.wantEvaluated)
			}
		})
	}
}

func TestWithoutScorePluginsTheFirstFeasibleNodeIsEnough(t *testing.T) {
	t.Parallel()
	f := mustNew(t, framework.WithPlugin(&fakeFilter{name: "F"}, 0))
	res, err := f.Schedule(context.Background(), testPod, manyNodes(500))
	if err != nil {
		t.Fatal(err)
	}
	if res.FeasibleNodes != 1 {
		t.Errorf("FeasibleNodes = %d, want 1", res.FeasibleNodes)
	}
}

func TestSuccessiveSchedulesStartTheSearchWhereTheLastStopped(t *testing.T) {
	t.Parallel()
	f := mustNew(t, framework.WithPlugin(&fakeFilter{name: "F"}, 0), framework.WithPlugin(&fakeScore{name: "S"}, 1),
		framework.WithPercentageOfNodesToScore(10), framework.WithParallelism(1))
	all := manyNodes(1000)
	first, err := f.Schedule(context.Background(), testPod, all)
	if err != nil {
		t.Fatal(err)
	}
	second, err := f.Schedule(context.Background(), testPod, all)
	if err != nil {
		t.Fatal(err)
	}
	// With one worker the search is sequential: 100 nodes, then the next 100.
	if first.NodeScores()[0].Name != "node-0000" || second.NodeScores()[0].Name != "node-0100" {
		t.Errorf("searches started at %s and %s, want node-0000 and node-0100", first.NodeScores()[0].Name, second.NodeScores()[0].Name)
	}
}

func TestScheduleTriesTheNominatedNodeFirst(t *testing.T) {
	t.Parallel()
	f := mustNew(t, framework.WithPlugin(&fakeScore{name: "S", scores: map[string]int64{"n1": 100}}, 1))
	pod := testPod.DeepCopy()
	pod.Status.NominatedNodeName = "n3"
	res, err := f.Schedule(context.Background(), pod, nodes("n1", "n2", "n3"))
	if err != nil {
		t.Fatal(err)
	}
	if res.SuggestedHost != "n3" || res.EvaluatedNodes != 1 {
		t.Errorf("got host %q after %d nodes, want n3 after 1", res.SuggestedHost, res.EvaluatedNodes)
	}
}

func TestScheduleFallsBackToAllNodesWhenTheNominatedNodeDoesNotFit(t *testing.T) {
	t.Parallel()
	f := mustNew(t,
		framework.WithPlugin(&fakeFilter{name: "F", reject: map[string]string{"n3": "full"}}, 0),
		framework.WithPlugin(&fakeScore{name: "S", scores: map[string]int64{"n1": 100}}, 1))
	pod := testPod.DeepCopy()
	pod.Status.NominatedNodeName = "n3"
	res, err := f.Schedule(context.Background(), pod, nodes("n1", "n2", "n3"))
	if err != nil {
		t.Fatal(err)
	}
	if res.SuggestedHost != "n1" {
		t.Errorf("SuggestedHost = %q, want n1", res.SuggestedHost)
	}
}

func TestConcurrentSchedulesOnOneFramework(t *testing.T) {
	t.Parallel()
	f := mustNew(t,
		framework.WithPlugin(&fakeFilter{name: "F", reject: map[string]string{"node-0003": "no"}}, 0),
		framework.WithPlugin(&fakeScore{name: "S", scores: map[string]int64{"node-0007": 100}}, 1),
		framework.WithRandSource(rand.NewPCG(3, 4)), framework.WithPercentageOfNodesToScore(100))
	all := manyNodes(200)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 20 {
				res, err := f.Schedule(context.Background(), testPod, all)
				if err != nil {
					errs <- err
					return
				}
				if res.SuggestedHost != "node-0007" {
					errs <- fmt.Errorf("host %s, want node-0007", res.SuggestedHost)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestANominatedNodeLeftOutByPreFilterKeepsItsOwnRejection(t *testing.T) {
	t.Parallel()
	f := mustNew(t,
		framework.WithPlugin(&fakeFilter{name: "Narrow", pre: &fwk.PreFilterResult{NodeNames: sets.New("n1")}}, 0),
		framework.WithPlugin(&fakeFilter{name: "Taints", code: fwk.UnschedulableAndUnresolvable, reject: map[string]string{"n1": "tainted", "n3": "tainted"}}, 0),
		framework.WithPlugin(&fakeScore{name: "S"}, 1))
	pod := testPod.DeepCopy()
	pod.Status.NominatedNodeName = "n3"
	_, err := f.Schedule(context.Background(), pod, nodes("n1", "n2", "n3"))
	want := "0/3 nodes are available: 1 node(s) didn't satisfy plugin(s) [Narrow Taints], 2 tainted."
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %q", err, want)
	}
}

// podOnly is a fakeScore that declares its PreScore pod-only, so the
// framework scores nodes while filtering them.
type podOnly struct{ fakeScore }

func (*podOnly) PodOnlyPreScore(*fwk.CycleState, *v1.Pod) bool { return true }

type podOnlyHalving struct{ halving }

func (*podOnlyHalving) PodOnlyPreScore(*fwk.CycleState, *v1.Pod) bool { return true }

// failingScore fails to score the named node.
type failingScore struct {
	podOnly
	failOn string
}

func (f *failingScore) Score(ctx context.Context, s *fwk.CycleState, p *v1.Pod, ni *nodeinfo.NodeInfo) (int64, *fwk.Status) {
	if ni.Name() == f.failOn {
		return 0, fwk.AsStatus(errors.New("cannot score"))
	}
	return f.podOnly.Score(ctx, s, p, ni)
}

func TestScoringWhileFilteringGivesTheSameScores(t *testing.T) {
	t.Parallel()
	table := map[string]int64{"node-0001": 40, "node-0002": 90, "node-0003": 10}
	run := func(pl fwk.Plugin) []framework.NodePluginScores {
		f := mustNew(t,
			framework.WithPlugin(&fakeFilter{name: "F", reject: map[string]string{"node-0000": "no"}}, 0),
			framework.WithPlugin(pl, 2),
			framework.WithPercentageOfNodesToScore(100))
		res, err := f.Schedule(context.Background(), testPod, manyNodes(150))
		if err != nil {
			t.Fatal(err)
		}
		return res.NodeScores()
	}
	late := run(&halving{fakeScore{name: "S", scores: table}})
	early := run(&podOnlyHalving{halving{fakeScore{name: "S", scores: table}}})
	if len(late) != 149 || len(early) != len(late) {
		t.Fatalf("scored %d and %d nodes, want 149", len(late), len(early))
	}
	for i := range late {
		if late[i].Name != early[i].Name || late[i].TotalScore != early[i].TotalScore {
			t.Fatalf("node %d: late %+v, early %+v", i, late[i], early[i])
		}
	}
}

func TestScoreErrorsMatterOnlyWhenScoringHappens(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		reject  map[string]string
		wantErr bool
	}{
		{"with one feasible node nothing is scored, so a failing scorer is harmless", map[string]string{"n2": "no", "n3": "no"}, false},
		{"with two feasible nodes the failure surfaces", map[string]string{"n3": "no"}, true},
	}
	for _, tc := range tests {
		for _, early := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s (early %v)", tc.name, early), func(t *testing.T) {
				t.Parallel()
				var scorer fwk.Plugin = &failingScore{podOnly: podOnly{fakeScore{name: "S"}}, failOn: "n1"}
				if !early {
					scorer = &fakeScore{name: "S", preStatus: fwk.AsStatus(errors.New("cannot prescore"))}
				}
				f := mustNew(t, framework.WithPlugin(&fakeFilter{name: "F", reject: tc.reject}, 0), framework.WithPlugin(scorer, 1))
				res, err := f.Schedule(context.Background(), testPod, nodes("n1", "n2", "n3"))
				if tc.wantErr != (err != nil) {
					t.Fatalf("err = %v, want error %v", err, tc.wantErr)
				}
				if !tc.wantErr && res.SuggestedHost != "n1" {
					t.Errorf("SuggestedHost = %q, want n1", res.SuggestedHost)
				}
			})
		}
	}
}

func TestTiesAreBrokenAmongTheTopNodesOnly(t *testing.T) {
	t.Parallel()
	scores := map[string]int64{"a": 10, "b": 90, "c": 90, "d": 50}
	f := mustNew(t, framework.WithPlugin(&fakeScore{name: "S", scores: scores}, 1), framework.WithRandSource(rand.NewPCG(5, 5)))
	var hosts []string
	for range 50 {
		res, err := f.Schedule(context.Background(), testPod, nodes("a", "b", "c", "d"))
		if err != nil {
			t.Fatal(err)
		}
		if len(res.NodeScores()) != 4 {
			t.Fatalf("%d node scores, want 4", len(res.NodeScores()))
		}
		hosts = append(hosts, res.SuggestedHost)
	}
	if seen := sets.New(hosts...); !seen.Equal(sets.New("b", "c")) {
		t.Errorf("chose %v, want both top nodes b and c only", sets.List(seen))
	}
}

func TestASearchThatFoundEnoughNodesStopsAtOnceAsKubeSchedulersWorkersDo(t *testing.T) {
	t.Parallel()
	// 400 nodes: the adaptive percentage is 47, so the search wants 188
	// feasible nodes. Every other node is rejected. On one worker,
	// kube-scheduler's search checks for "enough" before each node: it
	// stops right after the node that made one too many (the 189th
	// feasible, node 376), having given a verdict on 376 nodes, which is
	// also how far the next search moves its start.
	var infos []*v1.Node
	reject := map[string]string{}
	for i := range 400 {
		name := fmt.Sprintf("n%03d", i)
		infos = append(infos, cpuNode(name, "1"))
		if i%2 == 1 {
			reject[name] = "odd"
		}
	}
	filter := &fakeFilter{name: "Odd", reject: reject, code: fwk.Unschedulable}
	scorer := &filterScorer{name: "Flat"}
	f, err := framework.New(framework.WithPlugin(filter, 0), framework.WithPluginAt(framework.Score, scorer, 1), framework.WithParallelism(1))
	if err != nil {
		t.Fatal(err)
	}
	res, err := f.Schedule(context.Background(), &v1.Pod{}, nodeinfo.Build(infos, nil))
	if err != nil {
		t.Fatal(err)
	}
	if res.FeasibleNodes != 188 || res.EvaluatedNodes != 376 {
		t.Errorf("%d nodes feasible of %d evaluated, want 188 of 376", res.FeasibleNodes, res.EvaluatedNodes)
	}
}
