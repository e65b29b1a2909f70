package kubesched_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubesched/kubesched"
	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/internal/testcluster"
	"github.com/kubesched/kubesched/nodeinfo"
)

// explainNode is a node for the Explain tests: cpu in cores, memory in
// GiB, labels and taints.
func explainNode(name string, cpu, memGi int64, labels map[string]string, taints ...v1.Taint) *v1.Node {
	alloc := v1.ResourceList{
		v1.ResourceCPU:    *resource.NewQuantity(cpu, resource.DecimalSI),
		v1.ResourceMemory: *resource.NewQuantity(memGi<<30, resource.BinarySI),
		v1.ResourcePods:   *resource.NewQuantity(110, resource.DecimalSI),
	}
	l := map[string]string{"kubernetes.io/hostname": name}
	for k, v := range labels {
		l[k] = v
	}
	return &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l},
		Spec:       v1.NodeSpec{Taints: taints},
		Status:     v1.NodeStatus{Allocatable: alloc, Capacity: alloc},
	}
}

// explainPod is a pod requesting cpu (a quantity) and memory.
func explainPod(name, cpu, mem string, port int32) *v1.Pod {
	c := v1.Container{Name: "c", Resources: v1.ResourceRequirements{Requests: v1.ResourceList{
		v1.ResourceCPU:    resource.MustParse(cpu),
		v1.ResourceMemory: resource.MustParse(mem),
	}}}
	if port > 0 {
		c.Ports = []v1.ContainerPort{{ContainerPort: port, HostPort: port}}
	}
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("uid-" + name)}, Spec: v1.PodSpec{Containers: []v1.Container{c}}}
}

func explain(t *testing.T, pod *v1.Pod, nodes []*nodeinfo.NodeInfo) *framework.Explanation {
	t.Helper()
	f, err := kubesched.DefaultFramework(framework.WithPercentageOfNodesToScore(100), framework.WithRandSource(rand.NewPCG(1, 1)))
	if err != nil {
		t.Fatal(err)
	}
	e, err := f.Explain(context.Background(), pod, nodes)
	if err != nil {
		t.Fatalf("Explain: %v", err)
	}
	return e
}

// details collects a node's details by plugin, one string per plugin.
func details(ne framework.NodeExplanation) map[string]string {
	out := map[string]string{}
	for _, v := range ne.Filters {
		if !v.Status.IsRejected() {
			continue
		}
		var msgs []string
		for _, d := range v.Details {
			msgs = append(msgs, d.Message)
		}
		out[v.Plugin] = strings.Join(msgs, " | ")
	}
	return out
}

