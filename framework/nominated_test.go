package framework_test

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubesched/kubesched"
	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/nodeinfo"
)

func cpuNode(name, cpu string) *v1.Node {
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1.LabelHostname: name}},
		Status: v1.NodeStatus{Allocatable: v1.ResourceList{
			v1.ResourceCPU: resource.MustParse(cpu), v1.ResourceMemory: resource.MustParse("4Gi"), v1.ResourcePods: resource.MustParse("10"),
		}},
	}
}

// prioPod is a pending pod with a priority and a cpu request.
func prioPod(name string, priority int32, cpu string, labels map[string]string) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name), Labels: labels},
		Spec: v1.PodSpec{Priority: &priority, Containers: []v1.Container{{
			Name: "c", Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse(cpu)}},
		}}},
	}
}

func withAffinity(p *v1.Pod, required bool, anti bool) *v1.Pod {
	term := []v1.PodAffinityTerm{{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}, TopologyKey: v1.LabelHostname}}
	switch {
	case anti:
		p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: term}}
	case required:
		p.Spec.Affinity = &v1.Affinity{PodAffinity: &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: term}}
	}
	return p
}

var web = map[string]string{"app": "web"}

// withAntiAffinityTo gives p required anti-affinity to pods labelled app=app.
func withAntiAffinityTo(p *v1.Pod, app string) *v1.Pod {
	p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{
		{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}, TopologyKey: v1.LabelHostname},
	}}}
	return p
}

func TestNominatedPodsKeepTheirRoom(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		pod       *v1.Pod
		nominated []*v1.Pod // all nominated to node "a"
		running   []*v1.Pod // bound to node "a"
		// wantA is node a's rejection reason, or "" when a is feasible.
		wantA string
	}{
		{
			name:      "a higher-priority nominated pod keeps the room preemption made",
			pod:       prioPod("p", 0, "600m", nil),
			nominated: []*v1.Pod{prioPod("n", 10, "600m", nil)},
			wantA:     "Insufficient cpu",
		},
		{
			name:      "so does one of equal priority",
			pod:       prioPod("p", 5, "600m", nil),
			nominated: []*v1.Pod{prioPod("n", 5, "600m", nil)},
			wantA:     "Insufficient cpu",
		},
		{
			name:      "a lower-priority nomination gives way",
			pod:       prioPod("p", 5, "600m", nil),
			nominated: []*v1.Pod{prioPod("n", 4, "600m", nil)},
		},
		{
			name:      "the pod's own nomination does not count against it",
			pod:       prioPod("p", 5, "600m", nil),
			nominated: []*v1.Pod{prioPod("p", 5, "600m", nil)},
		},
		{
			name:      "a nominated pod's anti-affinity keeps the pod away",
			pod:       withAntiAffinityTo(prioPod("p", 0, "100m", web), "db"),
			nominated: []*v1.Pod{withAffinity(prioPod("n", 10, "100m", nil), false, true)},
			wantA:     "node(s) didn't satisfy existing pods anti-affinity rules",
		},
		{
			name:      "unless nothing else makes InterPodAffinity look, as in kube-scheduler: its PreFilter skips it",
			pod:       prioPod("p", 0, "100m", web),
			nominated: []*v1.Pod{withAffinity(prioPod("n", 10, "100m", nil), false, true)},
		},
		{
			name:      "affinity to a nominated pod alone is not enough: it must hold without it too",
			pod:       withAffinity(prioPod("p", 0, "100m", nil), true, false),
			nominated: []*v1.Pod{prioPod("n", 10, "100m", web)},
			running:   []*v1.Pod{withNode(prioPod("web-b", 0, "100m", web), "b")},
			wantA:     "node(s) didn't match pod affinity rules",
		},
		{
			name:      "affinity to a running pod holds either way",
			pod:       withAffinity(prioPod("p", 0, "100m", nil), true, false),
			nominated: []*v1.Pod{prioPod("n", 10, "100m", web)},
			running:   []*v1.Pod{withNode(prioPod("web-a", 0, "100m", web), "a")},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			noms := framework.NewNominations()
			for _, p := range tc.nominated {
				noms.Add(p, "a")
			}
			f, err := kubesched.DefaultFramework(framework.WithNominator(noms), framework.WithPercentageOfNodesToScore(100))
			if err != nil {
				t.Fatal(err)
			}
			infos := nodeinfo.Build([]*v1.Node{cpuNode("a", "1"), cpuNode("b", "1")}, tc.running)
			res, err := f.Schedule(context.Background(), tc.pod, infos)
			var fitErr *framework.FitError
			var d framework.Diagnosis
			switch {
			case errors.As(err, &fitErr):
				d = fitErr.Diagnosis
			case err != nil:
				t.Fatal(err)
			default:
				d = res.Diagnosis
			}
			got := ""
			if s := d.NodeStatus("a"); s != nil {
				got = strings.Join(s.Reasons(), ", ")
			}
			if got != tc.wantA {
				t.Errorf("node a: %q, want %q", got, tc.wantA)
			}
		})
	}
}

