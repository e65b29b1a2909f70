package framework_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"

	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/nodeinfo"
)

// fakeExtender is an in-process extender. Its filter keeps the nodes it
// does not name in failed, unresolvable or drop; its scores come from a
// table.
type fakeExtender struct {
	name                         string
	ignorable                    bool
	filters, prioritizes, binds  bool
	uninterested                 bool
	failed, unresolvable         map[string]string
	drop                         map[string]bool
	reverse                      bool // answer the kept nodes in reverse order
	fresh                        bool // answer new NodeInfos holding no pods
	filterErr, scoreErr, bindErr error
	scores                       map[string]int64
	weight                       int64
	mu                           sync.Mutex
	seen                         [][]string // node names of each Filter call
	bound                        []*v1.Binding
	callOrder                    *[]string // shared between extenders
	callOrderMu                  *sync.Mutex
}

func (e *fakeExtender) Name() string              { return e.name }
func (e *fakeExtender) IsInterested(*v1.Pod) bool { return !e.uninterested }
func (e *fakeExtender) IsIgnorable() bool         { return e.ignorable }
func (e *fakeExtender) IsFilter() bool            { return e.filters }
func (e *fakeExtender) IsPrioritizer() bool       { return e.prioritizes }
func (e *fakeExtender) IsBinder() bool            { return e.binds }

func (e *fakeExtender) filterCalls() [][]string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.seen
}

func (e *fakeExtender) bindings() []*v1.Binding {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.bound
}

func (e *fakeExtender) rejects(name string) bool {
	_, failed := e.failed[name]
	_, unresolvable := e.unresolvable[name]
	return failed || unresolvable || e.drop[name]
}

func names(nodes []*nodeinfo.NodeInfo) []string {
	out := make([]string, len(nodes))
	for i, ni := range nodes {
		out[i] = ni.Name()
	}
	return out
}

func (e *fakeExtender) Filter(_ context.Context, _ *v1.Pod, nodes []*nodeinfo.NodeInfo) (fwk.ExtenderFilterResult, error) {
	e.mu.Lock()
	e.seen = append(e.seen, names(nodes))
	e.mu.Unlock()
	if e.callOrder != nil {
		e.callOrderMu.Lock()
		*e.callOrder = append(*e.callOrder, e.name)
		e.callOrderMu.Unlock()
	}
	if e.filterErr != nil {
		return fwk.ExtenderFilterResult{}, e.filterErr
	}
	var kept []*nodeinfo.NodeInfo
	for _, ni := range nodes {
		if e.rejects(ni.Name()) {
			continue
		}
		if e.fresh {
			ni = nodeinfo.New(ni.Node())
		}
		kept = append(kept, ni)
	}
	if e.reverse {
		slices.Reverse(kept)
	}
	return fwk.ExtenderFilterResult{Nodes: kept, Failed: e.failed, FailedAndUnresolvable: e.unresolvable}, nil
}

func (e *fakeExtender) Prioritize(_ context.Context, _ *v1.Pod, nodes []*nodeinfo.NodeInfo) (extenderv1.HostPriorityList, int64, error) {
	if e.scoreErr != nil {
		return nil, 0, e.scoreErr
	}
	var list extenderv1.HostPriorityList
	for _, ni := range nodes {
		list = append(list, extenderv1.HostPriority{Host: ni.Name(), Score: e.scores[ni.Name()]})
	}
	// Hosts it was not asked about are ignored.
	list = append(list, extenderv1.HostPriority{Host: "elsewhere", Score: 10})
	return list, e.weight, nil
}

func (e *fakeExtender) Bind(_ context.Context, b *v1.Binding) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.bound = append(e.bound, b)
	return e.bindErr
}

// podCount scores a node by the pods it holds, to show which NodeInfo
// scoring saw.
type podCount struct{}

func (podCount) Name() string { return "PodCount" }
func (podCount) Score(_ context.Context, _ *fwk.CycleState, _ *v1.Pod, ni *nodeinfo.NodeInfo) (int64, *fwk.Status) {
	return int64(len(ni.Pods())), nil
}

