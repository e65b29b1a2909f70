package sim_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubesched/kubesched"
	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/internal/testcluster"
	"github.com/kubesched/kubesched/nodeinfo"
	"github.com/kubesched/kubesched/sim"
)

func node(name, cpu string, labels ...string) *v1.Node {
	n := &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1.LabelHostname: name}},
		Status: v1.NodeStatus{Allocatable: v1.ResourceList{
			v1.ResourceCPU: resource.MustParse(cpu), v1.ResourceMemory: resource.MustParse("8Gi"), v1.ResourcePods: resource.MustParse("110"),
		}},
	}
	for i := 0; i+1 < len(labels); i += 2 {
		n.Labels[labels[i]] = labels[i+1]
	}
	return n
}

func pod(name, cpu string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "c", Resources: v1.ResourceRequirements{
			Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu)},
		}}}},
	}
}

func on(p *v1.Pod, node string) *v1.Pod {
	p.Spec.NodeName = node
	return p
}

func newCluster(t testing.TB, nodes []*v1.Node, pods []*v1.Pod) *sim.Cluster {
	t.Helper()
	fw, err := kubesched.DefaultFramework(framework.WithRandSource(rand.NewPCG(1, 2)))
	if err != nil {
		t.Fatal(err)
	}
	c, err := sim.New(fw, nodes, pods)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// layout is the cluster as "node:pod,pod node:..." in Nodes order, pods
// sorted.
func layout(nodes []*nodeinfo.NodeInfo) string {
	var parts []string
	for _, ni := range nodes {
		var pods []string
		for _, pi := range ni.Pods() {
			pods = append(pods, pi.Pod.Name)
		}
		slices.Sort(pods)
		parts = append(parts, ni.Name()+":"+strings.Join(pods, ","))
	}
	return strings.Join(parts, " ")
}

func TestNewRefusesWhatItCannotHold(t *testing.T) {
	t.Parallel()
	fw, err := kubesched.DefaultFramework()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		fw    *framework.Framework
		nodes []*v1.Node
		pods  []*v1.Pod
		objs  []runtime.Object
		want  string
	}{
		{name: "no framework", nodes: []*v1.Node{node("a", "1")}, want: "sim: nil framework"},
		{name: "a nil node", fw: fw, nodes: []*v1.Node{node("a", "1"), nil}, want: "sim: node 1 is nil"},
		{name: "two nodes of one name", fw: fw, nodes: []*v1.Node{node("a", "1"), node("a", "2")}, want: `sim: node "a" is already in the cluster`},
		{name: "two pods of one name", fw: fw, nodes: []*v1.Node{node("a", "1")}, pods: []*v1.Pod{on(pod("p", "1"), "a"), on(pod("p", "1"), "a")},
			want: "sim: pod default/p is already in the cluster"},
		{name: "two PersistentVolumes of one name", fw: fw, nodes: []*v1.Node{node("a", "1")},
			objs: []runtime.Object{localVolume("pv", "local", "a"), localVolume("pv", "local", "b")}, want: "sim: two PersistentVolumes called pv"},
		{name: "two PersistentVolumeClaims of one name", fw: fw, nodes: []*v1.Node{node("a", "1")},
			objs: []runtime.Object{unboundClaim("c", "local"), unboundClaim("c", "fast")}, want: "sim: two PersistentVolumeClaims called default/c"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if _, err := sim.New(tc.fw, tc.nodes, tc.pods, tc.objs...); err == nil || err.Error() != tc.want {
				t.Errorf("New = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestPendingPodsAreLeftOutOfNew(t *testing.T) {
	t.Parallel()
	c := newCluster(t, []*v1.Node{node("a", "2")}, []*v1.Pod{pod("pending", "1"), on(pod("running", "1"), "a")})
	if got := layout(c.Nodes()); got != "a:running" {
		t.Errorf("layout %s, want a:running", got)
	}
}

func TestPlaceCommitsEachDecision(t *testing.T) {
	t.Parallel()
	c := newCluster(t, []*v1.Node{node("a", "2"), node("b", "2")}, nil)
	ctx := context.Background()
	for _, name := range []string{"p1", "p2", "p3", "p4"} {
		if _, err := c.Place(ctx, pod(name, "1")); err != nil {
			t.Fatalf("Place(%s): %v", name, err)
		}
	}
	// LeastAllocated spreads: two pods on each node.
	for _, ni := range c.Nodes() {
		if len(ni.Pods()) != 2 {
			t.Errorf("%s holds %d pods, want 2: %s", ni.Name(), len(ni.Pods()), layout(c.Nodes()))
		}
	}
	_, err := c.Place(ctx, pod("p5", "1"))
	var fitErr *framework.FitError
	if !errors.As(err, &fitErr) || !strings.HasPrefix(err.Error(), "0/2 nodes are available: 2 Insufficient cpu.") {
		t.Errorf("Place on a full cluster = %v, want a FitError for cpu", err)
	}
	if p, ok := c.Pod("default", "p1"); !ok || p.Spec.NodeName == "" {
		t.Errorf("Pod(p1) = %v, %v; want it bound", p, ok)
	}
	if _, err := c.Place(ctx, pod("p1", "1")); err == nil {
		t.Error("placing a pod the cluster already has succeeded")
	}
	// A pod naming its node is judged there alone: NodeName's PreFilter
	// leaves out the other nodes.
	if _, err := c.Place(ctx, on(pod("named", "1"), "a")); err == nil || !strings.HasPrefix(err.Error(), "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) didn't satisfy plugin(s) [NodeName].") {
		t.Errorf("placing a pod naming a full node = %v, want NodeResourcesFit's rejection there and NodeName's PreFilter's elsewhere", err)
	}
}

// Place decides as the framework does over nodeinfo.Build of the same
// cluster, placement after placement.
func TestPlaceDecidesAsScheduleOverTheSameCluster(t *testing.T) {
	t.Parallel()
	nodes := testcluster.Nodes(40, testcluster.TopologySpreading)
	existing := testcluster.ExistingPods(60, nodes, testcluster.TopologySpreading)
	objs := testcluster.Objects(nodes, existing, "", testcluster.TopologySpreading)
	build := func() *framework.Framework {
		fw, err := kubesched.DefaultFramework(framework.WithRandSource(rand.NewPCG(7, 7)), framework.WithPercentageOfNodesToScore(100))
		if err != nil {
			t.Fatal(err)
		}
		return fw
	}
	c, err := sim.New(build(), nodes, existing, objs...)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := kubesched.DefaultFramework(framework.WithRandSource(rand.NewPCG(7, 7)), framework.WithPercentageOfNodesToScore(100), framework.WithObjects(objs...))
	if err != nil {
		t.Fatal(err)
	}
	placed := slices.Clone(existing)
	for i := range 30 {
		p := testcluster.Pod(fmt.Sprintf("new-%d", i), testcluster.TopologySpreading)
		got, err := c.Place(context.Background(), p)
		if err != nil {
			t.Fatalf("Place(%s): %v", p.Name, err)
		}
		// The reference sees the nodes in the snapshot's order, which is
		// the order the search and its ties follow.
		var ordered []*v1.Node
		for _, ni := range c.Snapshot().Nodes() {
			ordered = append(ordered, ni.Node())
		}
		want, err := ref.Schedule(context.Background(), p, nodeinfo.Build(ordered, placed))
		if err != nil {
			t.Fatal(err)
		}
		if got.SuggestedHost != want.SuggestedHost {
			t.Fatalf("pod %d: Place chose %s, Schedule over the same cluster %s", i, got.SuggestedHost, want.SuggestedHost)
		}
		placed = append(placed, on(p.DeepCopy(), got.SuggestedHost))
	}
}

func TestPlaceFirstFitSearchesRoundRobinInTheGivenOrder(t *testing.T) {
	t.Parallel()
	// c is too small for the pods; a, b and d take one each.
	c := newCluster(t, []*v1.Node{node("d", "1"), node("a", "1"), node("c", "0"), node("b", "1")}, nil)
	ctx := context.Background()
	var got []string
	for i := range 3 {
		name, err := c.PlaceFirstFit(ctx, pod(fmt.Sprintf("p%d", i), "1"))
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, name)
	}
	if want := []string{"d", "a", "b"}; !slices.Equal(got, want) {
		t.Errorf("first fit placed on %v, want %v", got, want)
	}
	_, err := c.PlaceFirstFit(ctx, pod("p3", "1"))
	if !errors.Is(err, sim.ErrNoNodeFits) || !strings.Contains(err.Error(), "Insufficient cpu") {
		t.Errorf("PlaceFirstFit on a full cluster = %v, want ErrNoNodeFits with the reason", err)
	}
	// A node added later comes last in the search, which goes on from
	// past b, the last node that took a pod.
	if err := c.AddNode(node("e", "2")); err != nil {
		t.Fatal(err)
	}
	if name, err := c.PlaceFirstFit(ctx, pod("p4", "1")); err != nil || name != "e" {
		t.Errorf("PlaceFirstFit = %s, %v; want e", name, err)
	}
	// The search starts past the node that took the last pod even when
	// that node has room left, as cluster-autoscaler's does.
	roomy := newCluster(t, []*v1.Node{node("x", "2"), node("y", "2")}, nil)
	got = nil
	for i := range 4 {
		name, err := roomy.PlaceFirstFit(ctx, pod(fmt.Sprintf("q%d", i), "1"))
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, name)
	}
	if want := []string{"x", "y", "x", "y"}; !slices.Equal(got, want) {
		t.Errorf("first fit on roomy nodes placed on %v, want %v", got, want)
	}
}

func TestCheckPod(t *testing.T) {
	t.Parallel()
	c := newCluster(t, []*v1.Node{node("a", "2", "zone", "z1"), node("b", "2", "zone", "z2")}, []*v1.Pod{on(pod("big", "2"), "a")})
	pinnedTo := func(p *v1.Pod, node string) *v1.Pod {
		p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
			NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchFields: []v1.NodeSelectorRequirement{{Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: []string{node}}}}},
		}}}
		return p
	}
	tests := []struct {
		name     string
		pod      *v1.Pod
		node     string
		wantCode fwk.Code
		want     string // the status's message
		plugin   string
	}{
		{name: "a pod that fits passes", pod: pod("p", "1"), node: "b", wantCode: fwk.Success},
		{name: "a pod that does not fit gets the filter's reason", pod: pod("p", "1"), node: "a",
			wantCode: fwk.Unschedulable, want: "Insufficient cpu", plugin: "NodeResourcesFit"},
		{name: "a node PreFilter left out gets kube-scheduler's verdict", pod: pinnedTo(pod("p", "1"), "a"), node: "b",
			wantCode: fwk.UnschedulableAndUnresolvable, want: "node(s) didn't satisfy plugin(s) [NodeAffinity]"},
		{name: "an unknown node is an error", pod: pod("p", "1"), node: "zz", wantCode: fwk.Error, want: `sim: no node "zz"`},
		{name: "a nil pod is an error", pod: nil, node: "a", wantCode: fwk.Error, want: "schedule: nil pod"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := c.CheckPod(context.Background(), tc.pod, tc.node)
			if s.Code() != tc.wantCode || (tc.want != "" && s.Message() != tc.want) || (tc.plugin != "" && s.Plugin() != tc.plugin) {
				t.Errorf("CheckPod = %v (plugin %q), want %v %q (plugin %q)", s, s.Plugin(), tc.wantCode, tc.want, tc.plugin)
			}
		})
	}
}

