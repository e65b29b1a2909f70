package filter_test

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched/filter"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/nodeinfo"
)

// spreadList is an in-memory lister of one kind.
type spreadList[T any] []T

func (l spreadList[T]) List(labels.Selector) ([]T, error) { return l, nil }

// spreadNode returns a node with labels given as key, value pairs.
func spreadNode(name string, kv ...string) *v1.Node {
	l := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		l[kv[i]] = kv[i+1]
	}
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l}}
}

func taintedSpreadNode(name string, kv ...string) *v1.Node {
	n := spreadNode(name, kv...)
	n.Spec.Taints = []v1.Taint{{Key: "dedicated", Effect: v1.TaintEffectNoSchedule}}
	return n
}

// spreadPods numbers pods so that each has its own name.
var spreadPods atomic.Int64

// spreadPod returns a pod in namespace "ns" labelled app=app, on node
// (if not empty).
func spreadPod(app, node string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("p%d", spreadPods.Add(1)), Namespace: "ns", Labels: map[string]string{"app": app}},
		Spec:       v1.PodSpec{NodeName: node},
	}
}

func inNamespace(p *v1.Pod, ns string) *v1.Pod {
	p.Namespace = ns
	return p
}

func terminating(p *v1.Pod) *v1.Pod {
	p.DeletionTimestamp = &metav1.Time{Time: time.Unix(1, 0)}
	return p
}

func withLabel(p *v1.Pod, k, v string) *v1.Pod {
	p.Labels[k] = v
	return p
}

// spreading returns the incoming pod, labelled app=web, with constraints.
func spreading(cs ...v1.TopologySpreadConstraint) *v1.Pod {
	p := spreadPod("web", "")
	p.Spec.TopologySpreadConstraints = cs
	return p
}

// hardOn is a DoNotSchedule constraint over key selecting app=web.
func hardOn(key string, maxSkew int32) v1.TopologySpreadConstraint {
	return v1.TopologySpreadConstraint{MaxSkew: maxSkew, TopologyKey: key, WhenUnsatisfiable: v1.DoNotSchedule,
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}}
}

func with(c v1.TopologySpreadConstraint, f func(*v1.TopologySpreadConstraint)) v1.TopologySpreadConstraint {
	f(&c)
	return c
}

// runSpread runs PreFilter, then Filter on every node, and describes each
// outcome: "fits", "skew", "label", or the PreFilter status for all.
func runSpread(t *testing.T, pl *filter.PodTopologySpread, pod *v1.Pod, nodes []*v1.Node, pods []*v1.Pod, l fwk.Listers) map[string]string {
	t.Helper()
	infos := nodeinfo.Build(nodes, pods)
	state := fwk.NewCycleState(infos).SetListers(l)
	ctx := context.Background()
	got := map[string]string{}
	if _, s := pl.PreFilter(ctx, state, pod, infos); s != nil {
		got["PreFilter"] = s.Code().String()
		return got
	}
	for _, ni := range infos {
		got[ni.Name()] = describeSpread(t, pl.Filter(ctx, state, pod, ni))
	}
	return got
}

func describeSpread(t *testing.T, s *fwk.Status) string {
	t.Helper()
	switch {
	case s == nil:
		return "fits"
	case s.Code() == fwk.Unschedulable && s.Message() == filter.ErrReasonConstraintsNotMatch && s.Plugin() == "PodTopologySpread":
		return "skew"
	case s.Code() == fwk.UnschedulableAndUnresolvable && s.Message() == filter.ErrReasonNodeLabelNotMatch && s.Plugin() == "PodTopologySpread":
		return "label"
	}
	t.Errorf("unexpected status %v", s)
	return s.String()
}