func TestExtenderFilterRunsAfterThePluginsAndRecordsItsRejections(t *testing.T) {
	t.Parallel()
	ext := &fakeExtender{
		name:         "http://ext",
		filters:      true,
		failed:       map[string]string{"n2": "busy", "n4": "busy"},
		unresolvable: map[string]string{"n3": "no gpu", "n4": "no gpu"},
		drop:         map[string]bool{"n5": true},
	}
	f := mustNew(t,
		framework.WithPlugin(&fakeFilter{name: "F", reject: map[string]string{"n1": "plugin says no"}}, 0),
		framework.WithPlugin(&fakeScore{name: "S"}, 1),
		framework.WithExtender(ext),
	)
	res, err := f.Schedule(context.Background(), testPod, nodes("n1", "n2", "n3", "n4", "n5", "n6", "n7"))
	if err != nil {
		t.Fatal(err)
	}
	calls := ext.filterCalls()
	if len(calls) != 1 || slices.Contains(calls[0], "n1") || len(calls[0]) != 6 {
		t.Fatalf("extender saw %v, want the six nodes the plugin kept", calls)
	}
	if res.SuggestedHost != "n6" && res.SuggestedHost != "n7" {
		t.Errorf("SuggestedHost = %q, want n6 or n7", res.SuggestedHost)
	}
	want := map[string]string{
		"n1": "Unschedulable (F): plugin says no",
		"n2": "Unschedulable: busy",
		"n3": "UnschedulableAndUnresolvable: no gpu",
		"n4": "UnschedulableAndUnresolvable: no gpu", // both maps: unresolvable wins
	}
	if len(maps.Collect(res.Diagnosis.Rejected())) != len(want) {
		t.Errorf("statuses %v, want %v", maps.Collect(res.Diagnosis.Rejected()), want)
	}
	for node, w := range want {
		if got := res.Diagnosis.NodeStatus(node).String(); got != w {
			t.Errorf("%s: %s, want %s", node, got, w)
		}
	}
	if !res.Diagnosis.UnschedulablePlugins.Has(framework.ExtenderName) || !res.Diagnosis.UnschedulablePlugins.Has("F") {
		t.Errorf("UnschedulablePlugins = %v, want F and Extender", res.Diagnosis.UnschedulablePlugins)
	}
	// n5, dropped without a message, is not counted as evaluated, as in
	// kube-scheduler.
	if res.FeasibleNodes != 2 || res.EvaluatedNodes != 6 {
		t.Errorf("feasible/evaluated = %d/%d, want 2/6", res.FeasibleNodes, res.EvaluatedNodes)
	}
	if len(res.NodeScores()) != 2 {
		t.Errorf("scored %d nodes, want the 2 the extender kept", len(res.NodeScores()))
	}
}

func TestExtendersFilterOneAfterTheOther(t *testing.T) {
	t.Parallel()
	first := &fakeExtender{name: "first", filters: true, failed: map[string]string{"n1": "first says no"}}
	second := &fakeExtender{name: "second", filters: true, failed: map[string]string{"n2": "second says no"}}
	f := mustNew(t, framework.WithExtender(first), framework.WithExtender(second))
	_, err := f.Schedule(context.Background(), testPod, nodes("n1", "n2"))
	var fitErr *framework.FitError
	if !errors.As(err, &fitErr) {
		t.Fatalf("err = %v, want a FitError", err)
	}
	if got, want := fitErr.Error(), "0/2 nodes are available: 1 first says no, 1 second says no."; got != want {
		t.Errorf("message %q, want %q", got, want)
	}
	if got := second.filterCalls(); len(got) != 1 || !slices.Equal(got[0], []string{"n2"}) {
		t.Errorf("second extender saw %v, want only n2", got)
	}
}

func TestExtenderFilterErrors(t *testing.T) {
	t.Parallel()
	boom := errors.New("extender down")
	tests := []struct {
		name      string
		ext       *fakeExtender
		wantErr   bool
		wantCalls int
	}{
		{"an error fails the pod", &fakeExtender{name: "e", filters: true, filterErr: boom}, true, 1},
		{"an ignorable extender's error is skipped", &fakeExtender{name: "e", filters: true, ignorable: true, filterErr: boom}, false, 1},
		{"an extender not interested in the pod is not asked", &fakeExtender{name: "e", filters: true, uninterested: true, filterErr: boom}, false, 0},
		{"an extender without filter verb is not asked", &fakeExtender{name: "e", prioritizes: true, weight: 1, filterErr: boom}, false, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := mustNew(t, framework.WithExtender(tc.ext))
			res, err := f.Schedule(context.Background(), testPod, nodes("n1", "n2"))
			if tc.wantErr {
				if !errors.Is(err, boom) {
					t.Errorf("err = %v, want %v", err, boom)
				}
			} else if err != nil || res.FeasibleNodes != 2 {
				t.Errorf("got %+v, %v; want both nodes feasible", res, err)
			}
			if got := len(tc.ext.filterCalls()); got != tc.wantCalls {
				t.Errorf("filter called %d times, want %d", got, tc.wantCalls)
			}
		})
	}
}