func TestPlaceAll(t *testing.T) {
	t.Parallel()
	high := func(p *v1.Pod) *v1.Pod {
		prio := int32(100)
		p.Spec.Priority = &prio
		return p
	}
	tests := []struct {
		name string
		opts []sim.PlaceOption
		// want is each pod's node, "" where it fits nowhere.
		want []string
	}{
		{name: "in the given order the later big pod finds no room", want: []string{"a", "", "b"}},
		{name: "in queue order the high-priority pod goes first", opts: []sim.PlaceOption{sim.InQueueOrder()}, want: []string{"b", "a", ""}},
		{name: "first fit fills the nodes in order", opts: []sim.PlaceOption{sim.FirstFit()}, want: []string{"a", "", "b"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := newCluster(t, []*v1.Node{node("a", "3"), node("b", "2")}, nil)
			pods := []*v1.Pod{pod("small", "2"), high(pod("big", "3")), pod("tiny", "1")}
			var each []string
			res, err := c.PlaceAll(context.Background(), pods, append(tc.opts, sim.AfterEach(func(i int, res *framework.Result, err error) {
				// The cluster holds the pod when it fits.
				_, bound := c.Pod("default", pods[i].Name)
				switch {
				case res != nil && err == nil && bound:
					each = append(each, pods[i].Name+"@"+res.SuggestedHost)
				case res == nil && err != nil && !bound:
					each = append(each, pods[i].Name+"@")
				default:
					t.Errorf("pod %d: result %v, error %v, bound %v", i, res, err, bound)
				}
			}))...)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range res {
				if r == nil {
					got = append(got, "")
				} else {
					got = append(got, r.SuggestedHost)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("placed on %q, want %q", got, tc.want)
			}
			if len(each) != 3 {
				t.Errorf("AfterEach called for %q, want every pod once", each)
			}
			for i, p := range pods {
				if !slices.Contains(each, p.Name+"@"+tc.want[i]) {
					t.Errorf("AfterEach saw %q, want %s placed on %q", each, p.Name, tc.want[i])
				}
			}
		})
	}
}

// TestPlaceAllGoesPastPodsKubeSchedulerDoesNotTry: a gated pod and a pod
// being deleted get no placement and their NotTriedError, and the pods
// after them are placed.
func TestPlaceAllGoesPastPodsKubeSchedulerDoesNotTry(t *testing.T) {
	t.Parallel()
	gated := pod("gated", "1")
	gated.Spec.SchedulingGates = []v1.PodSchedulingGate{{Name: "example.com/hold"}}
	deleting := pod("deleting", "1")
	deleting.DeletionTimestamp = &metav1.Time{}
	for _, tc := range []struct {
		name string
		opts []sim.PlaceOption
	}{
		{name: "best fit"},
		{name: "first fit", opts: []sim.PlaceOption{sim.FirstFit()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := newCluster(t, []*v1.Node{node("a", "4")}, nil)
			pods := []*v1.Pod{gated, deleting, pod("after", "1")}
			var messages []string
			res, err := c.PlaceAll(context.Background(), pods, append(tc.opts, sim.AfterEach(func(i int, res *framework.Result, err error) {
				var notTried *framework.NotTriedError
				if errors.As(err, &notTried) {
					messages = append(messages, notTried.Plugin+": "+err.Error())
				}
			}))...)
			if err != nil {
				t.Fatal(err)
			}
			if res[0] != nil || res[1] != nil || res[2] == nil || res[2].SuggestedHost != "a" {
				t.Errorf("results %v, want none for the pods not tried and node a for the last", res)
			}
			want := []string{"SchedulingGates: waiting for scheduling gates: [example.com/hold]", ": skip schedule deleting pod: default/deleting"}
			if !slices.Equal(messages, want) {
				t.Errorf("AfterEach saw %q, want %q", messages, want)
			}
			if got := layout(c.Nodes()); got != "a:after" {
				t.Errorf("layout %s, want the last pod alone placed", got)
			}
		})
	}
}

func TestPlaceAllStopsAtACancelledContext(t *testing.T) {
	t.Parallel()
	c := newCluster(t, []*v1.Node{node("a", "4")}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res, err := c.PlaceAll(ctx, []*v1.Pod{pod("p", "1")})
	if !errors.Is(err, context.Canceled) || len(res) != 1 || res[0] != nil {
		t.Errorf("PlaceAll = %v, %v; want context.Canceled and no placement", res, err)
	}
	if got := layout(c.Nodes()); got != "a:" {
		t.Errorf("layout %s, want nothing placed", got)
	}
}

func TestForkRevertCommit(t *testing.T) {
	t.Parallel()
	c := newCluster(t, []*v1.Node{node("a", "2"), node("b", "2")}, []*v1.Pod{on(pod("x", "1"), "a")})
	ctx := context.Background()
	before := layout(c.Nodes())
	if err := c.Revert(); !errors.Is(err, sim.ErrNoFork) {
		t.Errorf("Revert without a fork = %v, want ErrNoFork", err)
	}
	c.Fork()
	if err := c.AddNode(node("t1", "4")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Place(ctx, pod("y", "2")); err != nil {
		t.Fatal(err)
	}
	c.Fork()
	if err := c.RemoveNode("a"); err != nil {
		t.Fatal(err)
	}
	if err := c.RemovePod("default", "y"); err != nil {
		t.Fatal(err)
	}
	inner := layout(c.Nodes())
	if err := c.Commit(); err != nil {
		t.Fatal(err)
	}
	if got := layout(c.Nodes()); got != inner || c.Forks() != 1 {
		t.Errorf("after Commit: %s with %d forks, want %s with 1", got, c.Forks(), inner)
	}
	if err := c.Revert(); err != nil {
		t.Fatal(err)
	}
	if got := layout(c.Nodes()); got != before {
		t.Errorf("after Revert: %s, want %s", got, before)
	}
	if _, ok := c.Pod("default", "y"); ok {
		t.Error("the reverted placement's pod is still there")
	}
}

// Any sequence of changes, forks, reverts and commits leaves the cluster
// as nodeinfo.Build makes it from the same objects.
func TestAnySequenceMatchesBuild(t *testing.T) {
	t.Parallel()
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 99))
		nodes := []*v1.Node{node("n0", "4"), node("n1", "4"), node("n2", "2")}
		c := newCluster(t, nodes, nil)
		// model is what the cluster should hold; saved its state per fork.
		type model struct {
			nodes []*v1.Node
			pods  []*v1.Pod
		}
		m := model{nodes: slices.Clone(nodes)}
		var saved []model
		nextNode, nextPod := 3, 0
		for step := range 60 {
			switch op := r.IntN(8); {
			case op == 0:
				c.Fork()
				saved = append(saved, model{slices.Clone(m.nodes), slices.Clone(m.pods)})
			case op == 1 && len(saved) > 0:
				if err := c.Revert(); err != nil {
					t.Fatal(err)
				}
				m, saved = saved[len(saved)-1], saved[:len(saved)-1]
			case op == 2 && len(saved) > 0:
				if err := c.Commit(); err != nil {
					t.Fatal(err)
				}
				saved = saved[:len(saved)-1]
			case op == 3:
				n := node(fmt.Sprintf("n%d", nextNode), fmt.Sprint(1+r.IntN(4)))
				nextNode++
				if err := c.AddNode(n); err != nil {
					t.Fatal(err)
				}
				m.nodes = append(m.nodes, n)
			case op == 4 && len(m.nodes) > 0:
				gone := m.nodes[r.IntN(len(m.nodes))].Name
				if err := c.RemoveNode(gone); err != nil {
					t.Fatal(err)
				}
				m.nodes = slices.DeleteFunc(m.nodes, func(n *v1.Node) bool { return n.Name == gone })
				m.pods = slices.DeleteFunc(m.pods, func(p *v1.Pod) bool { return p.Spec.NodeName == gone })
			case op == 5 && len(m.pods) > 0:
				gone := m.pods[r.IntN(len(m.pods))]
				if err := c.RemovePod(gone.Namespace, gone.Name); err != nil {
					t.Fatal(err)
				}
				m.pods = slices.DeleteFunc(m.pods, func(p *v1.Pod) bool { return p == gone })
			case op == 6 && len(m.nodes) > 0:
				p := on(pod(fmt.Sprintf("f%d", nextPod), "1"), m.nodes[r.IntN(len(m.nodes))].Name)
				nextPod++
				if err := c.AddPod(p); err != nil {
					t.Fatal(err)
				}
				m.pods = append(m.pods, p)
			default:
				p := pod(fmt.Sprintf("p%d", nextPod), "500m")
				nextPod++
				res, err := c.Place(context.Background(), p)
				if err == nil {
					m.pods = append(m.pods, on(p.DeepCopy(), res.SuggestedHost))
				}
			}
			if got, want := layout(c.Nodes()), layout(nodeinfo.Build(m.nodes, m.pods)); got != want {
				t.Fatalf("seed %d, step %d:\n got  %s\n want %s", seed, step, got, want)
			}
			for _, ni := range c.Nodes() {
				want := nodeinfo.New(ni.Node(), podsOn(m.pods, ni.Name())...)
				if !reflect.DeepEqual(ni.Requested(), want.Requested()) || !reflect.DeepEqual(ni.NonZeroRequested(), want.NonZeroRequested()) {
					t.Fatalf("seed %d, step %d: %s requests %+v, want %+v", seed, step, ni.Name(), ni.Requested(), want.Requested())
				}
			}
		}
	}
}

