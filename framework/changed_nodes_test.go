package framework_test

import (
	"context"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/cache"
	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/internal/cycle"
	"github.com/kubesched/kubesched/internal/testcluster"
	"github.com/kubesched/kubesched/nodeinfo"
)

// changeSpy is a PreFilter plugin that asks, each cycle, which nodes
// changed since the version it saw last.
type changeSpy struct {
	since   cycle.Version
	changed []int32
	ok      bool
	zero    bool // the version returned was the zero one
}

func (*changeSpy) Name() string { return "ChangeSpy" }

func (s *changeSpy) PreFilter(_ context.Context, state *fwk.CycleState, _ *v1.Pod, nodes []*nodeinfo.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	now, changed, ok := cycle.Of(state).ChangedNodes(nodes, s.since)
	s.changed, s.ok, s.zero = slices.Clone(changed), ok, now == cycle.Version{}
	s.since = now
	return nil, nil
}

func (*changeSpy) PreFilterExtensions() fwk.PreFilterExtensions { return nil }

func TestChangedNodesNamesTheNodesAnInPlaceSnapshotChanged(t *testing.T) {
	spy := &changeSpy{}
	f := mustNew(t, framework.WithPlugin(spy, 0))
	c, err := cache.New()
	if err != nil {
		t.Fatal(err)
	}
	nodes := testcluster.Nodes(8, testcluster.Basic)
	for _, n := range nodes {
		if _, err := c.AddNode(n); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	schedule := func(snap *cache.Snapshot) {
		t.Helper()
		if _, err := f.ScheduleSnapshot(ctx, testcluster.Pod("p", testcluster.Basic), snap); err != nil {
			t.Fatal(err)
		}
	}
	addPod := func(name, node string) {
		t.Helper()
		p := testcluster.Pod(name, testcluster.Basic)
		p.Spec.NodeName = node
		if err := c.AddPod(p); err != nil {
			t.Fatal(err)
		}
	}
	position := func(snap *cache.Snapshot, node string) int32 {
		i, ok := snap.Index(node)
		if !ok {
			t.Fatalf("no node %s", node)
		}
		return int32(i)
	}

	snap := c.UpdateSnapshot(nil)
	schedule(snap)
	if spy.ok {
		t.Fatal("the first cycle could tell what changed since the zero version")
	}
	if spy.zero {
		t.Fatal("a snapshot updated in place has no version")
	}

	schedule(snap)
	if !spy.ok || len(spy.changed) != 0 {
		t.Fatalf("nothing changed, but ChangedNodes said %v, %v", spy.changed, spy.ok)
	}

	addPod("a", nodes[2].Name)
	addPod("b", nodes[5].Name)
	snap = c.UpdateSnapshot(snap)
	schedule(snap)
	want := []int32{position(snap, nodes[2].Name), position(snap, nodes[5].Name)}
	slices.Sort(want)
	got := slices.Clone(spy.changed)
	slices.Sort(got)
	if !spy.ok || !slices.Equal(slices.Compact(got), want) {
		t.Fatalf("after pods joined two nodes, ChangedNodes said %v, %v; want positions %v", spy.changed, spy.ok, want)
	}

	// Two updates between cycles: both are named.
	addPod("c", nodes[0].Name)
	snap = c.UpdateSnapshot(snap)
	addPod("d", nodes[7].Name)
	snap = c.UpdateSnapshot(snap)
	schedule(snap)
	want = []int32{position(snap, nodes[0].Name), position(snap, nodes[7].Name)}
	slices.Sort(want)
	got = slices.Clone(spy.changed)
	slices.Sort(got)
	if !spy.ok || !slices.Equal(slices.Compact(got), want) {
		t.Fatalf("after two updates, ChangedNodes said %v, %v; want positions %v", spy.changed, spy.ok, want)
	}

	// A new snapshot is another list: nothing can be told.
	addPod("e", nodes[1].Name)
	snap = c.Snapshot()
	schedule(snap)
	if spy.ok {
		t.Fatal("ChangedNodes could tell what changed across two snapshots")
	}

	// A plain node list has no log.
	if _, err := f.Schedule(ctx, testcluster.Pod("p", testcluster.Basic), snap.Nodes()); err != nil {
		t.Fatal(err)
	}
	if spy.ok || !spy.zero {
		t.Fatalf("over a plain node list ChangedNodes said ok %v, zero version %v; want false, true", spy.ok, spy.zero)
	}
}