func TestExplainSaysWhatEachNodeLacks(t *testing.T) {
	t.Parallel()
	busy := explainPod("busy", "3", "1Gi", 8080)
	busy.Spec.NodeName = "small"
	nodes := nodeinfo.Build([]*v1.Node{
		explainNode("small", 4, 8, nil),
		explainNode("tainted", 16, 64, nil, v1.Taint{Key: "dedicated", Value: "gpu", Effect: v1.TaintEffectNoSchedule}),
		explainNode("big", 16, 64, map[string]string{"disk": "hdd"}),
	}, []*v1.Pod{busy})
	pod := explainPod("web", "2", "1Gi", 8080)
	pod.Spec.NodeSelector = map[string]string{"disk": "ssd"}
	e := explain(t, pod, nodes)

	var fe *framework.FitError
	if !errors.As(e.Err, &fe) || e.Result != nil {
		t.Fatalf("Err = %v, Result = %v; want a FitError alone", e.Err, e.Result)
	}
	tests := []struct {
		node       string
		rejections int
		first      string
		details    map[string]string
	}{
		{"small", 3, "NodeAffinity", map[string]string{
			"NodeAffinity":     "nodeSelector disk=ssd: the node has no disk label",
			"NodePorts":        "host port 0.0.0.0:8080/TCP is in use by default/busy",
			"NodeResourcesFit": "cpu: the pod requests 2, the node has 4 allocatable of which its pods request 3: 1 short",
		}},
		{"tainted", 2, "TaintToleration", map[string]string{
			"NodeAffinity":    "nodeSelector disk=ssd: the node has no disk label",
			"TaintToleration": "taint dedicated=gpu:NoSchedule is not tolerated",
		}},
		{"big", 1, "NodeAffinity", map[string]string{
			"NodeAffinity": "nodeSelector disk=ssd: the node has disk=hdd",
		}},
	}
	for _, tt := range tests {
		i := slices.IndexFunc(e.Nodes, func(n framework.NodeExplanation) bool { return n.Name == tt.node })
		ne := e.Nodes[i]
		if ne.Rejections != tt.rejections {
			t.Errorf("%s: %d rejections, want %d", tt.node, ne.Rejections, tt.rejections)
		}
		if ne.Status.Plugin() != tt.first {
			t.Errorf("%s: kube-scheduler's verdict from %s, want %s", tt.node, ne.Status.Plugin(), tt.first)
		}
		if got := fe.Diagnosis.NodeStatus(tt.node); got.Plugin() != ne.Status.Plugin() || got.Message() != ne.Status.Message() {
			t.Errorf("%s: Explain says %v, Schedule's diagnosis %v", tt.node, ne.Status, got)
		}
		if got := details(ne); !reflect.DeepEqual(got, tt.details) {
			t.Errorf("%s: details\n%q\nwant\n%q", tt.node, got, tt.details)
		}
	}
	closest := e.Closest(2)
	if len(closest) != 2 || closest[0].Name != "big" || closest[1].Name != "tainted" {
		t.Errorf("closest = %v, want big then tainted", closest)
	}
}

func TestExplainScoresFeasibleNodesRawNormalizedAndWeighted(t *testing.T) {
	t.Parallel()
	nodes := nodeinfo.Build([]*v1.Node{
		explainNode("a", 4, 8, nil, v1.Taint{Key: "spot", Effect: v1.TaintEffectPreferNoSchedule}),
		explainNode("b", 8, 16, nil),
		explainNode("c", 2, 2, nil),
	}, nil)
	pod := explainPod("web", "3", "1Gi", 0)
	e := explain(t, pod, nodes)
	if e.Err != nil {
		t.Fatal(e.Err)
	}
	byName := map[string]framework.NodePluginScores{}
	for _, ns := range e.Result.NodeScores() {
		byName[ns.Name] = ns
	}
	for _, ne := range e.Nodes {
		if ne.Name == "c" {
			if ne.Status == nil || len(ne.Scores) != 0 {
				t.Errorf("c: status %v, %d scores; want rejected without scores", ne.Status, len(ne.Scores))
			}
			continue
		}
		want := byName[ne.Name]
		if ne.Total != want.TotalScore || len(ne.Scores) != len(want.Scores) {
			t.Fatalf("%s: total %d over %d plugins, Schedule's %d over %d", ne.Name, ne.Total, len(ne.Scores), want.TotalScore, len(want.Scores))
		}
		for k, s := range ne.Scores {
			w := e.Scores[k].Weight
			if s.Plugin != want.Scores[k].Name || s.Weighted != want.Scores[k].Score || s.Weighted != s.Normalized*int64(w) {
				t.Errorf("%s %s: %+v, weight %d; Schedule's %+v", ne.Name, s.Plugin, s, w, want.Scores[k])
			}
		}
	}
	// TaintToleration counts the intolerable PreferNoSchedule taints (raw
	// 1 on a, 0 on b) and normalizes in reverse (0 on a, 100 on b).
	tt := func(node string) framework.ExplainedScore {
		i := slices.IndexFunc(e.Nodes, func(n framework.NodeExplanation) bool { return n.Name == node })
		return e.Nodes[i].Scores[0]
	}
	if a, b := tt("a"), tt("b"); a.Raw != 1 || a.Normalized != 0 || b.Raw != 0 || b.Normalized != 100 || a.Weighted != 0 || b.Weighted != 300 {
		t.Errorf("TaintToleration a=%+v b=%+v; want raw 1/0, normalized 0/100, weighted 0/300", a, b)
	}
}

