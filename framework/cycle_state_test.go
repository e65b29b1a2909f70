package framework_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubesched/kubesched/cache"
	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/internal/cycle"
	"github.com/kubesched/kubesched/nodeinfo"
)

func TestParallelChunksOutsideAFrameworkRunsEveryChunkOnWorkerZero(t *testing.T) {
	t.Parallel()
	for _, state := range []*fwk.CycleState{nil, fwk.NewCycleState(nil)} {
		if got := cycle.Of(state).Workers(100000); got != 1 {
			t.Errorf("Workers = %d outside a framework, want 1", got)
		}
		seen := make([]int, 5000)
		cycle.Of(state).ParallelChunks(context.Background(), len(seen), func(worker, start, end int) {
			if worker != 0 {
				t.Errorf("chunk [%d, %d) ran on worker %d, want 0", start, end, worker)
			}
			for i := start; i < end; i++ {
				seen[i]++
			}
		})
		for i, n := range seen {
			if n != 1 {
				t.Fatalf("index %d seen %d times, want 1", i, n)
			}
		}
	}
}

// positionRecorder is a PreScore plugin that records, for the nodes it
// is given, whether cycle.Hooks.NodePositions places each where the
// cycle's node list holds it.
type positionRecorder struct {
	calls, wrong int
}

func (*positionRecorder) Name() string { return "PositionRecorder" }

func (p *positionRecorder) PreScore(_ context.Context, state *fwk.CycleState, _ *v1.Pod, nodes []*nodeinfo.NodeInfo) *fwk.Status {
	p.calls++
	pos, ok := cycle.Of(state).NodePositions(nodes)
	if !ok {
		p.wrong++
		return nil
	}
	for j, ni := range nodes {
		if state.AllNodes()[pos[j]] != ni {
			p.wrong++
		}
	}
	return nil
}

func (*positionRecorder) Score(context.Context, *fwk.CycleState, *v1.Pod, *nodeinfo.NodeInfo) (int64, *fwk.Status) {
	return 0, nil
}

func TestNodePositionsAreWhereTheCycleHoldsTheNodes(t *testing.T) {
	t.Parallel()
	rec := &positionRecorder{}
	// A filter rejecting some nodes, so that PreScore gets a subset.
	reject := &filterScorer{name: "Reject", reject: map[string]bool{"b": true, "d": true}}
	fw, err := framework.New(framework.WithPluginAt(framework.Filter, reject, 0), framework.WithPlugin(rec, 1))
	if err != nil {
		t.Fatal(err)
	}
	nodes := nodeinfo.Build([]*v1.Node{cpuNode("a", "1"), cpuNode("b", "1"), cpuNode("c", "1"), cpuNode("d", "1"), cpuNode("e", "1")}, nil)
	for _, list := range [][]*nodeinfo.NodeInfo{nodes, {nodes[4], nodes[2], nodes[0], nodes[3], nodes[1]}} {
		if _, err := fw.Schedule(context.Background(), &v1.Pod{}, list); err != nil {
			t.Fatal(err)
		}
	}
	if rec.calls != 2 || rec.wrong != 0 {
		t.Errorf("PreScore called %d times with %d nodes misplaced, want 2 calls and none misplaced", rec.calls, rec.wrong)
	}

	state := fwk.NewCycleState(nodes)
	if pos, ok := cycle.Of(state).NodePositions([]*nodeinfo.NodeInfo{nodes[3], nodes[1]}); !ok || len(pos) != 2 || pos[0] != 3 || pos[1] != 1 {
		t.Errorf("outside a framework NodePositions = %v, %v; want [3 1], true", pos, ok)
	}
	if _, ok := cycle.Of(state).NodePositions([]*nodeinfo.NodeInfo{nodes[0], nodeinfo.New(cpuNode("z", "1"))}); ok {
		t.Error("NodePositions placed a node that is not in the cycle")
	}
	if _, ok := cycle.Of((*fwk.CycleState)(nil)).NodePositions(nodes); ok {
		t.Error("NodePositions on a nil state placed nodes")
	}
}

