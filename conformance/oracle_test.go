package conformance

import (
	"bytes"
	"context"
	"reflect"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

func node(name string, milliCPU int64, taints ...v1.Taint) *v1.Node {
	allocatable := v1.ResourceList{
		v1.ResourceCPU:    *resource.NewMilliQuantity(milliCPU, resource.DecimalSI),
		v1.ResourceMemory: resource.MustParse("8Gi"),
		v1.ResourcePods:   resource.MustParse("110"),
	}
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1.LabelHostname: name}},
		Spec:       v1.NodeSpec{Taints: taints},
		Status:     v1.NodeStatus{Allocatable: allocatable, Capacity: allocatable},
	}
}

func podRequesting(name string, milliCPU int64) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: metav1.NamespaceDefault, UID: types.UID("uid-" + name)},
		Spec: v1.PodSpec{Containers: []v1.Container{{
			Name:      "c",
			Image:     "nginx:1.25",
			Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: *resource.NewMilliQuantity(milliCPU, resource.DecimalSI)}},
		}}},
	}
}

func boundTo(p *v1.Pod, nodeName string) *v1.Pod {
	p.Spec.NodeName = nodeName
	return p
}

func withMatchFieldsName(p *v1.Pod, nodeName string) *v1.Pod {
	ensureNodeAffinity(p).RequiredDuringSchedulingIgnoredDuringExecution = &v1.NodeSelector{
		NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchFields: []v1.NodeSelectorRequirement{{
			Key: metav1.ObjectNameField, Operator: v1.NodeSelectorOpIn, Values: []string{nodeName},
		}}}},
	}
	return p
}

func withConflictingMatchFields(p *v1.Pod, a, b string) *v1.Pod {
	ensureNodeAffinity(p).RequiredDuringSchedulingIgnoredDuringExecution = &v1.NodeSelector{
		NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchFields: []v1.NodeSelectorRequirement{
			{Key: metav1.ObjectNameField, Operator: v1.NodeSelectorOpIn, Values: []string{a}},
			{Key: metav1.ObjectNameField, Operator: v1.NodeSelectorOpIn, Values: []string{b}},
		}}},
	}
	return p
}

func nominatedTo(p *v1.Pod, nodeName string) *v1.Pod {
	p.Status.NominatedNodeName = nodeName
	return p
}

var dedicated = v1.Taint{Key: "dedicated", Value: "a", Effect: v1.TaintEffectNoSchedule}