func podsOn(pods []*v1.Pod, node string) []*v1.Pod {
	var out []*v1.Pod
	for _, p := range pods {
		if p.Spec.NodeName == node {
			out = append(out, p)
		}
	}
	return out
}

// Readers of the cluster may run while it places pods.
func TestConcurrentReadersWhilePlacing(t *testing.T) {
	t.Parallel()
	c := newCluster(t, testcluster.Nodes(50, testcluster.Basic), nil)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	for range 2 {
		wg.Go(func() {
			for ctx.Err() == nil {
				for _, ni := range c.Nodes() {
					_ = len(ni.Pods())
				}
				_, _ = c.NodeInfo("node-00001")
				_ = c.CheckPod(context.Background(), pod("probe", "1"), "node-00002")
			}
		})
	}
	for i := range 100 {
		if _, err := c.Place(context.Background(), testcluster.Pod(fmt.Sprintf("p%d", i), testcluster.Basic)); err != nil {
			t.Fatal(err)
		}
	}
	cancel()
	wg.Wait()
}

// TestSnapshotsHandedOutNeverChange places pods after a caller took a
// snapshot, which the cluster then brings up to date in place no more:
// the caller's snapshot still holds the cluster as it was.
func TestSnapshotsHandedOutNeverChange(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	c := newCluster(t, []*v1.Node{node("a", "4"), node("b", "4")}, nil)
	if _, err := c.Place(ctx, pod("p0", "1")); err != nil {
		t.Fatal(err)
	}
	taken := c.Snapshot()
	before := slices.Clone(taken.Nodes())
	for i := range 3 {
		if _, err := c.Place(ctx, pod(fmt.Sprint("p", i+1), "1")); err != nil {
			t.Fatal(err)
		}
	}
	if !slices.Equal(taken.Nodes(), before) {
		t.Error("a snapshot handed out changed as pods were placed")
	}
	if got := layout(c.Nodes()); got != layout(c.Snapshot().Nodes()) || strings.Count(got, "p") != 4 {
		t.Errorf("the cluster holds %q, want the four pods", got)
	}
}

func TestExplainReadsTheClusterAsPlacementsLeftIt(t *testing.T) {
	t.Parallel()
	c := newCluster(t, []*v1.Node{node("a", "3"), node("b", "2")}, nil)
	if _, err := c.Place(context.Background(), pod("first", "3")); err != nil {
		t.Fatal(err)
	}
	e, err := c.Explain(context.Background(), pod("second", "3"))
	if err != nil {
		t.Fatal(err)
	}
	var fe *framework.FitError
	if !errors.As(e.Err, &fe) {
		t.Fatalf("decision %v, want a FitError: a holds the first pod, b is too small", e.Err)
	}
	for _, ne := range e.Nodes {
		if ne.Status.Plugin() != "NodeResourcesFit" {
			t.Errorf("%s: %v, want NodeResourcesFit's rejection", ne.Name, ne.Status)
		}
	}
	if _, placed := c.Pod("default", "second"); placed {
		t.Error("Explain committed the pod")
	}
}