func TestIgnorableExtendersRunAfterTheOthers(t *testing.T) {
	t.Parallel()
	var order []string
	var mu sync.Mutex
	mk := func(name string, ignorable bool) *fakeExtender {
		return &fakeExtender{name: name, filters: true, ignorable: ignorable, callOrder: &order, callOrderMu: &mu}
	}
	f := mustNew(t,
		framework.WithExtender(mk("ignorable-1", true)),
		framework.WithExtender(mk("required-1", false)),
		framework.WithExtender(mk("ignorable-2", true)),
		framework.WithExtender(mk("required-2", false)),
	)
	if _, err := f.Schedule(context.Background(), testPod, nodes("n1", "n2")); err != nil {
		t.Fatal(err)
	}
	want := []string{"required-1", "required-2", "ignorable-1", "ignorable-2"}
	if !slices.Equal(order, want) {
		t.Errorf("order %v, want %v", order, want)
	}
}

func TestExtenderScoresAreWeightedScaledAndListedAfterThePlugins(t *testing.T) {
	t.Parallel()
	prio := &fakeExtender{name: "http://prio", prioritizes: true, weight: 2, scores: map[string]int64{"n1": 0, "n2": 9, "n3": 3}}
	filterOnly := &fakeExtender{name: "http://filter", filters: true}
	failing := &fakeExtender{name: "http://failing", prioritizes: true, weight: 5, scoreErr: errors.New("no scores today")}
	f := mustNew(t,
		framework.WithPlugin(&fakeScore{name: "S", scores: map[string]int64{"n1": 100, "n2": 10, "n3": 50}}, 1),
		framework.WithExtender(prio),
		framework.WithExtender(filterOnly),
		framework.WithExtender(failing),
	)
	res, err := f.Schedule(context.Background(), testPod, nodes("n1", "n2", "n3"))
	if err != nil {
		t.Fatal(err)
	}
	// n2: 10 + 9*2*10 = 190; n1: 100 + 0; n3: 50 + 3*2*10 = 110.
	if res.SuggestedHost != "n2" {
		t.Errorf("SuggestedHost = %q, want n2", res.SuggestedHost)
	}
	want := map[string]string{
		"n1": "S=100 http://prio=0 http://filter=0 total=100",
		"n2": "S=10 http://prio=180 http://filter=0 total=190",
		"n3": "S=50 http://prio=60 http://filter=0 total=110",
	}
	for _, ns := range res.NodeScores() {
		var b strings.Builder
		for _, s := range ns.Scores {
			fmt.Fprintf(&b, "%s=%d ", s.Name, s.Score)
		}
		fmt.Fprintf(&b, "total=%d", ns.TotalScore)
		if b.String() != want[ns.Name] {
			t.Errorf("%s: %s, want %s", ns.Name, b.String(), want[ns.Name])
		}
	}
}

func TestExtenderScoresOutweighAPluginsScores(t *testing.T) {
	t.Parallel()
	prio := &fakeExtender{name: "prio", prioritizes: true, weight: 1, scores: map[string]int64{"n3": 10}}
	f := mustNew(t,
		framework.WithPlugin(&fakeScore{name: "S", scores: map[string]int64{"n1": 90}}, 1),
		framework.WithExtender(prio),
	)
	res, err := f.Schedule(context.Background(), testPod, nodes("n1", "n2", "n3"))
	if err != nil {
		t.Fatal(err)
	}
	totals := map[string]int64{}
	for _, ns := range res.NodeScores() {
		totals[ns.Name] = ns.TotalScore
	}
	if res.SuggestedHost != "n3" || totals["n3"] != 100 || totals["n1"] != 90 {
		t.Errorf("host %q with totals %v, want n3 (100 > 90)", res.SuggestedHost, totals)
	}
}

