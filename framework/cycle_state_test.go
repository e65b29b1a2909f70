package framework_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubesched/kubesched/cache"
	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/nodeinfo"
)

func TestParallelChunksOutsideAFrameworkRunsEveryChunkOnWorkerZero(t *testing.T) {
	t.Parallel()
	for _, state := range []*framework.CycleState{nil, framework.NewCycleState(nil)} {
		if got := state.Workers(100000); got != 1 {
			t.Errorf("Workers = %d outside a framework, want 1", got)
		}
		seen := make([]int, 5000)
		state.ParallelChunks(context.Background(), len(seen), func(worker, start, end int) {
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
// is given, whether CycleState.NodePositions places each where the
// cycle's node list holds it.
type positionRecorder struct {
	calls, wrong int
}

func (*positionRecorder) Name() string { return "PositionRecorder" }

func (p *positionRecorder) PreScore(_ context.Context, state *framework.CycleState, _ *v1.Pod, nodes []*nodeinfo.NodeInfo) *framework.Status {
	p.calls++
	pos, ok := state.NodePositions(nodes)
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

func (*positionRecorder) Score(context.Context, *framework.CycleState, *v1.Pod, *nodeinfo.NodeInfo) (int64, *framework.Status) {
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

	state := framework.NewCycleState(nodes)
	if pos, ok := state.NodePositions([]*nodeinfo.NodeInfo{nodes[3], nodes[1]}); !ok || len(pos) != 2 || pos[0] != 3 || pos[1] != 1 {
		t.Errorf("outside a framework NodePositions = %v, %v; want [3 1], true", pos, ok)
	}
	if _, ok := state.NodePositions([]*nodeinfo.NodeInfo{nodes[0], nodeinfo.New(cpuNode("z", "1"))}); ok {
		t.Error("NodePositions placed a node that is not in the cycle")
	}
	if _, ok := (*framework.CycleState)(nil).NodePositions(nodes); ok {
		t.Error("NodePositions on a nil state placed nodes")
	}
}

// generationsRecorder is a filter that records what
// CycleState.NodeGenerations says of each node.
type generationsRecorder struct {
	mu  sync.Mutex
	got map[string][]int64 // node: [its generation, the state's]
}

func (*generationsRecorder) Name() string { return "GenerationsRecorder" }

func (r *generationsRecorder) Filter(_ context.Context, state *framework.CycleState, _ *v1.Pod, ni *nodeinfo.NodeInfo) *framework.Status {
	pos, _ := state.NodePositions([]*nodeinfo.NodeInfo{ni})
	r.mu.Lock()
	defer r.mu.Unlock()
	if gens := state.NodeGenerations(state.AllNodes()); gens != nil {
		r.got[ni.Name()] = []int64{ni.Generation, gens[pos[0]]}
	} else {
		r.got[ni.Name()] = nil
	}
	return nil
}

func (*generationsRecorder) Score(context.Context, *framework.CycleState, *v1.Pod, *nodeinfo.NodeInfo) (int64, *framework.Status) {
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
