package filter

import (
	"context"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"

	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/internal/cycle"
	"github.com/kubesched/kubesched/internal/podaffinity"
	"github.com/kubesched/kubesched/nodeinfo"
)

// antiPod is a pod of app, on node, that keeps other pods of
// avoidApp off its host when avoidApp is set.
func antiPod(name, app, node, avoidApp string) *v1.Pod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns", UID: k8stypes.UID("uid-" + name), Labels: map[string]string{"app": app}}}
	p.Spec.NodeName = node
	if avoidApp != "" {
		p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": avoidApp}},
			TopologyKey:   []string{"kubernetes.io/hostname", "zone"}[len(name)%2],
		}}}}
	}
	return p
}

// countsOf flattens counts for comparison.
func countsOf(c *podaffinity.Counts) map[string]int64 {
	out := map[string]int64{}
	c.Each(func(key, value string, n int64) { out[key+"="+value] = n })
	return out
}

// TestAffinityAggregatesCountAsEveryNodeCountedAgain changes random nodes
// of a cluster, through new NodeInfos, in place, or in a new list, and
// checks after each change that the PreFilter state counted through the
// aggregate, which visits only the changed nodes, holds what counting
// every node finds, for a pod without terms and for one with affinity
// and anti-affinity terms.
func TestAffinityAggregatesCountAsEveryNodeCountedAgain(t *testing.T) {
	aggs := new(affinityAggregates)
	r := rand.New(rand.NewPCG(5, 6))
	apps := []string{"web", "db", "cache"}
	var cluster []*nodeinfo.NodeInfo
	for i := range minAggregateNodes + 44 {
		name := "n" + strconv.Itoa(i)
		node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			"kubernetes.io/hostname": name, "zone": "z" + strconv.Itoa(i%3)}}}
		cluster = append(cluster, nodeinfo.New(node, antiPod("p"+name, apps[i%3], name, apps[(i+1)%3])))
	}
	plain := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "plain", Namespace: "ns", Labels: map[string]string{"app": "web"}}}
	withTerms := plain.DeepCopy()
	withTerms.Name = "terms"
	withTerms.Spec.Affinity = &v1.Affinity{
		PodAffinity: &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}, TopologyKey: "zone",
		}}},
		PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
			LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}, TopologyKey: "kubernetes.io/hostname",
		}}},
	}
	ctx := context.Background()
	// Aggregates kept by the test itself, given the nodes' generations as
	// a snapshot keeps them.
	withGens := map[string]*affinityAggregate{plain.Name: {}, withTerms.Name: {}}
	// The counts the last step's states got, and what they were then:
	// counts lent by an aggregate must not change under a state.
	lent := map[string]*interPodAffinityState{}
	lentThen := map[string][3]map[string]int64{}
	for step := range 400 {
		i := r.IntN(len(cluster))
		p := antiPod("s"+strconv.Itoa(step), apps[r.IntN(3)], cluster[i].Name(), []string{"", "web", "db"}[r.IntN(3)])
		switch r.IntN(6) {
		case 0:
			ni := cluster[i].Clone()
			ni.AddPod(p)
			cluster[i] = ni
		case 1:
			cluster[i].AddPod(p)
		case 2: // a pod removed, from a copy or in place
			if len(cluster[i].Pods()) == 0 {
				break
			}
			if r.IntN(2) == 0 {
				cluster[i] = cluster[i].Clone()
			}
			if err := cluster[i].RemovePod(cluster[i].Pods()[r.IntN(len(cluster[i].Pods()))].Pod); err != nil {
				t.Fatal(err)
			}
		case 3: // the node moves zone, its pods staying
			node := cluster[i].Node().DeepCopy()
			node.Labels["zone"] = "z" + strconv.Itoa(r.IntN(4))
			cluster[i] = cluster[i].Clone()
			cluster[i].SetNode(node)
		case 4: // several changes on one node, more than it remembers
			ni := cluster[i].Clone()
			for k := range 1 + r.IntN(4) {
				q := antiPod(p.Name+"-"+strconv.Itoa(k), apps[r.IntN(3)], ni.Name(), []string{"", "web", "db"}[r.IntN(3)])
				ni.AddPod(q)
			}
			if err := ni.RemovePod(ni.Pods()[0].Pod); err != nil {
				t.Fatal(err)
			}
			cluster[i] = ni
		default:
			cluster = append([]*nodeinfo.NodeInfo(nil), cluster...)
			cluster[i] = cluster[i].Clone()
			cluster[i].AddPod(p)
		}
		if step%3 == 1 {
			continue // changes pile up before the next count
		}
		for _, pod := range []*v1.Pod{plain, withTerms} {
			state := fwk.NewCycleState(cluster)
			got, status := newInterPodAffinityState(ctx, aggs, state, pod, cluster, cycle.Of(state).NodesWithRequiredPodAntiAffinity(cluster), true)
			if status != nil {
				t.Fatalf("step %d, %s: %v", step, pod.Name, status)
			}
			if prev := lent[pod.Name]; prev != nil {
				now := [3]map[string]int64{countsOf(prev.existingAnti), countsOf(prev.affinityCounts), countsOf(prev.antiAffinityCounts)}
				if then := lentThen[pod.Name]; !maps.Equal(now[0], then[0]) || !maps.Equal(now[1], then[1]) || !maps.Equal(now[2], then[2]) {
					t.Fatalf("step %d, %s: the last step's state changed under it: %v, was %v", step, pod.Name, now, then)
				}
			}
			lent[pod.Name] = got
			lentThen[pod.Name] = [3]map[string]int64{countsOf(got.existingAnti), countsOf(got.affinityCounts), countsOf(got.antiAffinityCounts)}
			want := *got
			want.existingAnti, want.affinityCounts, want.antiAffinityCounts = &podaffinity.Counts{}, &podaffinity.Counts{}, &podaffinity.Counts{}
			keys := want.keys(len(want.affinity)+len(want.antiAffinity) > 0)
			before := want
			gens := make([]int64, len(cluster))
			for i, ni := range cluster {
				gens[i] = ni.Generation()
			}
			a := withGens[pod.Name]
			a.count(&before, keys, cluster, gens, nil)
			counts := make([]int, len(keys.incoming))
			for _, ni := range cluster {
				want.countNode(ni, keys, counts)
			}
			for name, pair := range map[string][2]*podaffinity.Counts{
				"existing anti-affinity": {got.existingAnti, want.existingAnti},
				"affinity":               {got.affinityCounts, want.affinityCounts},
				"anti-affinity":          {got.antiAffinityCounts, want.antiAffinityCounts},
				"existing anti-affinity, with generations": {a.totals[0], want.existingAnti},
				"affinity, with generations":               {a.totals[1], want.affinityCounts},
				"anti-affinity, with generations":          {a.totals[2], want.antiAffinityCounts},
			} {
				if g, w := countsOf(pair[0]), countsOf(pair[1]); !maps.Equal(g, w) {
					t.Fatalf("step %d, %s, %s counts: aggregate %v, every node %v", step, pod.Name, name, g, w)
				}
			}
		}
	}
}