// TestOracle pins down what the oracle reports for hand-built clusters
// whose upstream verdict is known, so that a disagreement in the
// differential test can be trusted to be kubesched's.
func TestOracle(t *testing.T) {
	linkedOnly(t)
	t.Parallel()
	tests := []struct {
		name  string
		nodes []*v1.Node
		pods  []*v1.Pod
		pod   *v1.Pod
		want  OracleResult
	}{
		{
			name:  "a tainted node is rejected by TaintToleration and the other is placed without scoring",
			nodes: []*v1.Node{node("tainted", 4000, dedicated), node("plain", 4000)},
			pod:   podRequesting("p", 100),
			want: OracleResult{
				Nodes: map[string]NodeOutcome{
					"tainted": {Plugin: "TaintToleration", Code: "UnschedulableAndUnresolvable", Reasons: []string{"node(s) had untolerated taint(s)"}},
					"plain":   {Feasible: true},
				},
				TopNodes:             []string{"plain"},
				UnschedulablePlugins: []string{"TaintToleration"},
				FeasibleNodes:        1,
				EvaluatedNodes:       2,
			},
		},
		{
			name:  "a pod that fits nowhere gets upstream's histogram of reasons",
			nodes: []*v1.Node{node("tainted", 4000, dedicated), node("small", 500), node("busy", 1000)},
			pods:  []*v1.Pod{boundTo(podRequesting("running", 800), "busy")},
			pod:   podRequesting("p", 600),
			want: OracleResult{
				Nodes: map[string]NodeOutcome{
					"tainted": {Plugin: "TaintToleration", Code: "UnschedulableAndUnresolvable", Reasons: []string{"node(s) had untolerated taint(s)"}},
					"small":   {Plugin: "NodeResourcesFit", Code: "UnschedulableAndUnresolvable", Reasons: []string{"Insufficient cpu"}},
					"busy":    {Plugin: "NodeResourcesFit", Code: "Unschedulable", Reasons: []string{"Insufficient cpu"}},
				},
				FitErrorMessage:      "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu.",
				UnschedulablePlugins: []string{"NodeResourcesFit", "TaintToleration"},
			},
		},
		{
			name:  "matchFields on metadata.name narrows the nodes in PreFilter, rejecting the rest without a plugin",
			nodes: []*v1.Node{node("a", 4000), node("b", 4000)},
			pod:   withMatchFieldsName(podRequesting("p", 100), "b"),
			want: OracleResult{
				Nodes: map[string]NodeOutcome{
					"a": {Code: "UnschedulableAndUnresolvable", Reasons: []string{"node(s) didn't satisfy plugin(s) [NodeAffinity]"}},
					"b": {Feasible: true},
				},
				TopNodes:             []string{"b"},
				UnschedulablePlugins: []string{"NodeAffinity"},
				// Nodes excluded by a PreFilterResult are not evaluated.
				FeasibleNodes:  1,
				EvaluatedNodes: 1,
			},
		},
		{
			name:  "matchFields naming a missing node leaves no candidate, which upstream reports per node",
			nodes: []*v1.Node{node("a", 4000), node("b", 4000)},
			pod:   withMatchFieldsName(podRequesting("p", 100), "gone"),
			want: OracleResult{
				Nodes: map[string]NodeOutcome{
					"a": {Code: "UnschedulableAndUnresolvable", Reasons: []string{"node(s) didn't satisfy plugin(s) [NodeAffinity]"}},
					"b": {Code: "UnschedulableAndUnresolvable", Reasons: []string{"node(s) didn't satisfy plugin(s) [NodeAffinity]"}},
				},
				FitErrorMessage:      "0/2 nodes are available: 2 node(s) didn't satisfy plugin(s) [NodeAffinity].",
				UnschedulablePlugins: []string{"NodeAffinity"},
			},
		},
		{
			name:  "matchFields naming two nodes in one term is rejected by NodeAffinity's PreFilter on every node",
			nodes: []*v1.Node{node("a", 4000), node("b", 4000)},
			pod:   withConflictingMatchFields(podRequesting("p", 100), "a", "b"),
			want: OracleResult{
				Nodes: map[string]NodeOutcome{
					"a": {Plugin: "NodeAffinity", Code: "UnschedulableAndUnresolvable", Reasons: []string{"pod affinity terms conflict"}},
					"b": {Plugin: "NodeAffinity", Code: "UnschedulableAndUnresolvable", Reasons: []string{"pod affinity terms conflict"}},
				},
				FitErrorMessage:      "0/2 nodes are available: pod affinity terms conflict.",
				UnschedulablePlugins: []string{"NodeAffinity"},
			},
		},
		{
			name:  "a nominated node that fits is taken without evaluating the others",
			nodes: []*v1.Node{node("empty", 4000), node("nominated", 4000, v1.Taint{Key: "spot", Effect: v1.TaintEffectPreferNoSchedule})},
			pod:   nominatedTo(podRequesting("p", 100), "nominated"),
			want: OracleResult{
				Nodes:          map[string]NodeOutcome{"nominated": {Feasible: true}},
				TopNodes:       []string{"nominated"},
				FeasibleNodes:  1,
				EvaluatedNodes: 1,
			},
		},
		{
			name:  "a nominated node that does not fit is evaluated again with the others",
			nodes: []*v1.Node{node("small", 500), node("nominated", 1000, dedicated), node("other", 4000)},
			pod:   nominatedTo(podRequesting("p", 1000), "nominated"),
			want: OracleResult{
				Nodes: map[string]NodeOutcome{
					"small":     {Plugin: "NodeResourcesFit", Code: "UnschedulableAndUnresolvable", Reasons: []string{"Insufficient cpu"}},
					"nominated": {Plugin: "TaintToleration", Code: "UnschedulableAndUnresolvable", Reasons: []string{"node(s) had untolerated taint(s)"}},
					"other":     {Feasible: true},
				},
				TopNodes:             []string{"other"},
				UnschedulablePlugins: []string{"NodeResourcesFit", "TaintToleration"},
				FeasibleNodes:        1,
				EvaluatedNodes:       3,
			},
		},
		{
			name:  "the emptier of two nodes wins on NodeResourcesFit's least-allocated score",
			nodes: []*v1.Node{node("empty", 4000), node("half", 4000)},
			pods:  []*v1.Pod{boundTo(podRequesting("running", 2000), "half")},
			pod:   podRequesting("p", 1000),
			want: OracleResult{
				Nodes: map[string]NodeOutcome{
					// NodeResourcesFit: free cpu 3000/4000 and memory (8Gi-200Mi)/8Gi
					// (a pod without a memory request counts as 200Mi), averaged.
					// BalancedAllocation scores the change in balance: 50 +
					// (50 + 87 with the pod - 100 without)/2. NodeAffinity and
					// PodTopologySpread have nothing to score and are skipped;
					// DynamicResources, which has no PreScore, scores 0, and so
					// does VolumeBinding (v1.37) for a pod without volumes.
					"empty": {Feasible: true, Scores: map[string]int64{"NodeResourcesFit": 86, "NodeResourcesBalancedAllocation": 68, "TaintToleration": 300, "ImageLocality": 0, "DynamicResources": 0, "VolumeBinding": 0}, Total: 454},
					// cpu 1000/4000 and memory (8Gi-400Mi)/8Gi free; balance 50 + (50 + 62 - 75)/2.
					"half": {Feasible: true, Scores: map[string]int64{"NodeResourcesFit": 60, "NodeResourcesBalancedAllocation": 68, "TaintToleration": 300, "ImageLocality": 0, "DynamicResources": 0, "VolumeBinding": 0}, Total: 428},
				},
				TopNodes:       []string{"empty"},
				Scored:         true,
				FeasibleNodes:  2,
				EvaluatedNodes: 2,
			},
		},
	}
	oracle := testOracle
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := oracle.Run(context.Background(), tc.nodes, tc.pods, tc.pod)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if !reflect.DeepEqual(*got, tc.want) {
				t.Errorf("Run returned\n%+v\nwant\n%+v", *got, tc.want)
			}
		})
	}
}