func TestPodTopologySpreadFilter(t *testing.T) {
	t.Parallel()
	two, three := int32(2), int32(3)
	honor, ignore := v1.NodeInclusionPolicyHonor, v1.NodeInclusionPolicyIgnore
	zones := []*v1.Node{spreadNode("a1", "zone", "a"), spreadNode("b1", "zone", "b")}
	webService := fwk.Listers{Services: spreadList[*v1.Service]{{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"},
		Spec:       v1.ServiceSpec{Selector: map[string]string{"app": "web"}},
	}}}
	webReplicaSet := fwk.Listers{ReplicaSets: spreadList[*appsv1.ReplicaSet]{{
		ObjectMeta: metav1.ObjectMeta{Name: "web-1", Namespace: "ns"},
		Spec:       appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}},
	}}}
	ownedByWebReplicaSet := func(p *v1.Pod) *v1.Pod {
		yes := true
		p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "web-1", Controller: &yes}}
		return p
	}
	hardZoneDefaults := &configv1.PodTopologySpreadArgs{DefaultingType: configv1.ListDefaulting, DefaultConstraints: []v1.TopologySpreadConstraint{
		{MaxSkew: 1, TopologyKey: "zone", WhenUnsatisfiable: v1.DoNotSchedule},
	}}

	tests := []struct {
		name    string
		args    *configv1.PodTopologySpreadArgs
		pod     *v1.Pod
		nodes   []*v1.Node
		pods    []*v1.Pod
		listers fwk.Listers
		want    map[string]string
	}{
		{
			name:  "a pod whose zone already has two more matching pods than the emptiest zone is rejected",
			pod:   spreading(hardOn("zone", 1)),
			nodes: zones,
			pods:  []*v1.Pod{spreadPod("web", "a1"), spreadPod("web", "a1")},
			want:  map[string]string{"a1": "skew", "b1": "fits"},
		},
		{
			name:  "a skew of exactly maxSkew is allowed",
			pod:   spreading(hardOn("zone", 2)),
			nodes: zones,
			pods:  []*v1.Pod{spreadPod("web", "a1")},
			want:  map[string]string{"a1": "fits", "b1": "fits"},
		},
		{
			name:  "a pod that its own selector does not select adds nothing to its domain",
			pod:   withLabel(spreading(hardOn("zone", 1)), "app", "other"),
			nodes: zones,
			pods:  []*v1.Pod{spreadPod("web", "a1")},
			want:  map[string]string{"a1": "fits", "b1": "fits"},
		},
		{
			name:  "pods the selector does not select are not counted",
			pod:   spreading(hardOn("zone", 1)),
			nodes: zones,
			pods:  []*v1.Pod{spreadPod("db", "a1"), spreadPod("db", "a1")},
			want:  map[string]string{"a1": "fits", "b1": "fits"},
		},
		{
			name:  "pods being deleted are not counted",
			pod:   spreading(hardOn("zone", 1)),
			nodes: zones,
			pods:  []*v1.Pod{terminating(spreadPod("web", "a1")), terminating(spreadPod("web", "a1"))},
			want:  map[string]string{"a1": "fits", "b1": "fits"},
		},
		{
			name:  "pods of other namespaces are not counted",
			pod:   spreading(hardOn("zone", 1)),
			nodes: zones,
			pods:  []*v1.Pod{inNamespace(spreadPod("web", "a1"), "other"), inNamespace(spreadPod("web", "a1"), "other")},
			want:  map[string]string{"a1": "fits", "b1": "fits"},
		},
		{
			name:  "a node without the topology key is rejected as unresolvable",
			pod:   spreading(hardOn("zone", 1)),
			nodes: append([]*v1.Node{spreadNode("bare")}, zones...),
			want:  map[string]string{"bare": "label", "a1": "fits", "b1": "fits"},
		},
		{
			name:  "a topology key no node has rejects every node as unresolvable",
			pod:   spreading(hardOn("rack", 1)),
			nodes: zones,
			want:  map[string]string{"a1": "label", "b1": "label"},
		},
		{
			name:  "constraints are checked in order: a skew before a missing label is reported as a skew",
			pod:   spreading(hardOn("zone", 1), hardOn("rack", 1)),
			nodes: []*v1.Node{spreadNode("a1", "zone", "a", "rack", "r"), spreadNode("b1", "zone", "b", "rack", "r"), spreadNode("a2", "zone", "a")},
			pods:  []*v1.Pod{spreadPod("web", "a1"), spreadPod("web", "a1")},
			want:  map[string]string{"a1": "skew", "a2": "skew", "b1": "fits"},
		},
		{
			name:  "a node missing one key leaves its domain of the other key out of the counts",
			pod:   spreading(hardOn("zone", 1), hardOn("host", 5)),
			nodes: []*v1.Node{spreadNode("a1", "zone", "a", "host", "a1"), spreadNode("b1", "zone", "b")},
			pods:  []*v1.Pod{spreadPod("web", "a1")},
			// Zone b has no node with both keys, so zone a is the emptiest.
			want: map[string]string{"a1": "fits", "b1": "label"},
		},
		{
			name:  "hostname spreading compares nodes",
			pod:   spreading(hardOn(v1.LabelHostname, 1)),
			nodes: []*v1.Node{spreadNode("n1", v1.LabelHostname, "n1"), spreadNode("n2", v1.LabelHostname, "n2"), spreadNode("n3", v1.LabelHostname, "n3")},
			pods:  []*v1.Pod{spreadPod("web", "n1"), spreadPod("web", "n2")},
			want:  map[string]string{"n1": "skew", "n2": "skew", "n3": "fits"},
		},
		{
			name:  "with fewer domains than minDomains the global minimum is zero",
			pod:   spreading(with(hardOn("zone", 1), func(c *v1.TopologySpreadConstraint) { c.MinDomains = &three })),
			nodes: zones,
			pods:  []*v1.Pod{spreadPod("web", "a1"), spreadPod("web", "b1")},
			want:  map[string]string{"a1": "skew", "b1": "skew"},
		},
		{
			name:  "with as many domains as minDomains the emptiest domain counts",
			pod:   spreading(with(hardOn("zone", 1), func(c *v1.TopologySpreadConstraint) { c.MinDomains = &two })),
			nodes: zones,
			pods:  []*v1.Pod{spreadPod("web", "a1"), spreadPod("web", "b1")},
			want:  map[string]string{"a1": "fits", "b1": "fits"},
		},
		{
			name:  "maxSkew 0 rejects every node for a pod that selects itself, without panicking",
			pod:   spreading(hardOn("zone", 0)),
			nodes: zones,
			want:  map[string]string{"a1": "skew", "b1": "skew"},
		},
		{
			name: "by default the domains of nodes the pod's node selector rejects are left out",
			pod: func() *v1.Pod {
				p := spreading(hardOn("zone", 1))
				p.Spec.NodeSelector = map[string]string{"pool": "x"}
				return p
			}(),
			nodes: []*v1.Node{spreadNode("a1", "zone", "a", "pool", "x"), spreadNode("b1", "zone", "b", "pool", "y")},
			pods:  []*v1.Pod{spreadPod("web", "a1")},
			want:  map[string]string{"a1": "fits", "b1": "fits"},
		},
		{
			name: "nodeAffinityPolicy Ignore counts the domains of nodes the pod's node selector rejects",
			pod: func() *v1.Pod {
				p := spreading(with(hardOn("zone", 1), func(c *v1.TopologySpreadConstraint) { c.NodeAffinityPolicy = &ignore }))
				p.Spec.NodeSelector = map[string]string{"pool": "x"}
				return p
			}(),
			nodes: []*v1.Node{spreadNode("a1", "zone", "a", "pool", "x"), spreadNode("b1", "zone", "b", "pool", "y")},
			pods:  []*v1.Pod{spreadPod("web", "a1")},
			want:  map[string]string{"a1": "skew", "b1": "fits"},
		},
		{
			name:  "by default the domains of tainted nodes count",
			pod:   spreading(hardOn("zone", 1)),
			nodes: []*v1.Node{spreadNode("a1", "zone", "a"), taintedSpreadNode("b1", "zone", "b")},
			pods:  []*v1.Pod{spreadPod("web", "a1")},
			want:  map[string]string{"a1": "skew", "b1": "fits"},
		},
		{
			name:  "nodeTaintsPolicy Honor leaves out the domains of nodes with untolerated taints",
			pod:   spreading(with(hardOn("zone", 1), func(c *v1.TopologySpreadConstraint) { c.NodeTaintsPolicy = &honor })),
			nodes: []*v1.Node{spreadNode("a1", "zone", "a"), taintedSpreadNode("b1", "zone", "b")},
			pods:  []*v1.Pod{spreadPod("web", "a1")},
			want:  map[string]string{"a1": "fits", "b1": "fits"},
		},
		{
			name: "nodeTaintsPolicy Honor counts tainted nodes whose taints the pod tolerates",
			pod: func() *v1.Pod {
				p := spreading(with(hardOn("zone", 1), func(c *v1.TopologySpreadConstraint) { c.NodeTaintsPolicy = &honor }))
				p.Spec.Tolerations = []v1.Toleration{{Key: "dedicated", Operator: v1.TolerationOpExists}}
				return p
			}(),
			nodes: []*v1.Node{spreadNode("a1", "zone", "a"), taintedSpreadNode("b1", "zone", "b")},
			pods:  []*v1.Pod{spreadPod("web", "a1")},
			want:  map[string]string{"a1": "skew", "b1": "fits"},
		},
		{
			name:  "matchLabelKeys count only the pods sharing the incoming pod's value",
			pod:   withLabel(spreading(with(hardOn("zone", 1), func(c *v1.TopologySpreadConstraint) { c.MatchLabelKeys = []string{"rev"} })), "rev", "2"),
			nodes: zones,
			pods:  []*v1.Pod{withLabel(spreadPod("web", "a1"), "rev", "1"), withLabel(spreadPod("web", "a1"), "rev", "1"), withLabel(spreadPod("web", "b1"), "rev", "2")},
			want:  map[string]string{"a1": "fits", "b1": "skew"},
		},
		{
			name:  "without matchLabelKeys every revision counts",
			pod:   withLabel(spreading(hardOn("zone", 1)), "rev", "2"),
			nodes: zones,
			pods:  []*v1.Pod{withLabel(spreadPod("web", "a1"), "rev", "1"), withLabel(spreadPod("web", "a1"), "rev", "1"), withLabel(spreadPod("web", "b1"), "rev", "2")},
			want:  map[string]string{"a1": "skew", "b1": "fits"},
		},
		{
			name:  "a pod with only ScheduleAnyway constraints is skipped",
			pod:   spreading(with(hardOn("zone", 1), func(c *v1.TopologySpreadConstraint) { c.WhenUnsatisfiable = v1.ScheduleAnyway })),
			nodes: zones,
			want:  map[string]string{"PreFilter": "Skip"},
		},
		{
			name:    "system default constraints are all ScheduleAnyway, so a pod without constraints is skipped",
			pod:     spreading(),
			nodes:   zones,
			listers: webService,
			want:    map[string]string{"PreFilter": "Skip"},
		},
		{
			name:    "hard default constraints take the selector of the Service selecting the pod",
			args:    hardZoneDefaults,
			pod:     spreading(),
			nodes:   zones,
			pods:    []*v1.Pod{spreadPod("web", "a1"), spreadPod("db", "b1"), spreadPod("db", "b1")},
			listers: webService,
			want:    map[string]string{"a1": "skew", "b1": "fits"},
		},
		{
			name:    "hard default constraints take the selector of the pod's ReplicaSet",
			args:    hardZoneDefaults,
			pod:     ownedByWebReplicaSet(spreading()),
			nodes:   zones,
			pods:    []*v1.Pod{spreadPod("web", "a1")},
			listers: webReplicaSet,
			want:    map[string]string{"a1": "skew", "b1": "fits"},
		},
		{
			name:  "hard default constraints are dropped for a pod nothing selects",
			args:  hardZoneDefaults,
			pod:   spreading(),
			nodes: zones,
			pods:  []*v1.Pod{spreadPod("web", "a1")},
			want:  map[string]string{"PreFilter": "Skip"},
		},
		{
			name: "a selector that does not parse is an error",
			pod: spreading(with(hardOn("zone", 1), func(c *v1.TopologySpreadConstraint) {
				c.LabelSelector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Near"}}
			})),
			nodes: zones,
			want:  map[string]string{"PreFilter": "Error"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pl, err := filter.NewPodTopologySpread(tc.args)
			if err != nil {
				t.Fatal(err)
			}
			got := runSpread(t, pl, tc.pod, tc.nodes, tc.pods, tc.listers)
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestPodTopologySpreadPreFilterErrorIsWordedAsKubeScheduler(t *testing.T) {
	t.Parallel()
	pod := spreading(with(hardOn("zone", 1), func(c *v1.TopologySpreadConstraint) {
		c.LabelSelector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Near"}}
	}))
	_, s := (&filter.PodTopologySpread{}).PreFilter(context.Background(), nil, pod, nil)
	if s.Code() != fwk.Error || !strings.HasPrefix(s.Message(), "get constraints from pod: obtaining pod's hard topology spread constraints: ") {
		t.Errorf("got %v", s)
	}
}

func TestPodTopologySpreadAddAndRemovePod(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pl := &filter.PodTopologySpread{}
	pod := spreading(hardOn("zone", 1))
	infos := nodeinfo.Build([]*v1.Node{spreadNode("a1", "zone", "a"), spreadNode("b1", "zone", "b")}, []*v1.Pod{spreadPod("web", "a1"), spreadPod("web", "b1")})
	state := fwk.NewCycleState(infos)
	if _, s := pl.PreFilter(ctx, state, pod, infos); s != nil {
		t.Fatal(s)
	}
	filterAll := func(st *fwk.CycleState) string {
		return describeSpread(t, pl.Filter(ctx, st, pod, infos[0])) + " " + describeSpread(t, pl.Filter(ctx, st, pod, infos[1]))
	}
	if got := filterAll(state); got != "fits fits" {
		t.Fatalf("before any change got %q", got)
	}

	added := state.Clone()
	pl.AddPod(ctx, added, pod, nodeinfo.NewPodInfo(spreadPod("web", "a1")), infos[0])
	if got := filterAll(added); got != "skew fits" {
		t.Errorf("with a second web pod in zone a got %q, want %q", got, "skew fits")
	}
	pl.AddPod(ctx, added, pod, nodeinfo.NewPodInfo(inNamespace(spreadPod("web", "b1"), "other")), infos[1])
	if got := filterAll(added); got != "skew fits" {
		t.Errorf("a pod of another namespace changed the outcome to %q", got)
	}
	if got := filterAll(state); got != "fits fits" {
		t.Errorf("updating the clone changed the original to %q", got)
	}

	removed := state.Clone()
	pl.RemovePod(ctx, removed, pod, infos[0].Pods()[0], infos[0])
	pl.AddPod(ctx, removed, pod, nodeinfo.NewPodInfo(spreadPod("web", "b1")), infos[1])
	// Zone a now holds none and zone b two.
	if got := filterAll(removed); got != "fits skew" {
		t.Errorf("after moving the pod to zone b got %q, want %q", got, "fits skew")
	}

	// Without counts (PreFilter skipped the pod) there is nothing to update.
	if s := pl.AddPod(ctx, fwk.NewCycleState(infos), pod, infos[0].Pods()[0], infos[0]); s != nil {
		t.Errorf("AddPod without PreFilter state: %v", s)
	}
}

func TestPodTopologySpreadFilterWithoutStateCountsOnTheSpot(t *testing.T) {
	t.Parallel()
	pl := &filter.PodTopologySpread{}
	node := nodeinfo.New(spreadNode("a1", "zone", "a"), spreadPod("web", "a1"), spreadPod("web", "a1"))
	// Alone, the node's zone is the emptiest one.
	if s := pl.Filter(context.Background(), nil, spreading(hardOn("zone", 1)), node); s != nil {
		t.Errorf("got %v, want a fit", s)
	}
	if s := pl.Filter(context.Background(), nil, spreading(hardOn("rack", 1)), node); describeSpread(t, s) != "label" {
		t.Errorf("got %v, want a missing label", s)
	}
	if s := pl.Filter(context.Background(), nil, spreading(), nodeinfo.New(nil)); s.Code() != fwk.Error {
		t.Errorf("a NodeInfo without a node: got %v, want Error", s)
	}
}

func TestNewPodTopologySpreadRejectsBadArgs(t *testing.T) {
	t.Parallel()
	_, err := filter.NewPodTopologySpread(&configv1.PodTopologySpreadArgs{
		DefaultingType:     configv1.ListDefaulting,
		DefaultConstraints: []v1.TopologySpreadConstraint{{MaxSkew: 0, TopologyKey: "zone", WhenUnsatisfiable: v1.DoNotSchedule}},
	})
	if err == nil || !strings.Contains(err.Error(), "defaultConstraints[0].maxSkew") {
		t.Errorf("got %v, want an error naming defaultConstraints[0].maxSkew", err)
	}
	if _, err := filter.NewPodTopologySpread(&configv1.PodTopologySpreadArgs{DefaultingType: "Zonal"}); err == nil {
		t.Error("an unknown defaulting type was accepted")
	}
}

// spreadCluster is n nodes over 3 zones with a web pod on every other node.
func spreadCluster(n int) ([]*v1.Node, []*v1.Pod) {
	var nodes []*v1.Node
	var pods []*v1.Pod
	for i := range n {
		name := fmt.Sprintf("n%d", i)
		nodes = append(nodes, spreadNode(name, "zone", fmt.Sprint(i%3), v1.LabelHostname, name))
		if i%2 == 0 {
			pods = append(pods, spreadPod("web", name), spreadPod("db", name))
		}
	}
	return nodes, pods
}

func TestPodTopologySpreadFilterDoesNotAllocate(t *testing.T) {
	nodes, pods := spreadCluster(30)
	infos := nodeinfo.Build(nodes, pods)
	pl := &filter.PodTopologySpread{}
	pod := spreading(hardOn("zone", 1), hardOn(v1.LabelHostname, 1))
	state := fwk.NewCycleState(infos)
	if _, s := pl.PreFilter(context.Background(), state, pod, infos); s != nil {
		t.Fatal(s)
	}
	allocs := testing.AllocsPerRun(100, func() {
		for _, ni := range infos {
			pl.Filter(context.Background(), state, pod, ni)
		}
	})
	if allocs != 0 {
		t.Errorf("Filter allocates %v times per run over %d nodes", allocs, len(infos))
	}
}

func BenchmarkPodTopologySpread(b *testing.B) {
	for _, n := range []int{100, 5000} {
		nodes, pods := spreadCluster(n)
		infos := nodeinfo.Build(nodes, pods)
		pl := &filter.PodTopologySpread{}
		pod := spreading(hardOn("zone", 1), hardOn(v1.LabelHostname, 1))
		ctx := context.Background()
		b.Run(fmt.Sprintf("%dnodes/PreFilter", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, s := pl.PreFilter(ctx, fwk.NewCycleState(infos), pod, infos); s != nil {
					b.Fatal(s)
				}
			}
		})
		state := fwk.NewCycleState(infos)
		if _, s := pl.PreFilter(ctx, state, pod, infos); s != nil {
			b.Fatal(s)
		}
		b.Run(fmt.Sprintf("%dnodes/Filter", n), func(b *testing.B) {
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				pl.Filter(ctx, state, pod, infos[i%len(infos)])
				i++
			}
		})
	}
}

// PodTopologySpread keeps web pods within one of each other across zones.
func ExamplePodTopologySpread() {
	nodes := []*v1.Node{spreadNode("a1", "zone", "a"), spreadNode("b1", "zone", "b")}
	running := []*v1.Pod{spreadPod("web", "a1")}
	infos := nodeinfo.Build(nodes, running)

	pod := spreading(v1.TopologySpreadConstraint{
		MaxSkew: 1, TopologyKey: "zone", WhenUnsatisfiable: v1.DoNotSchedule,
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
	})
	pl := &filter.PodTopologySpread{}
	ctx := context.Background()
	state := fwk.NewCycleState(infos)
	if _, s := pl.PreFilter(ctx, state, pod, infos); s != nil {
		fmt.Println(s)
		return
	}
	for _, ni := range infos {
		fmt.Printf("%s: %v\n", ni.Name(), pl.Filter(ctx, state, pod, ni).Message())
	}
	// Output:
	// a1: node(s) didn't match pod topology spread constraints
	// b1:
}