func TestExplainWithAPodPreFilterRejectsSaysSoOnEveryNode(t *testing.T) {
	t.Parallel()
	nodes := nodeinfo.Build([]*v1.Node{explainNode("a", 4, 8, nil), explainNode("b", 4, 8, nil)}, nil)
	pinned := func(names ...string) *v1.Pod {
		pod := explainPod("web", "1", "1Gi", 0)
		var reqs []v1.NodeSelectorRequirement
		for _, n := range names {
			reqs = append(reqs, v1.NodeSelectorRequirement{Key: "metadata.name", Operator: v1.NodeSelectorOpIn, Values: []string{n}})
		}
		pod.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
			NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchFields: reqs}},
		}}}
		return pod
	}
	nodeAffinityPreFilter := func(e *framework.Explanation) framework.PluginVerdict {
		return e.PreFilter[slices.IndexFunc(e.PreFilter, func(v framework.PluginVerdict) bool { return v.Plugin == "NodeAffinity" })]
	}

	// Two names in one term: no node can match, and PreFilter says so.
	e := explain(t, pinned("a", "b"), nodes)
	var fe *framework.FitError
	if !errors.As(e.Err, &fe) {
		t.Fatalf("Err = %v, want a FitError", e.Err)
	}
	for _, ne := range e.Nodes {
		if ne.Status.Plugin() != "NodeAffinity" || len(ne.Filters) != 0 {
			t.Errorf("%s: %v with %d filter verdicts; want NodeAffinity's PreFilter rejection alone", ne.Name, ne.Status, len(ne.Filters))
		}
	}
	if v := nodeAffinityPreFilter(e); !v.Status.IsRejected() {
		t.Errorf("NodeAffinity's PreFilter verdict %v, want a rejection", v.Status)
	}

	// A name no node has: PreFilter keeps that name only, the other nodes
	// get kube-scheduler's shared verdict, and their filters still say why.
	e = explain(t, pinned("gone"), nodes)
	if v := nodeAffinityPreFilter(e); v.Status != nil || len(v.Details) != 1 || v.Details[0].Message != "keeps only the nodes named gone" {
		t.Errorf("NodeAffinity's PreFilter verdict %v %v, want a pass keeping gone", v.Status, v.Details)
	}
	for _, ne := range e.Nodes {
		if want := "node(s) didn't satisfy plugin(s) [NodeAffinity]"; ne.Status.Message() != want {
			t.Errorf("%s: %v, want %q", ne.Name, ne.Status, want)
		}
		if got, want := details(ne)["NodeAffinity"], "required node affinity term 1 of 1: field metadata.name In [gone] (the node is "+ne.Name+")"; got != want {
			t.Errorf("%s: NodeAffinity says %q, want %q", ne.Name, got, want)
		}
	}
}