// TestOracleRejectsAnEmptyCluster: upstream fails before any plugin runs
// when there are no nodes, so Run returns an error rather than a result.
func TestOracleRejectsAnEmptyCluster(t *testing.T) {
	linkedOnly(t)
	t.Parallel()
	if _, err := testOracle.Run(context.Background(), nil, nil, podRequesting("p", 1)); err == nil {
		t.Error("Run with no nodes returned no error")
	}
}

// TestGenerateIsDeterministic: a failure is re-run by its seed, so a seed
// must always give the same scenario, with or without the affinity and
// spreading generators. Those draw after the rest, so the nodes are the
// same either way.
func TestGenerateIsDeterministic(t *testing.T) {
	t.Parallel()
	for seed := range uint64(20) {
		for _, affinityAndSpread := range []bool{false, true} {
			a, b := generate(seed, affinityAndSpread), generate(seed, affinityAndSpread)
			if !equality.Semantic.DeepEqual(a, b) {
				t.Fatalf("generate(%d, %v) differs between calls", seed, affinityAndSpread)
			}
		}
		if !equality.Semantic.DeepEqual(generate(seed, false).Nodes, generate(seed, true).Nodes) {
			t.Fatalf("generate(%d, ...) has other nodes with affinity and spreading", seed)
		}
		if g := generate(seed, false); len(g.Objects) > 0 {
			t.Fatalf("generate(%d, false) has %d objects", seed, len(g.Objects))
		}
	}
}

// TestGeneratedPodsAreBoundToGeneratedNodes: the oracle ignores pods bound
// to unknown nodes, so a generator bug there would hide pods from one side.
func TestGeneratedPodsAreBoundToGeneratedNodes(t *testing.T) {
	t.Parallel()
	for seed := range uint64(200) {
		s := Generate(seed)
		names := map[string]bool{}
		for _, n := range s.Nodes {
			names[n.Name] = true
		}
		for _, p := range s.Pods {
			if p.Spec.NodeName == "" && names[p.Status.NominatedNodeName] {
				// A pending pod the preemption generators nominate.
				continue
			}
			if !names[p.Spec.NodeName] {
				t.Fatalf("seed %d: pod %s is bound to unknown node %q", seed, p.Name, p.Spec.NodeName)
			}
		}
		if len(s.Nodes) == 0 || len(s.Nodes) > 30 {
			t.Fatalf("seed %d: %d nodes, want 1 to 30", seed, len(s.Nodes))
		}
	}
}