func withNode(p *v1.Pod, node string) *v1.Pod {
	p.Spec.NodeName = node
	return p
}

// extensionSpy is a PreFilter, Filter and PreFilterExtensions plugin that
// counts Filter calls per node and AddPod calls, and can fail AddPod or
// skip its Filter.
type extensionSpy struct {
	skip    bool
	failAdd bool
	mu      sync.Mutex
	filters map[string]int
	adds    []string
}

func (*extensionSpy) Name() string { return "Spy" }

func (s *extensionSpy) PreFilter(context.Context, *fwk.CycleState, *v1.Pod, []*nodeinfo.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	if s.skip {
		return nil, fwk.NewStatus(fwk.Skip)
	}
	return nil, nil
}

func (s *extensionSpy) Filter(_ context.Context, _ *fwk.CycleState, _ *v1.Pod, ni *nodeinfo.NodeInfo) *fwk.Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.filters[ni.Name()]++
	return nil
}

func (s *extensionSpy) AddPod(_ context.Context, _ *fwk.CycleState, _ *v1.Pod, podToAdd *nodeinfo.PodInfo, node *nodeinfo.NodeInfo) *fwk.Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.adds = append(s.adds, podToAdd.Pod.Name+"@"+node.Name())
	if s.failAdd {
		return fwk.AsStatus(errors.New("spy failed"))
	}
	return nil
}

func (*extensionSpy) RemovePod(context.Context, *fwk.CycleState, *v1.Pod, *nodeinfo.PodInfo, *nodeinfo.NodeInfo) *fwk.Status {
	return nil
}

var _ fwk.PreFilterExtensions = (*extensionSpy)(nil)

// preFilterOnlySpy is an extensionSpy without a Filter: a PreFilter plugin
// with extensions only.
type preFilterOnlySpy struct{ spy *extensionSpy }

func (p preFilterOnlySpy) Name() string { return p.spy.Name() }

func (p preFilterOnlySpy) PreFilter(ctx context.Context, state *fwk.CycleState, pod *v1.Pod, nodes []*nodeinfo.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	return p.spy.PreFilter(ctx, state, pod, nodes)
}

func (p preFilterOnlySpy) AddPod(ctx context.Context, state *fwk.CycleState, pod *v1.Pod, podToAdd *nodeinfo.PodInfo, node *nodeinfo.NodeInfo) *fwk.Status {
	return p.spy.AddPod(ctx, state, pod, podToAdd, node)
}

func (p preFilterOnlySpy) RemovePod(ctx context.Context, state *fwk.CycleState, pod *v1.Pod, podToRemove *nodeinfo.PodInfo, node *nodeinfo.NodeInfo) *fwk.Status {
	return p.spy.RemovePod(ctx, state, pod, podToRemove, node)
}