// TestExplainAgreesWithScheduleOnEveryNode checks, over random clusters
// with affinity, spreading, taints and ports, that Explain's verdict on
// each node is the Diagnosis of Schedule, that the first rejecting filter
// in its per-plugin list is that verdict, and that its scores are
// Schedule's.
func TestExplainAgreesWithScheduleOnEveryNode(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	ctx := context.Background()
	for round := range 30 {
		nodes := testcluster.Nodes(20+r.IntN(80), testcluster.Taints)
		var pods []*v1.Pod
		for i := range 2 * len(nodes) {
			p := affinityPod(r, fmt.Sprintf("placed-%d", i))
			p.Spec.NodeName = nodes[r.IntN(len(nodes))].Name
			pods = append(pods, p)
		}
		cluster := nodeinfo.Build(nodes, pods)
		pod := affinityPod(r, "incoming")
		if r.IntN(3) == 0 {
			pod.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse(fmt.Sprint(1 + r.IntN(6)))
		}
		f, err := kubesched.DefaultFramework(framework.WithPercentageOfNodesToScore(100))
		if err != nil {
			t.Fatal(err)
		}
		e, err := f.Explain(ctx, pod, cluster)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		var d framework.Diagnosis
		var fe *framework.FitError
		scores := map[string]framework.NodePluginScores{}
		switch {
		case errors.As(e.Err, &fe):
			d = fe.Diagnosis
		case e.Err != nil:
			t.Fatalf("round %d: %v", round, e.Err)
		default:
			d = e.Result.Diagnosis
			for _, ns := range e.Result.NodeScores() {
				scores[ns.Name] = ns
			}
		}
		for _, ne := range e.Nodes {
			want := d.NodeStatus(ne.Name)
			if ne.Status.Code() != want.Code() || ne.Status.Plugin() != want.Plugin() || !reflect.DeepEqual(ne.Status.Reasons(), want.Reasons()) {
				t.Fatalf("round %d, %s: Explain %v, Schedule %v", round, ne.Name, ne.Status, want)
			}
			first := slices.IndexFunc(ne.Filters, func(v framework.PluginVerdict) bool { return v.Status.IsRejected() })
			if ne.Status == nil && first >= 0 || ne.Status != nil && len(ne.Filters) > 0 && (first < 0 || ne.Filters[first].Status.Plugin() != ne.Status.Plugin()) {
				t.Fatalf("round %d, %s: first rejecting filter %d of %v, kube-scheduler's verdict %v", round, ne.Name, first, ne.Filters, ne.Status)
			}
			if s, ok := scores[ne.Name]; ok && s.TotalScore != ne.Total {
				t.Fatalf("round %d, %s: total %d, Schedule's %d", round, ne.Name, ne.Total, s.TotalScore)
			}
		}
	}
}

func TestPluginsListsTheDefaultProfile(t *testing.T) {
	t.Parallel()
	f, err := kubesched.DefaultFramework()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range f.Plugins() {
		got = append(got, fmt.Sprintf("%s%v/%d", p.Name, p.Points, p.Weight))
	}
	for _, want := range []string{
		"TaintToleration[PreFilter Filter PreScore Score]/3",
		"NodeResourcesFit[PreFilter Filter PreScore Score]/1",
		"DefaultPreemption[PostFilter]/0",
		"PodTopologySpread[PreFilter Filter PreScore Score]/2",
		"SchedulingGates[PreEnqueue]/0",
	} {
		if !slices.Contains(got, want) {
			t.Errorf("Plugins() = %v, lacks %s", got, want)
		}
	}
}

func TestExplainSaysTheSkewASpreadWouldMake(t *testing.T) {
	t.Parallel()
	zone := func(z string) map[string]string { return map[string]string{"topology.kubernetes.io/zone": z} }
	var running []*v1.Pod
	for i := range 2 {
		p := explainPod(fmt.Sprintf("web-%d", i), "100m", "10Mi", 0)
		p.Labels = map[string]string{"app": "web"}
		p.Spec.NodeName = "a1"
		running = append(running, p)
	}
	nodes := nodeinfo.Build([]*v1.Node{
		explainNode("a1", 4, 8, zone("a")),
		explainNode("b1", 4, 8, zone("b")),
		explainNode("none", 4, 8, nil),
	}, running)
	pod := explainPod("web-new", "100m", "10Mi", 0)
	pod.Labels = map[string]string{"app": "web"}
	pod.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{
		MaxSkew: 1, TopologyKey: "topology.kubernetes.io/zone", WhenUnsatisfiable: v1.DoNotSchedule,
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
	}}
	e := explain(t, pod, nodes)
	want := map[string]string{
		"a1":   "topology.kubernetes.io/zone=a would hold 3 matching pods against 0 in the emptiest domain: skew 3, maxSkew 1",
		"none": "the node has no topology.kubernetes.io/zone label",
		"b1":   "",
	}
	for _, ne := range e.Nodes {
		if got := details(ne)["PodTopologySpread"]; got != want[ne.Name] {
			t.Errorf("%s: %q, want %q", ne.Name, got, want[ne.Name])
		}
	}
	if e.Result == nil || e.Result.SuggestedHost != "b1" {
		t.Errorf("decision %v %v, want b1", e.Result, e.Err)
	}
}