func TestAddPodCopiesCountsLentByAnAggregate(t *testing.T) {
	node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: map[string]string{"kubernetes.io/hostname": "n", "zone": "z"}}}
	ni := nodeinfo.New(node)
	var a affinityAggregate
	a.count(&interPodAffinityState{pod: &v1.Pod{}}, countingKeys{}, []*nodeinfo.NodeInfo{ni}, nil, nil)
	incoming := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "incoming", Namespace: "ns", Labels: map[string]string{"app": "web"}}}
	s := &interPodAffinityState{pod: incoming, shared: true}
	state := fwk.NewCycleState([]*nodeinfo.NodeInfo{ni})
	s.existingAnti, s.affinityCounts, s.antiAffinityCounts = a.lend(state)
	interPodAffinityKey.Write(state, s)
	// A placed pod whose anti-affinity keeps web pods away.
	placed := nodeinfo.NewPodInfo(antiPod("placed", "db", "n", "web"))
	if status := updateInterPodAffinity(state, placed, ni, 1); status != nil {
		t.Fatal(status)
	}
	if s.existingAnti.Len() == 0 {
		t.Fatal("AddPod counted nothing for a placed pod whose anti-affinity matches")
	}
	if a.totals[0].Len() != 0 {
		t.Errorf("AddPod changed the aggregate's counts it was lent: %v", countsOf(a.totals[0]))
	}
}

// peekFilter is a Filter plugin that reads InterPodAffinity's state: on
// its first call it copies the counts, tells seen, and waits for resume
// before it lets the cycle go on.
type peekFilter struct {
	called atomic.Bool
	seen   chan *interPodAffinityState
	resume chan struct{}
}