func TestScoresComputedWhileFilteringFollowTheExtendersNodes(t *testing.T) {
	t.Parallel()
	table := map[string]int64{"n1": 90, "n2": 10, "n3": 50, "n4": 70}
	tests := []struct {
		name string
		ext  *fakeExtender
		want []string // node names scored, in order
	}{
		{"the best node removed by the extender is not chosen", &fakeExtender{name: "e", filters: true, drop: map[string]bool{"n1": true}}, []string{"n2", "n3", "n4"}},
		{"reordered nodes keep their own scores", &fakeExtender{name: "e", filters: true, reverse: true}, []string{"n4", "n3", "n2", "n1"}},
		{"kept nodes keep their early scores", &fakeExtender{name: "e", filters: true}, []string{"n1", "n2", "n3", "n4"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := mustNew(t,
				framework.WithPlugin(&podOnly{fakeScore{name: "S", scores: table}}, 1),
				framework.WithExtender(tc.ext),
			)
			res, err := f.Schedule(context.Background(), testPod, nodes("n1", "n2", "n3", "n4"))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, ns := range res.NodeScores() {
				got = append(got, ns.Name)
				if ns.TotalScore != table[ns.Name] {
					t.Errorf("%s total %d, want its own score %d", ns.Name, ns.TotalScore, table[ns.Name])
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("scored %v, want %v", got, tc.want)
			}
			best := tc.want[0]
			for _, n := range tc.want {
				if table[n] > table[best] {
					best = n
				}
			}
			if res.SuggestedHost != best {
				t.Errorf("SuggestedHost = %s, want %s", res.SuggestedHost, best)
			}
		})
	}
}

func TestScorePluginsSeeTheNodeInfosTheExtenderReturned(t *testing.T) {
	t.Parallel()
	pod := func(name string) *v1.Pod {
		return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)}}
	}
	busy := nodeinfo.New(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "busy"}}, pod("a"), pod("b"))
	idle := nodeinfo.New(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "idle"}})
	for _, fresh := range []bool{false, true} {
		f := mustNew(t, framework.WithPlugin(podCount{}, 1), framework.WithExtender(&fakeExtender{name: "e", filters: true, fresh: fresh}))
		res, err := f.Schedule(context.Background(), testPod, []*nodeinfo.NodeInfo{busy, idle})
		if err != nil {
			t.Fatal(err)
		}
		want := int64(2)
		if fresh {
			want = 0 // a new NodeInfo holds no pods
		}
		for _, ns := range res.NodeScores() {
			if ns.Name == "busy" && ns.TotalScore != want {
				t.Errorf("fresh=%v: busy scored %d, want %d", fresh, ns.TotalScore, want)
			}
		}
	}
}

func TestAFilteringExtenderNeedsMoreThanTheFirstFeasibleNode(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		ext  *fakeExtender
		want int // nodes evaluated
	}{
		{"an extender that filters sees every node", &fakeExtender{name: "e", filters: true}, 150},
		{"an extender that prioritizes has every node scored", &fakeExtender{name: "e", prioritizes: true, weight: 1}, 150},
		{"an extender that only binds changes nothing", &fakeExtender{name: "e", binds: true}, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := mustNew(t, framework.WithExtender(tc.ext), framework.WithPercentageOfNodesToScore(100))
			res, err := f.Schedule(context.Background(), testPod, manyNodes(150))
			if err != nil {
				t.Fatal(err)
			}
			if res.EvaluatedNodes != tc.want {
				t.Errorf("evaluated %d nodes, want %d", res.EvaluatedNodes, tc.want)
			}
		})
	}
}

func TestANominatedNodeTheExtenderRejectsFallsBackToTheSearch(t *testing.T) {
	t.Parallel()
	ext := &fakeExtender{name: "e", filters: true, failed: map[string]string{"n1": "not here"}}
	f := mustNew(t, framework.WithExtender(ext))
	pod := testPod.DeepCopy()
	pod.Status.NominatedNodeName = "n1"
	res, err := f.Schedule(context.Background(), pod, nodes("n1", "n2"))
	if err != nil {
		t.Fatal(err)
	}
	if res.SuggestedHost != "n2" {
		t.Errorf("SuggestedHost = %q, want n2", res.SuggestedHost)
	}
	calls := ext.filterCalls()
	if len(calls) != 2 || !slices.Equal(calls[0], []string{"n1"}) {
		t.Errorf("extender calls %v, want the nominated node alone first, then the search", calls)
	}
}