// TestMarshalScenarioRoundTrips: a saved reproduction must replay the
// scenario that failed, not a lossy copy of it.
func TestMarshalScenarioRoundTrips(t *testing.T) {
	t.Parallel()
	for seed := range uint64(40) {
		// Odd seeds have affinity, spreading and cluster objects.
		s := generate(seed, seed%2 == 1)
		data, err := MarshalScenario(s)
		if err != nil {
			t.Fatalf("seed %d: MarshalScenario: %v", seed, err)
		}
		if bytes.Contains(data, []byte("creationTimestamp")) {
			t.Errorf("seed %d: YAML keeps null creationTimestamps", seed)
		}
		back, err := ParseScenario(data)
		if err != nil {
			t.Fatalf("seed %d: ParseScenario: %v\n%s", seed, err, data)
		}
		back.Seed = s.Seed
		if !equality.Semantic.DeepEqual(s, back) {
			t.Errorf("seed %d: scenario changed in a YAML round trip:\n%s", seed, data)
		}
	}
}

// TestParseScenarioRejectsOtherKinds: a kind the scheduler does not read
// would be silently ignored by both sides, so it is an error.
func TestParseScenarioRejectsOtherKinds(t *testing.T) {
	t.Parallel()
	for _, doc := range []string{
		"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d\n",
		"apiVersion: extensions/v1beta1\nkind: ReplicaSet\nmetadata:\n  name: r\n",
	} {
		data := "---\n" + doc + "---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n"
		if _, err := ParseScenario([]byte(data)); err == nil {
			t.Errorf("ParseScenario accepted\n%s", data)
		}
	}
}

// TestMinimizeKeepsOnlyWhatTheFailureNeeds checks that Minimize drops every
// node, pod and object the failure does not need, keeps the pods' nodes,
// and leaves its input alone.
func TestMinimizeKeepsOnlyWhatTheFailureNeeds(t *testing.T) {
	t.Parallel()
	s := &Scenario{
		Seed:    7,
		Nodes:   []*v1.Node{node("a", 1000), node("b", 1000), node("c", 1000)},
		Pods:    []*v1.Pod{boundTo(podRequesting("on-a", 1), "a"), boundTo(podRequesting("on-b", 1), "b"), boundTo(podRequesting("on-c", 1), "c")},
		Pod:     podRequesting("p", 1),
		Objects: []runtime.Object{namespace("x", nil), service("x", "needed", nil), service("x", "other", nil)},
	}
	// The "failure" needs node b, the pod on c (which needs node c) and
	// one Service.
	fails := func(s *Scenario) bool {
		hasNode := slices.ContainsFunc(s.Nodes, func(n *v1.Node) bool { return n.Name == "b" })
		hasPod := slices.ContainsFunc(s.Pods, func(p *v1.Pod) bool { return p.Name == "on-c" })
		hasService := slices.ContainsFunc(s.Objects, func(o runtime.Object) bool {
			svc, ok := o.(*v1.Service)
			return ok && svc.Name == "needed"
		})
		return hasNode && hasPod && hasService
	}
	got := Minimize(s, fails)
	var nodes, pods, objects []string
	for _, n := range got.Nodes {
		nodes = append(nodes, n.Name)
	}
	for _, p := range got.Pods {
		pods = append(pods, p.Name)
	}
	for _, o := range got.Objects {
		objects = append(objects, o.(metav1.Object).GetName())
	}
	if !slices.Equal(nodes, []string{"b", "c"}) || !slices.Equal(pods, []string{"on-c"}) || !slices.Equal(objects, []string{"needed"}) || got.Seed != 0 {
		t.Errorf("Minimize kept nodes %v, pods %v, objects %v, seed %d; want [b c], [on-c], [needed], 0", nodes, pods, objects, got.Seed)
	}
	if len(s.Nodes) != 3 || len(s.Pods) != 3 || len(s.Objects) != 3 {
		t.Errorf("Minimize modified its input")
	}
}
