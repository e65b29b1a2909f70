package cache

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	v1 "k8s.io/api/core/v1"
)

func TestSnapshotCopiesOnlyWhatChanged(t *testing.T) {
	t.Parallel()
	c := newCache(t)
	mustNode(t, c, node("a", "z1"))
	mustNode(t, c, node("b", "z1"))
	mustNode(t, c, node("c", "z2"))
	first := c.Snapshot()

	if again := c.Snapshot(); again != first {
		t.Error("a snapshot with nothing changed is not the previous one")
	}

	must(t, c.AddPod(pod("1", "b", "1")))
	second := c.Snapshot()
	for _, name := range []string{"a", "c"} {
		before, _ := first.Get(name)
		after, _ := second.Get(name)
		if before != after {
			t.Errorf("node %s did not change but was copied again", name)
		}
	}
	before, _ := first.Get("b")
	after, _ := second.Get("b")
	if before == after || len(after.Pods()) != 1 || len(before.Pods()) != 0 {
		t.Errorf("node b: %d pods in the new snapshot, %d in the old; want 1 and 0 in two copies", len(after.Pods()), len(before.Pods()))
	}

	// A new node relists the nodes, still reusing the unchanged copies.
	mustNode(t, c, node("d", "z2"))
	third := c.Snapshot()
	if got, _ := third.Get("b"); got != after {
		t.Error("node b was copied again when another node joined")
	}
	if third.Len() != 4 || second.Len() != 3 {
		t.Errorf("snapshot sizes %d then %d, want 3 then 4", second.Len(), third.Len())
	}
}

func TestSnapshotCountsImagesAcrossNodes(t *testing.T) {
	t.Parallel()
	c := newCache(t, WithFreshImageStates())
	mustNode(t, c, node("a", "", "nginx", "redis"))
	mustNode(t, c, node("b", "", "nginx"))
	first := c.Snapshot()
	a, _ := first.Get("a")
	if got := a.ImageStates()["nginx"].NumNodes; got != 2 {
		t.Errorf("nginx on %d nodes as a sees it, want 2", got)
	}

	must(t, c.RemoveNode(node("b", "")))
	second := c.Snapshot()
	a2, _ := second.Get("a")
	if got := a2.ImageStates()["nginx"].NumNodes; got != 1 {
		t.Errorf("nginx on %d nodes once b left, want 1", got)
	}
	if got := a.ImageStates()["nginx"].NumNodes; got != 2 {
		t.Errorf("the earlier snapshot now says nginx is on %d nodes; snapshots must not change", got)
	}
	if got := a2.ImageStates()["redis"].NumNodes; got != 1 {
		t.Errorf("redis on %d nodes, want 1", got)
	}
}

func TestImageStatesAsKubeSchedulersCacheKeepsThem(t *testing.T) {
	t.Parallel()
	sized := func(n *v1.Node, size int64) *v1.Node {
		for i := range n.Status.Images {
			n.Status.Images[i].SizeBytes = size
		}
		return n
	}
	c := newCache(t)
	mustNode(t, c, sized(node("a", "", "nginx"), 100))
	mustNode(t, c, sized(node("b", "", "nginx"), 300))
	first := c.Snapshot()
	b, _ := first.Get("b")
	if got := b.ImageStates()["nginx"]; got.Size != 100 || got.NumNodes != 2 {
		t.Errorf("b's nginx %+v, want the size a reported first, 100, on 2 nodes", *got)
	}

	// a leaves: b did not change, so it keeps its count until it does.
	must(t, c.RemoveNode(node("a", "")))
	second := c.Snapshot()
	b2, _ := second.Get("b")
	if got := b2.ImageStates()["nginx"].NumNodes; got != 2 {
		t.Errorf("b, unchanged, counts nginx on %d nodes; kube-scheduler's cache keeps 2 until b changes", got)
	}
	must(t, c.AddPod(pod("1", "b", "1")))
	third := c.Snapshot()
	b3, _ := third.Get("b")
	if got := b3.ImageStates()["nginx"]; got.NumNodes != 1 || got.Size != 100 {
		t.Errorf("b, changed, has nginx %+v, want 1 node and still the first size, 100", *got)
	}

	// Once no node reports it, the next node to report it sets the size.
	mustNode(t, c, sized(node("b", "", "redis"), 300))
	mustNode(t, c, sized(node("c", "", "nginx"), 500))
	c3, _ := c.Snapshot().Get("c")
	if got := c3.ImageStates()["nginx"]; got.Size != 500 || got.NumNodes != 1 {
		t.Errorf("c's nginx %+v, want 500 on 1 node", *got)
	}
}

func TestNilSnapshotIsEmpty(t *testing.T) {
	t.Parallel()
	var s *Snapshot
	if s.Len() != 0 || s.Nodes() != nil {
		t.Error("a nil snapshot has nodes")
	}
	if _, ok := s.Get("a"); ok {
		t.Error("a nil snapshot finds a node")
	}
}

func TestNodeTreeListsZonesInTurn(t *testing.T) {
	t.Parallel()
	var tree nodeTree
	for _, n := range []*v1.Node{node("a1", "a"), node("b1", "b"), node("a2", "a")} {
		tree.add(n)
	}
	if got := tree.list(); len(got) != 3 || got[0] != "a1" || got[1] != "b1" || got[2] != "a2" {
		t.Errorf("list = %v, want [a1 b1 a2]", got)
	}
	if !tree.remove(node("b1", "b")) || tree.remove(node("b1", "b")) {
		t.Error("remove did not report whether the node was there")
	}
	if got := tree.list(); len(got) != 2 || len(tree.zones) != 1 {
		t.Errorf("after removing zone b's last node: list %v, zones %v", got, tree.zones)
	}
}