func TestBindWithExtenders(t *testing.T) {
	t.Parallel()
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "u-1"}}
	tests := []struct {
		name      string
		ext       *fakeExtender
		wantBound bool
		wantErr   bool
	}{
		{"without a binding extender the caller binds", &fakeExtender{name: "e", filters: true}, false, false},
		{"the binding extender binds", &fakeExtender{name: "e", binds: true}, true, false},
		{"its error is the binding's error", &fakeExtender{name: "e", binds: true, bindErr: errors.New("conflict")}, true, true},
		{"an ignorable extender's error leaves the binding to the caller", &fakeExtender{name: "e", binds: true, ignorable: true, bindErr: errors.New("down")}, false, false},
		{"an extender not interested in the pod does not bind it", &fakeExtender{name: "e", binds: true, uninterested: true}, false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := mustNew(t, framework.WithExtender(tc.ext))
			bound, err := f.BindWithExtenders(context.Background(), pod, "n7")
			if bound != tc.wantBound || (err != nil) != tc.wantErr {
				t.Fatalf("BindWithExtenders = %v, %v; want %v, error %v", bound, err, tc.wantBound, tc.wantErr)
			}
			if !tc.ext.binds || tc.ext.uninterested {
				return
			}
			b := tc.ext.bindings()
			if len(b) != 1 || b[0].Name != "p" || b[0].Namespace != "ns" || b[0].UID != "u-1" || b[0].Target.Kind != "Node" || b[0].Target.Name != "n7" {
				t.Errorf("bindings %+v, want p in ns (u-1) to Node n7", b)
			}
		})
	}
	f := mustNew(t)
	if _, err := f.BindWithExtenders(context.Background(), nil, "n1"); err == nil {
		t.Error("a nil pod was accepted")
	}
	if _, err := f.BindWithExtenders(context.Background(), pod, ""); err == nil {
		t.Error("an empty node name was accepted")
	}
}

func TestNewRejectsBadExtenders(t *testing.T) {
	t.Parallel()
	if _, err := framework.New(framework.WithExtender(nil)); err == nil {
		t.Error("a nil extender was accepted")
	}
	_, err := framework.New(
		framework.WithExtender(&fakeExtender{name: "a", binds: true}),
		framework.WithExtender(&fakeExtender{name: "b", binds: true}),
	)
	if err == nil || !strings.Contains(err.Error(), "only one extender can implement bind") {
		t.Errorf("two binders: err = %v", err)
	}
}

func TestFrameworkFilterGivesEveryNodeAVerdict(t *testing.T) {
	t.Parallel()
	// Without score plugins Schedule would stop at the first feasible
	// node, and with 300 nodes at 150 of them; Filter judges them all.
	f := mustNew(t,
		framework.WithPlugin(&fakeFilter{name: "F", reject: map[string]string{"node-0003": "no"}}, 0),
		// Extenders are Schedule's business, not Filter's.
		framework.WithExtender(&fakeExtender{name: "e", filters: true, filterErr: errors.New("not asked")}),
	)
	all := manyNodes(300)
	feasible, d, err := f.Filter(context.Background(), testPod, all)
	if err != nil {
		t.Fatal(err)
	}
	if len(feasible) != 299 || feasible[0] != all[0] || feasible[3] != all[4] {
		t.Errorf("%d feasible nodes, want 299 in the order given", len(feasible))
	}
	if s := d.NodeStatus("node-0003"); len(maps.Collect(d.Rejected())) != 1 || s.Plugin() != "F" {
		t.Errorf("diagnosis %v, want node-0003 rejected by F", maps.Collect(d.Rejected()))
	}
	if _, _, err := f.Filter(context.Background(), nil, all); err == nil {
		t.Error("a nil pod was accepted")
	}
}

func TestFrameworkFilterAppliesAPreFilterRejectionToEveryNode(t *testing.T) {
	t.Parallel()
	f := mustNew(t, framework.WithPlugin(&fakeFilter{name: "F", preStatus: fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "pod is odd")}, 0))
	feasible, d, err := f.Filter(context.Background(), testPod, nodes("n1", "n2"))
	if err != nil || len(feasible) != 0 || len(maps.Collect(d.Rejected())) != 2 || d.PreFilterMsg != "pod is odd" {
		t.Errorf("Filter = %v, %+v, %v; want both nodes rejected by PreFilter", feasible, d, err)
	}
}

func TestFrameworkScoreWeighsEveryNode(t *testing.T) {
	t.Parallel()
	f := mustNew(t,
		framework.WithPlugin(&fakeScore{name: "S", scores: map[string]int64{"n1": 30, "n2": 60}}, 2),
		framework.WithExtender(&fakeExtender{name: "e", prioritizes: true, weight: 1, scores: map[string]int64{"n1": 10}}),
	)
	scores, err := f.Score(context.Background(), testPod, nodes("n1", "n2"))
	if err != nil {
		t.Fatal(err)
	}
	if len(scores) != 2 || scores[0].Name != "n1" || scores[0].TotalScore != 60 || scores[1].TotalScore != 120 {
		t.Errorf("Score = %+v, want n1 60 and n2 120, without the extender", scores)
	}
}