func TestExplainSaysWhichPodAffinityRuleANodeBreaks(t *testing.T) {
	t.Parallel()
	zone := func(z string) map[string]string { return map[string]string{"topology.kubernetes.io/zone": z} }
	db := explainPod("db", "100m", "10Mi", 0)
	db.Labels = map[string]string{"app": "db"}
	db.Spec.NodeName = "a1"
	loner := explainPod("loner", "100m", "10Mi", 0)
	loner.Spec.NodeName = "b1"
	loner.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}, TopologyKey: "kubernetes.io/hostname",
	}}}}
	nodes := nodeinfo.Build([]*v1.Node{
		explainNode("a1", 4, 8, zone("a")),
		explainNode("b1", 4, 8, zone("b")),
		explainNode("b2", 4, 8, zone("b")),
	}, []*v1.Pod{db, loner})
	pod := explainPod("web", "100m", "10Mi", 0)
	pod.Labels = map[string]string{"app": "web"}
	pod.Spec.Affinity = &v1.Affinity{PodAffinity: &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}, TopologyKey: "topology.kubernetes.io/zone",
	}}}}
	e := explain(t, pod, nodes)
	want := map[string]string{
		"a1": "",
		"b1": "pod affinity term 1: no pod matching the pod's affinity terms runs in topology.kubernetes.io/zone=b | 1 running pod(s) in kubernetes.io/hostname=b1 have required anti-affinity against this pod",
		"b2": "pod affinity term 1: no pod matching the pod's affinity terms runs in topology.kubernetes.io/zone=b",
	}
	for _, ne := range e.Nodes {
		if got := details(ne)["InterPodAffinity"]; got != want[ne.Name] {
			t.Errorf("%s: %q, want %q", ne.Name, got, want[ne.Name])
		}
	}
}

func TestExplainFiltersTheNominatedNodeOutsideWhatPreFilterNarrowedTo(t *testing.T) {
	t.Parallel()
	f, err := kubesched.DefaultFramework()
	if err != nil {
		t.Fatal(err)
	}
	nodes := nodeinfo.Build([]*v1.Node{explainNode("a", 4, 8, nil), explainNode("b", 4, 8, nil), explainNode("c", 4, 8, nil)}, nil)
	// NodeName's PreFilter narrows the cycle to a full node; the
	// nominated node b is filtered first all the same, and NodeName's
	// Filter rejects it; c is left out by the PreFilter.
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", UID: "p"},
		Spec: v1.PodSpec{NodeName: "a", Containers: []v1.Container{{Name: "c", Resources: v1.ResourceRequirements{
			Requests: v1.ResourceList{v1.ResourceCPU: resource.MustParse("5")}}}}},
		Status: v1.PodStatus{NominatedNodeName: "b"},
	}
	e, err := f.Explain(context.Background(), pod, nodes)
	if err != nil {
		t.Fatal(err)
	}
	_, schedErr := f.Schedule(context.Background(), pod, nodes)
	var fe *framework.FitError
	if !errors.As(schedErr, &fe) {
		t.Fatalf("Schedule = %v, want a FitError", schedErr)
	}
	want := map[string]string{
		"a": "UnschedulableAndUnresolvable (NodeResourcesFit): Insufficient cpu",
		"b": "UnschedulableAndUnresolvable (NodeName): node(s) didn't match the requested node name",
		"c": "UnschedulableAndUnresolvable: node(s) didn't satisfy plugin(s) [NodeName]",
	}
	for _, ne := range e.Nodes {
		if got := ne.Status.String(); got != want[ne.Name] {
			t.Errorf("Explain on %s: %s, want %s", ne.Name, got, want[ne.Name])
		}
		if got := fe.Diagnosis.NodeStatus(ne.Name).String(); got != want[ne.Name] {
			t.Errorf("Schedule on %s: %s, want %s", ne.Name, got, want[ne.Name])
		}
	}
}