// generationsRecorder is a filter that records what
// cycle.Hooks.NodeGenerations says of each node.
type generationsRecorder struct {
	mu  sync.Mutex
	got map[string][]int64 // node: [its generation, the state's]
}

func (*generationsRecorder) Name() string { return "GenerationsRecorder" }

func (r *generationsRecorder) Filter(_ context.Context, state *fwk.CycleState, _ *v1.Pod, ni *nodeinfo.NodeInfo) *fwk.Status {
	pos, _ := cycle.Of(state).NodePositions([]*nodeinfo.NodeInfo{ni})
	r.mu.Lock()
	defer r.mu.Unlock()
	if gens := cycle.Of(state).NodeGenerations(state.AllNodes()); gens != nil {
		r.got[ni.Name()] = []int64{ni.Generation(), gens[pos[0]]}
	} else {
		r.got[ni.Name()] = nil
	}
	return nil
}

func (*generationsRecorder) Score(context.Context, *fwk.CycleState, *v1.Pod, *nodeinfo.NodeInfo) (int64, *fwk.Status) {
	return 0, nil
}

func TestNodeGenerationsAreTheSnapshotsOwn(t *testing.T) {
	t.Parallel()
	rec := &generationsRecorder{got: map[string][]int64{}}
	fw, err := framework.New(framework.WithPlugin(rec, 1))
	if err != nil {
		t.Fatal(err)
	}
	c, err := cache.New()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a", "b", "c"} {
		if _, err := c.AddNode(cpuNode(name, "2")); err != nil {
			t.Fatal(err)
		}
	}
	snap := c.Snapshot()
	for round := range 3 {
		if _, err := fw.ScheduleSnapshot(context.Background(), &v1.Pod{}, snap); err != nil {
			t.Fatal(err)
		}
		for name, g := range rec.got {
			if len(g) != 2 || g[0] != g[1] || g[0] == 0 {
				t.Errorf("round %d: node %s: generation and NodeGenerations' %v, want the same, not 0", round, name, g)
			}
		}
		// A node changes; the snapshot is brought up to date in place.
		p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("p", round), Namespace: "default", UID: types.UID(fmt.Sprint("p", round))}, Spec: v1.PodSpec{NodeName: "b"}}
		if err := c.AddPod(p); err != nil {
			t.Fatal(err)
		}
		snap = c.UpdateSnapshot(snap)
	}
	clear(rec.got)
	if _, err := fw.Schedule(context.Background(), &v1.Pod{}, snap.Nodes()); err != nil {
		t.Fatal(err)
	}
	for name, g := range rec.got {
		if g != nil {
			t.Errorf("over a plain slice, node %s has generations %v from the state, want none", name, g)
		}
	}
}

// endSpy asks, in PreFilter, for its state and a clone of it to tell it
// when the cycle ends, and notes whether the cycle had ended by the time
// each later plugin ran.
type endSpy struct {
	reject    bool
	state     *fwk.CycleState
	asked     [2]bool // OnCycleEnd's answers for the state and its clone
	ends      []string
	endedLate bool // the cycle had ended when Filter or Reserve ran
}

func (*endSpy) Name() string { return "EndSpy" }

func (s *endSpy) PreFilter(_ context.Context, state *fwk.CycleState, _ *v1.Pod, _ []*nodeinfo.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	s.state = state
	s.asked[0] = cycle.Of(state).OnCycleEnd(func() { s.ends = append(s.ends, "state") })
	s.asked[1] = cycle.Of(state.Clone()).OnCycleEnd(func() { s.ends = append(s.ends, "clone") })
	return nil, nil
}

func (*endSpy) PreFilterExtensions() fwk.PreFilterExtensions { return nil }

