package incremental

import (
	"maps"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/nodeinfo"
)

func nodes(names ...string) []*nodeinfo.NodeInfo {
	out := make([]*nodeinfo.NodeInfo, len(names))
	for i, n := range names {
		out[i] = nodeinfo.New(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}})
	}
	return out
}

func TestPositionsSync(t *testing.T) {
	type visit struct {
		pos   int
		since int64
	}
	list := nodes("a", "b", "c")
	first := []int64{list[0].Generation(), list[1].Generation(), list[2].Generation()}
	var p Positions
	p.Reset(len(list))
	record := func(gens []int64) []visit {
		var got []visit
		p.Sync(nil, list, gens, func(pos int, ni *nodeinfo.NodeInfo, since int64) {
			if ni != list[pos] {
				t.Errorf("position %d handed %s, want %s", pos, ni.Name(), list[pos].Name())
			}
			got = append(got, visit{pos, since})
		})
		return got
	}
	if got, want := record(nil), []visit{{0, 0}, {1, 0}, {2, 0}}; !slices.Equal(got, want) {
		t.Fatalf("the first sync recounts %v, want every position, never counted: %v", got, want)
	}
	if got := record(nil); len(got) != 0 {
		t.Errorf("a sync over the same nodes recounts %v, want none", got)
	}
	list[1].AddPod(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: "p"}})
	if got, want := record(nil), []visit{{1, first[1]}}; !slices.Equal(got, want) {
		t.Errorf("after a pod was added to b, sync recounts %v, want b since its counted generation: %v", got, want)
	}
	// The cycle's generations are trusted over the nodes'.
	stale := []int64{list[0].Generation(), list[1].Generation(), list[2].Generation()}
	list[2].AddPod(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "q", Namespace: "default", UID: "q"}})
	if got := record(stale); len(got) != 0 {
		t.Errorf("with generations saying nothing changed, sync recounts %v, want none", got)
	}
	// Generation 0, a NodeInfo not built by nodeinfo, is always counted.
	list[0] = &nodeinfo.NodeInfo{}
	if got, want := record(nil), []visit{{0, first[0]}, {2, stale[2]}}; !slices.Equal(got, want) {
		t.Errorf("sync recounts %v, want a NodeInfo without generation and c: %v", got, want)
	}
	if got, want := record(nil), []visit{{0, 0}}; !slices.Equal(got, want) {
		t.Errorf("sync recounts %v, want the NodeInfo without generation again: %v", got, want)
	}
	p.Reset(2)
	if got := p.Len(); got != 2 {
		t.Errorf("after Reset(2), Len = %d", got)
	}
}

func TestSharesKeepTotalsInStep(t *testing.T) {
	totals := map[string]int64{}
	add := func(k string, n int64) {
		if totals[k] += n; totals[k] == 0 {
			delete(totals, k)
		}
	}
	var s Shares[string]
	s.Reset(2)
	s.Add(0, "zone-a", 2, add)
	s.Add(1, "zone-a", 1, add)
	s.Add(1, "zone-b", 4, add)
	if want := map[string]int64{"zone-a": 3, "zone-b": 4}; !maps.Equal(totals, want) {
		t.Fatalf("totals %v, want %v", totals, want)
	}
	s.Add(1, "zone-b", -4, add)
	if got := len(s.byPos[1]); got != 1 {
		t.Errorf("a share that came to 0 is kept: position 1 holds %d shares, want 1", got)
	}
	s.Drop(0, add)
	if want := map[string]int64{"zone-a": 1}; !maps.Equal(totals, want) {
		t.Errorf("after dropping position 0, totals %v, want %v", totals, want)
	}
	if got := len(s.byPos[0]); got != 0 {
		t.Errorf("position 0 still holds %d shares after Drop", got)
	}
}

func TestLoan(t *testing.T) {
	var free Loan
	if free.Out() {
		t.Error("a value never lent is out")
	}
	var forever Loan
	forever.Lend(fwk.NewCycleState(nil)) // no cycle ends this state
	if !forever.Out() {
		t.Error("a value lent to a state whose end is never told is not out")
	}
	forever.Renew()
	if forever.Out() {
		t.Error("a renewed loan is out")
	}
}