func (p *peekFilter) Name() string { return "Peek" }

func (p *peekFilter) Filter(_ context.Context, state *fwk.CycleState, _ *v1.Pod, _ *nodeinfo.NodeInfo) *fwk.Status {
	if p.called.CompareAndSwap(false, true) {
		s, _ := interPodAffinityKey.Read(state)
		p.seen <- s
		<-p.resume
	}
	return nil
}

// TestACycleSharesAnAggregatesCountsUntilItEnds runs a cycle that stops
// in the middle of filtering while another cycle for a pod counted the
// same way sees a node changed: the first cycle's counts must stay as
// they were. Once both cycles ended the aggregate owns its counts again
// and changes them without copying.
func TestACycleSharesAnAggregatesCountsUntilItEnds(t *testing.T) {
	// Every web pod keeps the others off its host.
	web := func(name, node string) *v1.Pod {
		p := antiPod(name, "web", node, "web")
		p.Spec.Affinity.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0].TopologyKey = "kubernetes.io/hostname"
		return p
	}
	var nodes []*nodeinfo.NodeInfo
	for i := range minAggregateNodes + 4 {
		name := "n" + strconv.Itoa(i)
		node := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{
			"kubernetes.io/hostname": name, "zone": "z" + strconv.Itoa(i%3)}}}
		var pods []*v1.Pod
		if i%4 == 0 {
			pods = append(pods, web("web-"+name, name))
		}
		nodes = append(nodes, nodeinfo.New(node, pods...))
	}
	incoming := web("incoming", "")
	pl := &InterPodAffinity{}
	peek := &peekFilter{seen: make(chan *interPodAffinityState), resume: make(chan struct{})}
	fw, err := framework.New(
		framework.WithPlugin(pl, 0),
		framework.WithPlugin(peek, 0),
		framework.WithParallelism(1),
	)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	// Another web pod lands on a node that had none.
	changed := slices.Clone(nodes)
	ni := changed[1].Clone()
	ni.AddPod(web("web-new", changed[1].Name()))
	changed[1] = ni

	done := make(chan error, 1)
	go func() {
		_, err := fw.Schedule(ctx, incoming, nodes)
		done <- err
	}()
	var first *interPodAffinityState
	select {
	case first = <-peek.seen:
	case err := <-done:
		t.Fatalf("the first cycle ended without filtering: %v", err)
	}
	if first == nil {
		t.Fatal("InterPodAffinity wrote no state")
	}
	then := [3]map[string]int64{countsOf(first.existingAnti), countsOf(first.affinityCounts), countsOf(first.antiAffinityCounts)}
	// The second cycle passes the peek at once.
	if _, err := fw.Schedule(ctx, incoming, changed); err != nil {
		t.Fatal(err)
	}
	key := first.keys(true).String()
	a, giveBack := pl.aggregates.Take(key)
	if a == nil {
		t.Fatal("the aggregate is held between cycles")
	}
	if n := a.totals[2].Get("kubernetes.io/hostname", changed[1].Name()); n != 1 {
		t.Errorf("the second cycle counts %d web pods on %s, want the new one", n, changed[1].Name())
	}
	giveBack()
	now := [3]map[string]int64{countsOf(first.existingAnti), countsOf(first.affinityCounts), countsOf(first.antiAffinityCounts)}
	for i := range now {
		if !maps.Equal(now[i], then[i]) {
			t.Errorf("counts %d of the first cycle changed while it ran: %v, were %v", i, now[i], then[i])
		}
	}
	close(peek.resume)
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	a, giveBack = pl.aggregates.Take(key)
	if a == nil {
		t.Fatal("the aggregate is held after both cycles ended")
	}
	for i := range a.loans {
		if a.loans[i].Out() {
			t.Errorf("counts %d are still on loan after both cycles ended", i)
		}
	}
	totals := a.totals
	giveBack()
	// A third cycle over a list where the web pod left again changes the
	// counts in place.
	if _, err := fw.Schedule(ctx, incoming, nodes); err != nil {
		t.Fatal(err)
	}
	a, giveBack = pl.aggregates.Take(key)
	defer giveBack()
	if a.totals != totals {
		t.Error("the aggregate copied counts that no cycle borrowed any more")
	}
}