func TestTwoPassFilteringOnlyWhereNominatedPodsCount(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		spy         *extensionSpy
		noFilter    bool // the spy is a PreFilter plugin only
		nominator   bool
		nominated   []*v1.Pod // nominated to node a
		wantFilters map[string]int
		wantAdds    []string
		wantErr     string
	}{
		{
			name:        "without a nominator every node is filtered once",
			spy:         &extensionSpy{},
			wantFilters: map[string]int{"a": 1, "b": 1},
		},
		{
			name:        "with no nominations every node is filtered once",
			spy:         &extensionSpy{},
			nominator:   true,
			wantFilters: map[string]int{"a": 1, "b": 1},
		},
		{
			name:        "the node with a nomination is filtered twice, the others once",
			spy:         &extensionSpy{},
			nominator:   true,
			nominated:   []*v1.Pod{prioPod("n1", 1, "100m", nil), prioPod("n2", 1, "100m", nil)},
			wantFilters: map[string]int{"a": 2, "b": 1},
			wantAdds:    []string{"n1@a", "n2@a"},
		},
		{
			name:        "lower-priority nominations are not added",
			spy:         &extensionSpy{},
			nominator:   true,
			nominated:   []*v1.Pod{prioPod("low", -1, "100m", nil)},
			wantFilters: map[string]int{"a": 1, "b": 1},
		},
		{
			name:        "a plugin whose Filter PreFilter skipped is not told about nominated pods",
			spy:         &extensionSpy{skip: true},
			nominator:   true,
			nominated:   []*v1.Pod{prioPod("n1", 1, "100m", nil)},
			wantFilters: map[string]int{},
		},
		{
			name:      "a PreFilter plugin without a Filter is told about nominated pods",
			spy:       &extensionSpy{},
			noFilter:  true,
			nominator: true,
			nominated: []*v1.Pod{prioPod("n1", 1, "100m", nil)},
			wantAdds:  []string{"n1@a"},
		},
		{
			name:      "a PreFilter plugin without a Filter that skipped is not told about nominated pods",
			spy:       &extensionSpy{skip: true},
			noFilter:  true,
			nominator: true,
			nominated: []*v1.Pod{prioPod("n1", 1, "100m", nil)},
		},
		{
			name:      "an AddPod failure fails the cycle",
			spy:       &extensionSpy{failAdd: true},
			nominator: true,
			nominated: []*v1.Pod{prioPod("n1", 1, "100m", nil)},
			wantAdds:  []string{"n1@a"},
			wantErr:   `running AddPod on PreFilter plugin "Spy": spy failed`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			tc.spy.filters = map[string]int{}
			opts := []framework.Option{framework.WithPlugin(tc.spy, 0)}
			if tc.noFilter {
				opts = []framework.Option{framework.WithPlugin(preFilterOnlySpy{tc.spy}, 0)}
			}
			if tc.nominator {
				noms := framework.NewNominations()
				for _, p := range tc.nominated {
					noms.Add(p, "a")
				}
				opts = append(opts, framework.WithNominator(noms))
			}
			f := mustNew(t, opts...)
			infos := nodeinfo.Build([]*v1.Node{cpuNode("a", "1"), cpuNode("b", "1")}, nil)
			_, err := f.Schedule(context.Background(), prioPod("p", 0, "100m", nil), infos)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Errorf("error = %v, want %q", err, tc.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if tc.wantErr == "" && !tc.noFilter && !maps.Equal(tc.spy.filters, tc.wantFilters) {
				t.Errorf("Filter calls = %v, want %v", tc.spy.filters, tc.wantFilters)
			}
			slices.Sort(tc.spy.adds)
			if !slices.Equal(tc.spy.adds, tc.wantAdds) {
				t.Errorf("AddPod calls = %v, want %v", tc.spy.adds, tc.wantAdds)
			}
		})
	}
}

func TestWithNominatorRejectsNil(t *testing.T) {
	t.Parallel()
	if _, err := framework.New(framework.WithNominator(nil)); err == nil {
		t.Error("New accepted a nil nominator")
	}
}