func (s *endSpy) Filter(context.Context, *fwk.CycleState, *v1.Pod, *nodeinfo.NodeInfo) *fwk.Status {
	s.endedLate = s.endedLate || len(s.ends) > 0
	if s.reject {
		return fwk.NewStatus(fwk.Unschedulable, "rejected by the spy")
	}
	return nil
}

func (s *endSpy) Reserve(context.Context, *fwk.CycleState, *v1.Pod, string, *framework.Result) *fwk.Status {
	s.endedLate = s.endedLate || len(s.ends) > 0
	return nil
}

func TestOnCycleEndRunsOnceTheCycleIsOver(t *testing.T) {
	t.Parallel()
	nodes := nodeinfo.Build([]*v1.Node{
		{ObjectMeta: metav1.ObjectMeta{Name: "a"}},
		{ObjectMeta: metav1.ObjectMeta{Name: "b"}},
	}, nil)
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "ns", UID: "p"}}
	ctx := context.Background()
	for _, tc := range []struct {
		name       string
		reject     bool
		manyCycles bool
		run        func(f *framework.Framework) error
		wantEnds   []string
	}{
		{name: "a placement ends its cycle", run: func(f *framework.Framework) error {
			_, err := f.Schedule(ctx, pod, nodes)
			return err
		}, wantEnds: []string{"state", "clone"}},
		{name: "a pod that fits nowhere ends its cycle too", reject: true, run: func(f *framework.Framework) error {
			var fe *framework.FitError
			if _, err := f.Schedule(ctx, pod, nodes); !errors.As(err, &fe) {
				return fmt.Errorf("Schedule: %v, want a FitError", err)
			}
			return nil
		}, wantEnds: []string{"state", "clone"}},
		// Explain schedules the pod first, then explains in a cycle of its
		// own, with another to probe the PreFilter plugins: three cycles,
		// each of whose Filter plugins runs after the one before ended.
		{name: "an explanation ends its three cycles", manyCycles: true, run: func(f *framework.Framework) error {
			_, err := f.Explain(ctx, pod, nodes)
			return err
		}, wantEnds: []string{"state", "clone", "state", "clone", "state", "clone"}},
		{name: "filtering as an extender ends its cycle", run: func(f *framework.Framework) error {
			_, _, err := f.Filter(ctx, pod, nodes)
			return err
		}, wantEnds: []string{"state", "clone"}},
		{name: "scoring as an extender ends its cycle", run: func(f *framework.Framework) error {
			_, err := f.Score(ctx, pod, nodes)
			return err
		}, wantEnds: []string{"state", "clone"}},
		{name: "a state handed back by RunPreFilterPlugins never ends", run: func(f *framework.Framework) error {
			_, s := f.RunPreFilterPlugins(ctx, pod, snapshotOf(nodes))
			return s.AsError()
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spy := &endSpy{reject: tc.reject}
			f := mustNew(t, framework.WithPlugin(spy, 0))
			if err := tc.run(f); err != nil {
				t.Fatal(err)
			}
			if spy.endedLate && !tc.manyCycles {
				t.Error("the cycle ended before its Filter or Reserve plugins ran")
			}
			if want := tc.wantEnds != nil; spy.asked != [2]bool{want, want} {
				t.Errorf("OnCycleEnd reported %v for the state and its clone, want %v", spy.asked, want)
			}
			if tc.wantEnds != nil && !slices.Equal(spy.ends, tc.wantEnds) {
				t.Errorf("ran at the end: %v, want %v", spy.ends, tc.wantEnds)
			}
			if cycle.Of(spy.state).OnCycleEnd(func() { t.Error("ran for a cycle that was over") }) {
				t.Error("OnCycleEnd reported true for a cycle that was over")
			}
		})
	}
	if cycle.Of(fwk.NewCycleState(nodes)).OnCycleEnd(func() {}) {
		t.Error("OnCycleEnd reported true for a state made with NewCycleState")
	}
	var none *fwk.CycleState
	if cycle.Of(none).OnCycleEnd(func() {}) {
		t.Error("OnCycleEnd reported true for a nil state")
	}
}