func TestUpdateSnapshot(t *testing.T) {
	t.Parallel()
	c := newCache(t)
	mustNode(t, c, node("a", "z1"))
	mustNode(t, c, node("b", "z1"))
	first := c.UpdateSnapshot(nil)
	a, _ := first.Get("a")
	gen := first.Generation()

	must(t, c.AddPod(pod("1", "b", "1")))
	if got := c.UpdateSnapshot(first); got != first {
		t.Fatal("the latest snapshot was not updated in place")
	}
	if b, _ := first.Get("b"); len(b.Pods()) != 1 {
		t.Errorf("node b has %d pods after the update, want 1", len(b.Pods()))
	}
	if got, _ := first.Get("a"); got != a {
		t.Error("node a did not change but was copied")
	}
	if first.Generation() <= gen {
		t.Errorf("generation %d after an update, want more than %d", first.Generation(), gen)
	}
	if got := c.UpdateSnapshot(first); got != first || first.Generation() == gen {
		t.Error("an update with nothing changed did not return the snapshot as it was")
	}

	// A snapshot Snapshot returned never changes, even when it is the
	// one UpdateSnapshot returned last.
	if got := c.Snapshot(); got != first {
		t.Fatal("Snapshot with nothing changed did not return the latest snapshot")
	}
	must(t, c.AddPod(pod("3", "b", "1")))
	if got := c.UpdateSnapshot(first); got == first {
		t.Fatal("a snapshot Snapshot returned was updated in place")
	}
	if b, _ := first.Get("b"); len(b.Pods()) != 1 {
		t.Errorf("node b has %d pods in the shared snapshot, want 1 as when it was taken", len(b.Pods()))
	}

	// A snapshot that is not the latest is left alone.
	stale := &Snapshot{}
	must(t, c.AddPod(pod("2", "a", "1")))
	if got := c.UpdateSnapshot(stale); got == stale || got.Len() != 2 {
		t.Errorf("updating a snapshot that is not the latest gave %v, want a new one of 2 nodes", got)
	}

	// A node joining makes a new snapshot.
	last := c.Snapshot()
	mustNode(t, c, node("c", "z2"))
	if got := c.UpdateSnapshot(last); got == last || got.Len() != 3 || last.Len() != 2 {
		t.Errorf("after a node joined: got %d nodes (same snapshot: %v), want a new snapshot of 3", got.Len(), got == last)
	}
}

// TestChangedSinceNamesExactlyTheNodesOfTheLatestUpdates updates a
// snapshot in place hundreds of times, one, two or three nodes at a
// time, far past what its log keeps (maxLogged, 64 positions here): for
// every version it still keeps, ChangedSince names exactly the
// positions changed since, in any order; for older ones it cannot tell.
func TestChangedSinceNamesExactlyTheNodesOfTheLatestUpdates(t *testing.T) {
	t.Parallel()
	c := newCache(t)
	const nodes = 10
	for i := range nodes {
		mustNode(t, c, node(fmt.Sprintf("n%d", i), "z1"))
	}
	snap := c.UpdateSnapshot(nil)
	type version struct {
		generation int64
		changed    []int32 // the positions the update after it changed
	}
	var versions []version
	r := rand.New(rand.NewPCG(1, 2))
	uid := 0
	for range 400 {
		v := version{generation: snap.Generation()}
		for range 1 + r.IntN(3) {
			name := fmt.Sprintf("n%d", r.IntN(nodes))
			uid++
			must(t, c.AddPod(pod(strconv.Itoa(uid), name, "")))
			// An update logs each node it changed once.
			if at, _ := snap.Index(name); !slices.Contains(v.changed, int32(at)) {
				v.changed = append(v.changed, int32(at))
			}
		}
		if again := c.UpdateSnapshot(snap); again != snap {
			t.Fatal("the snapshot was not updated in place")
		}
		versions = append(versions, v)

		kept := 0
		for k := len(versions) - 1; k >= 0; k-- {
			want := map[int32]bool{}
			logged := 0
			for _, later := range versions[k:] {
				logged += len(later.changed)
				for _, p := range later.changed {
					want[p] = true
				}
			}
			got, ok := snap.ChangedSince(versions[k].generation)
			if logged > maxLogged(nodes) {
				if ok {
					t.Fatalf("ChangedSince a version %d updates back (%d positions, past the bound) tells %v", len(versions)-k, logged, got)
				}
				break
			}
			if !ok {
				t.Fatalf("ChangedSince a version %d updates back (%d positions) cannot tell", len(versions)-k, logged)
			}
			named := map[int32]bool{}
			for _, p := range got {
				named[p] = true
			}
			if !maps.Equal(named, want) {
				t.Fatalf("ChangedSince a version %d updates back names %v, want %v", len(versions)-k, named, want)
			}
			kept++
		}
		if kept == 0 {
			t.Fatal("the log keeps no update")
		}
	}
}

// The framework finds a snapshot's change log and generations by these
// methods, which the embedded change log gives it.
var _ interface {
	ChangedSince(generation int64) ([]int32, bool)
	Generations() []int64
	Generation() int64
} = (*Snapshot)(nil)