func nominatedNames(n *framework.Nominations, node string) []string {
	var out []string
	for _, pi := range n.NominatedPodsForNode(node) {
		out = append(out, pi.Pod.Name)
	}
	return out
}

func TestNominations(t *testing.T) {
	t.Parallel()
	nominatedTo := func(p *v1.Pod, node string) *v1.Pod {
		p = p.DeepCopy()
		p.Status.NominatedNodeName = node
		return p
	}
	p1, p2 := prioPod("p1", 0, "1", nil), prioPod("p2", 0, "1", nil)
	for _, tc := range []struct {
		name    string
		changes func(n *framework.Nominations)
		want    map[string][]string
	}{
		{
			name:    "pods are listed per node in the order nominated",
			changes: func(n *framework.Nominations) { n.Add(p2, "a"); n.Add(p1, "a") },
			want:    map[string][]string{"a": {"p2", "p1"}},
		},
		{
			name:    "a new nomination replaces the old",
			changes: func(n *framework.Nominations) { n.Add(p1, "a"); n.Add(p1, "b") },
			want:    map[string][]string{"b": {"p1"}},
		},
		{
			name:    "an empty node name takes status.nominatedNodeName",
			changes: func(n *framework.Nominations) { n.Add(nominatedTo(p1, "c"), "") },
			want:    map[string][]string{"c": {"p1"}},
		},
		{
			name:    "a bound pod is not nominated",
			changes: func(n *framework.Nominations) { n.Add(withNode(p1.DeepCopy(), "x"), "a") },
			want:    map[string][]string{},
		},
		{
			name:    "an update without nominated node names keeps the nomination",
			changes: func(n *framework.Nominations) { n.Add(p1, "a"); n.Update(p1, p1.DeepCopy()) },
			want:    map[string][]string{"a": {"p1"}},
		},
		{
			name: "an update naming a node moves the nomination there",
			changes: func(n *framework.Nominations) {
				n.Add(nominatedTo(p1, "a"), "")
				n.Update(nominatedTo(p1, "a"), nominatedTo(p1, "b"))
			},
			want: map[string][]string{"b": {"p1"}},
		},
		{
			name: "an update clearing the node name drops the nomination",
			changes: func(n *framework.Nominations) {
				n.Add(nominatedTo(p1, "a"), "")
				n.Update(nominatedTo(p1, "a"), p1)
			},
			want: map[string][]string{},
		},
		{
			name: "delete drops it, and nil pods are ignored",
			changes: func(n *framework.Nominations) {
				n.Add(p1, "a")
				n.Add(p2, "a")
				n.Delete(p1)
				n.Add(nil, "a")
				n.Delete(nil)
				n.Update(nil, p1)
			},
			want: map[string][]string{"a": {"p2"}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			n := framework.NewNominations()
			tc.changes(n)
			all := n.NominatedPods()
			if len(all) != len(tc.want) {
				t.Errorf("nominations on %d nodes, want %v", len(all), tc.want)
			}
			for node, want := range tc.want {
				if got := nominatedNames(n, node); !slices.Equal(got, want) {
					t.Errorf("nominated to %s: %v, want %v", node, got, want)
				}
				for _, name := range want {
					if got := n.NominatedNodeName(prioPod(name, 0, "1", nil)); got != node {
						t.Errorf("NominatedNodeName(%s) = %q, want %q", name, got, node)
					}
				}
			}
		})
	}
}

func TestNominationsHandsOutVersionsThatNeverChange(t *testing.T) {
	t.Parallel()
	n := framework.NewNominations()
	n.Add(prioPod("p1", 0, "1", nil), "a")
	before := n.NominatedPods()
	n.Add(prioPod("p2", 0, "1", nil), "a")
	n.Delete(prioPod("p1", 0, "1", nil))
	if got := before["a"]; len(got) != 1 || got[0].Pod.Name != "p1" {
		t.Errorf("an earlier version changed: %v", got)
	}
	if got := nominatedNames(n, "a"); !slices.Equal(got, []string{"p2"}) {
		t.Errorf("current version = %v, want [p2]", got)
	}
}
