package filter_test

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched/feature"
	"github.com/kubesched/kubesched/filter"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/nodeinfo"
)

// ipaNode is a node with a hostname label and, unless zone is "", a zone.
func ipaNode(name, zone string) *v1.Node {
	l := map[string]string{"kubernetes.io/hostname": name}
	if zone != "" {
		l["zone"] = zone
	}
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l}}
}

// ipaPod is a pod in namespace "default" labelled app=app ("" for none).
type ipaPod struct{ *v1.Pod }

func newIPAPod(name, app string) ipaPod {
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name)}}
	if app != "" {
		p.Labels = map[string]string{"app": app}
	}
	return ipaPod{p}
}

func (p ipaPod) in(ns string) ipaPod   { p.Namespace = ns; return p }
func (p ipaPod) on(node string) ipaPod { p.Spec.NodeName = node; return p }
func (p ipaPod) affinity() *v1.Affinity {
	if p.Spec.Affinity == nil {
		p.Spec.Affinity = &v1.Affinity{}
	}
	return p.Spec.Affinity
}

func (p ipaPod) near(terms ...v1.PodAffinityTerm) ipaPod {
	a := p.affinity()
	if a.PodAffinity == nil {
		a.PodAffinity = &v1.PodAffinity{}
	}
	a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution, terms...)
	return p
}

func (p ipaPod) awayFrom(terms ...v1.PodAffinityTerm) ipaPod {
	a := p.affinity()
	if a.PodAntiAffinity == nil {
		a.PodAntiAffinity = &v1.PodAntiAffinity{}
	}
	a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution, terms...)
	return p
}

func (p ipaPod) prefers(t v1.PodAffinityTerm) ipaPod {
	a := p.affinity()
	if a.PodAffinity == nil {
		a.PodAffinity = &v1.PodAffinity{}
	}
	a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution = append(a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution, v1.WeightedPodAffinityTerm{Weight: 1, PodAffinityTerm: t})
	return p
}

// app is a term selecting app=value by topology key.
func app(key, value string) v1.PodAffinityTerm {
	return v1.PodAffinityTerm{TopologyKey: key, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": value}}}
}

func appExpr(key string, op metav1.LabelSelectorOperator, values ...string) v1.PodAffinityTerm {
	return v1.PodAffinityTerm{TopologyKey: key, LabelSelector: &metav1.LabelSelector{
		MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: op, Values: values}}}}
}

func inNamespaces(t v1.PodAffinityTerm, ns ...string) v1.PodAffinityTerm { t.Namespaces = ns; return t }

func selectingNamespaces(t v1.PodAffinityTerm, sel *metav1.LabelSelector) v1.PodAffinityTerm {
	t.NamespaceSelector = sel
	return t
}

const (
	host = "kubernetes.io/hostname"
	zone = "zone"
)

// ipaCluster holds the namespaces the tests select from.
var ipaCluster = func() fwk.NamespaceLister {
	l, err := fwk.NewListers(
		&v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "default"}},
		&v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "red", Labels: map[string]string{"team": "x"}}},
		&v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "blue", Labels: map[string]string{"team": "y"}}},
	)
	if err != nil {
		panic(err)
	}
	return l.Namespaces
}()

// threeNodes: n1 and n2 in zone a, n3 in zone b, n4 without a zone.
var threeNodes = []*v1.Node{ipaNode("n1", "a"), ipaNode("n2", "a"), ipaNode("n3", "b"), ipaNode("n4", "")}

// ipaVerdicts runs PreFilter and Filter on every node and describes the
// outcome: the PreFilter status if it is not Success, else each node's
// rejection as "node:code:reason", sorted, or "all fit".
func ipaVerdicts(pl *filter.InterPodAffinity, state *fwk.CycleState, pod *v1.Pod, nodes []*nodeinfo.NodeInfo) string {
	if _, s := pl.PreFilter(context.Background(), state, pod, nodes); !s.IsSuccess() {
		return "PreFilter " + s.String()
	}
	return ipaFilterAll(pl, state, pod, nodes)
}

func ipaFilterAll(pl *filter.InterPodAffinity, state *fwk.CycleState, pod *v1.Pod, nodes []*nodeinfo.NodeInfo) string {
	var out []string
	for _, ni := range nodes {
		if s := pl.Filter(context.Background(), state, pod, ni); !s.IsSuccess() {
			out = append(out, fmt.Sprintf("%s:%v:%s", ni.Name(), s.Code(), s.Message()))
		}
	}
	if len(out) == 0 {
		return "all fit"
	}
	sort.Strings(out)
	return strings.Join(out, " ")
}

const (
	affinityNo     = ":UnschedulableAndUnresolvable:" + filter.ErrReasonAffinityRulesNotMatch
	antiNo         = ":Unschedulable:" + filter.ErrReasonAntiAffinityRulesNotMatch
	existingAntiNo = ":Unschedulable:" + filter.ErrReasonExistingAntiAffinityRulesNotMatch
)

func TestInterPodAffinityFilter(t *testing.T) {
	t.Parallel()
	web := func(name, node string) *v1.Pod { return newIPAPod(name, "web").on(node).Pod }
	tests := []struct {
		name     string
		placed   []*v1.Pod
		lister   fwk.NamespaceLister
		incoming *v1.Pod
		want     string
		features *feature.Features // nil: the newest release's
	}{
		{
			name:     "a pod without pod affinity, near no anti-affinity, is skipped",
			placed:   []*v1.Pod{web("w1", "n1")},
			incoming: newIPAPod("p", "web").prefers(app(zone, "web")).Pod,
			want:     "PreFilter Skip",
		},
		{
			name:     "affinity by hostname admits only the node running a matching pod",
			placed:   []*v1.Pod{web("w1", "n1"), newIPAPod("d1", "db").on("n2").Pod},
			incoming: newIPAPod("p", "").near(app(host, "web")).Pod,
			want:     "n2" + affinityNo + " n3" + affinityNo + " n4" + affinityNo,
		},
		{
			name:     "affinity by zone admits every node of the matching pod's zone",
			placed:   []*v1.Pod{web("w1", "n1")},
			incoming: newIPAPod("p", "").near(app(zone, "web")).Pod,
			want:     "n3" + affinityNo + " n4" + affinityNo,
		},
		{
			name:     "the first pod of a group fits every node with the topology key",
			placed:   []*v1.Pod{newIPAPod("d1", "db").on("n1").Pod},
			incoming: newIPAPod("p", "web").near(app(zone, "web")).Pod,
			want:     "n4" + affinityNo,
		},
		{
			name:     "a pod not matching its own affinity gets no first-pod pass",
			incoming: newIPAPod("p", "db").near(app(zone, "web")).Pod,
			want:     "n1" + affinityNo + " n2" + affinityNo + " n3" + affinityNo + " n4" + affinityNo,
		},
		{
			name:     "once a matching pod exists anywhere, the first-pod pass is gone",
			placed:   []*v1.Pod{web("w1", "n3")},
			incoming: newIPAPod("p", "web").near(app(zone, "web")).Pod,
			want:     "n1" + affinityNo + " n2" + affinityNo + " n4" + affinityNo,
		},
		{
			name:   "one pod must match all affinity terms",
			placed: []*v1.Pod{web("w1", "n1"), newIPAPod("d1", "db").on("n1").Pod},
			// No single pod is both web and db; the first-pod rule needs the
			// incoming pod to match both, which it cannot either.
			incoming: newIPAPod("p", "web").near(app(zone, "web"), app(zone, "db")).Pod,
			want:     "n1" + affinityNo + " n2" + affinityNo + " n3" + affinityNo + " n4" + affinityNo,
		},
		{
			name:     "every affinity term's domain must hold the matching pod",
			placed:   []*v1.Pod{web("w1", "n1")},
			incoming: newIPAPod("p", "").near(app(zone, "web"), app(host, "web")).Pod,
			want:     "n2" + affinityNo + " n3" + affinityNo + " n4" + affinityNo,
		},
		{
			name:     "matchExpressions select pods: NotIn accepts pods without the label",
			placed:   []*v1.Pod{newIPAPod("x", "").on("n3").Pod},
			incoming: newIPAPod("p", "").near(appExpr(zone, metav1.LabelSelectorOpNotIn, "web")).Pod,
			want:     "n1" + affinityNo + " n2" + affinityNo + " n4" + affinityNo,
		},
		{
			name:     "matchExpressions select pods: Exists needs the label",
			placed:   []*v1.Pod{newIPAPod("x", "").on("n3").Pod, newIPAPod("d", "db").on("n1").Pod},
			incoming: newIPAPod("p", "").near(appExpr(zone, metav1.LabelSelectorOpExists)).Pod,
			want:     "n3" + affinityNo + " n4" + affinityNo,
		},
		{
			name:     "anti-affinity by zone rejects the zone of a matching pod, as Unschedulable",
			placed:   []*v1.Pod{web("w1", "n1")},
			incoming: newIPAPod("p", "").awayFrom(app(zone, "web")).Pod,
			want:     "n1" + antiNo + " n2" + antiNo,
		},
		{
			name:     "anti-affinity by hostname rejects only the matching pod's node",
			placed:   []*v1.Pod{web("w1", "n1")},
			incoming: newIPAPod("p", "").awayFrom(app(host, "web")).Pod,
			want:     "n1" + antiNo,
		},
		{
			name:     "anti-affinity is checked after affinity",
			placed:   []*v1.Pod{web("w1", "n1"), newIPAPod("d", "db").on("n2").Pod},
			incoming: newIPAPod("p", "").near(app(zone, "web")).awayFrom(app(host, "db")).Pod,
			want:     "n2" + antiNo + " n3" + affinityNo + " n4" + affinityNo,
		},
		{
			name:     "a placed pod's anti-affinity keeps the pod out of its zone",
			placed:   []*v1.Pod{newIPAPod("w1", "web").on("n3").awayFrom(app(zone, "db")).Pod},
			incoming: newIPAPod("p", "db").Pod,
			want:     "n3" + existingAntiNo,
		},
		{
			name:     "a placed pod's anti-affinity by a key its node lacks keeps nothing out",
			placed:   []*v1.Pod{newIPAPod("w1", "web").on("n4").awayFrom(app(zone, "db")).Pod},
			incoming: newIPAPod("p", "db").Pod,
			want:     "PreFilter Skip",
		},
		{
			name:     "a term applies to its owner's namespace by default",
			placed:   []*v1.Pod{newIPAPod("w1", "web").in("red").on("n1").Pod},
			incoming: newIPAPod("p", "").awayFrom(app(host, "web")).Pod,
			want:     "all fit",
		},
		{
			name:     "a term's listed namespaces replace the owner's",
			placed:   []*v1.Pod{newIPAPod("w1", "web").in("red").on("n1").Pod, web("w2", "n2")},
			incoming: newIPAPod("p", "").awayFrom(inNamespaces(app(host, "web"), "red")).Pod,
			want:     "n1" + antiNo,
		},
		{
			name:     "a namespace selector adds the namespaces it selects",
			placed:   []*v1.Pod{newIPAPod("w1", "web").in("red").on("n1").Pod, newIPAPod("w2", "web").in("blue").on("n2").Pod},
			lister:   ipaCluster,
			incoming: newIPAPod("p", "").awayFrom(selectingNamespaces(app(host, "web"), &metav1.LabelSelector{MatchLabels: map[string]string{"team": "x"}})).Pod,
			want:     "n1" + antiNo,
		},
		{
			name:     "without namespaces to list, a namespace selector selects none",
			placed:   []*v1.Pod{newIPAPod("w1", "web").in("red").on("n1").Pod},
			incoming: newIPAPod("p", "").awayFrom(selectingNamespaces(app(host, "web"), &metav1.LabelSelector{MatchLabels: map[string]string{"team": "x"}})).Pod,
			want:     "all fit",
		},
		{
			name:     "an empty namespace selector selects every namespace",
			placed:   []*v1.Pod{newIPAPod("w1", "web").in("red").on("n1").Pod, newIPAPod("w2", "web").in("blue").on("n3").Pod},
			incoming: newIPAPod("p", "").awayFrom(selectingNamespaces(app(host, "web"), &metav1.LabelSelector{})).Pod,
			want:     "n1" + antiNo + " n3" + antiNo,
		},
		{
			// Before v1.37 kube-scheduler keeps the incoming pod's
			// selector after listing namespaces and matches it against no
			// labels.
			name:   "a namespace selector accepting unlabelled namespaces selects all before v1.37",
			placed: []*v1.Pod{newIPAPod("w1", "web").in("red").on("n1").Pod},
			lister: ipaCluster,
			incoming: newIPAPod("p", "").awayFrom(selectingNamespaces(app(host, "web"), &metav1.LabelSelector{
				MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "team", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"x"}}}})).Pod,
			features: &feature.Features{},
			want:     "n1" + antiNo,
		},
		{
			// From v1.37 only the namespaces listed count, and the
			// selector excludes red (team x).
			name:   "a namespace selector accepting unlabelled namespaces selects only those listed from v1.37",
			placed: []*v1.Pod{newIPAPod("w1", "web").in("red").on("n1").Pod},
			lister: ipaCluster,
			incoming: newIPAPod("p", "").awayFrom(selectingNamespaces(app(host, "web"), &metav1.LabelSelector{
				MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "team", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"x"}}}})).Pod,
			want: "all fit",
		},
		{
			name: "a placed pod's namespace selector is matched with the incoming pod's namespace labels",
			placed: []*v1.Pod{newIPAPod("w1", "web").in("blue").on("n1").
				awayFrom(selectingNamespaces(app(host, "db"), &metav1.LabelSelector{MatchLabels: map[string]string{"team": "x"}})).Pod},
			lister:   ipaCluster,
			incoming: newIPAPod("p", "db").in("red").Pod,
			want:     "n1" + existingAntiNo,
		},
		{
			name: "a placed pod's namespace selector ignores namespaces it does not select",
			placed: []*v1.Pod{newIPAPod("w1", "web").in("blue").on("n1").
				awayFrom(selectingNamespaces(app(host, "db"), &metav1.LabelSelector{MatchLabels: map[string]string{"team": "x"}})).Pod},
			lister:   ipaCluster,
			incoming: newIPAPod("p", "db").in("blue").Pod,
			want:     "PreFilter Skip",
		},
		{
			name:   "matchLabelKeys are left to the API server, which merges them at creation",
			placed: []*v1.Pod{newIPAPod("w1", "web").on("n1").Pod},
			incoming: newIPAPod("p", "db").awayFrom(v1.PodAffinityTerm{
				TopologyKey: host, LabelSelector: &metav1.LabelSelector{}, MatchLabelKeys: []string{"app"}}).Pod,
			want: "n1" + antiNo,
		},
		{
			name:     "an empty topology key is a key like any other, which nodes lack",
			placed:   []*v1.Pod{web("w1", "n1")},
			incoming: newIPAPod("p", "").near(app("", "web")).Pod,
			want:     "n1" + affinityNo + " n2" + affinityNo + " n3" + affinityNo + " n4" + affinityNo,
		},
		{
			name:     "a selector that does not parse rejects the pod in PreFilter",
			incoming: newIPAPod("p", "").near(appExpr(zone, "Near", "web")).Pod,
			want:     `PreFilter UnschedulableAndUnresolvable: parsing pod: requiredAffinityTerms: "Near" is not a valid label selector operator`,
		},
		{
			name:     "so does a preferred term that does not parse",
			incoming: newIPAPod("p", "").prefers(appExpr(zone, metav1.LabelSelectorOpIn)).Pod,
			want: "PreFilter UnschedulableAndUnresolvable: parsing pod: preferredAffinityTerms: values: Invalid value: null: " +
				"for 'in', 'notin' operators, values set can't be empty",
		},
		{
			name:     "a placed pod's term that does not parse is ignored",
			placed:   []*v1.Pod{newIPAPod("w1", "web").on("n1").awayFrom(appExpr(zone, "Near", "db"), app(host, "db")).Pod},
			incoming: newIPAPod("p", "db").Pod,
			want:     "PreFilter Skip",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			nodes := nodeinfo.Build(threeNodes, tc.placed)
			state := fwk.NewCycleState(nodes).SetListers(fwk.Listers{Namespaces: tc.lister})
			pl := &filter.InterPodAffinity{Features: tc.features}
			got := ipaVerdicts(pl, state, tc.incoming, nodes)
			if got != tc.want {
				t.Errorf("with PreFilter:\n got %s\nwant %s", got, tc.want)
			}
			// Without PreFilter's state, Filter computes it over the
			// state's nodes and must agree.
			fresh := fwk.NewCycleState(nodes).SetListers(fwk.Listers{Namespaces: tc.lister})
			want := tc.want
			if want == "PreFilter Skip" {
				want = "all fit"
			}
			if got := ipaFilterAll(pl, fresh, tc.incoming, nodes); got != want && !strings.HasPrefix(want, "PreFilter") {
				t.Errorf("without PreFilter:\n got %s\nwant %s", got, want)
			}
		})
	}
}

func TestInterPodAffinityFilterWithoutStateLooksAtTheNodeAlone(t *testing.T) {
	t.Parallel()
	pl := &filter.InterPodAffinity{}
	incoming := newIPAPod("p", "").awayFrom(app(host, "web")).Pod
	busy := nodeinfo.New(ipaNode("n1", "a"), newIPAPod("w1", "web").on("n1").Pod)
	if s := pl.Filter(context.Background(), nil, incoming, busy); s.Message() != filter.ErrReasonAntiAffinityRulesNotMatch {
		t.Errorf("busy node: %v", s)
	}
	if s := pl.Filter(context.Background(), nil, incoming, nodeinfo.New(ipaNode("n2", "a"))); s != nil {
		t.Errorf("empty node: %v", s)
	}
	bad := newIPAPod("p", "").near(appExpr(zone, "Near")).Pod
	if s := pl.Filter(context.Background(), nil, bad, busy); s.Code() != fwk.UnschedulableAndUnresolvable || s.Plugin() != "InterPodAffinity" {
		t.Errorf("bad pod: %v", s)
	}
}

func TestInterPodAffinityAddAndRemovePod(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pl := &filter.InterPodAffinity{}
	nodes := nodeinfo.Build(threeNodes, []*v1.Pod{newIPAPod("w1", "web").on("n1").Pod})
	n1, n3 := nodes[0], nodes[2]
	state := fwk.NewCycleState(nodes)
	incoming := newIPAPod("p", "db").awayFrom(app(host, "web")).Pod
	if got, want := ipaVerdicts(pl, state, incoming, nodes), "n1"+antiNo; got != want {
		t.Fatalf("before: got %s, want %s", got, want)
	}

	whatIf := state.Clone()
	if s := pl.RemovePod(ctx, whatIf, incoming, n1.Pods()[0], n1); s != nil {
		t.Fatal(s)
	}
	if got := ipaFilterAll(pl, whatIf, incoming, nodes); got != "all fit" {
		t.Errorf("after removing the web pod: %s", got)
	}
	if s := pl.AddPod(ctx, whatIf, incoming, nodeinfo.NewPodInfo(newIPAPod("w2", "web").on("n3").Pod), n3); s != nil {
		t.Fatal(s)
	}
	if got, want := ipaFilterAll(pl, whatIf, incoming, nodes), "n3"+antiNo; got != want {
		t.Errorf("after adding a web pod to n3: got %s, want %s", got, want)
	}
	hater := newIPAPod("h", "").on("n3").awayFrom(app(zone, "db")).Pod
	if s := pl.AddPod(ctx, whatIf, incoming, nodeinfo.NewPodInfo(hater), n3); s != nil {
		t.Fatal(s)
	}
	if got, want := ipaFilterAll(pl, whatIf, incoming, nodes), "n3"+antiNo; got != want {
		t.Errorf("after adding a db-hater to n3: got %s, want %s", got, want)
	}
	if s := pl.RemovePod(ctx, whatIf, incoming, nodeinfo.NewPodInfo(newIPAPod("w2", "web").on("n3").Pod), n3); s != nil {
		t.Fatal(s)
	}
	if got, want := ipaFilterAll(pl, whatIf, incoming, nodes), "n3"+existingAntiNo; got != want {
		t.Errorf("after removing the web pod from n3: got %s, want %s", got, want)
	}

	if got, want := ipaFilterAll(pl, state, incoming, nodes), "n1"+antiNo; got != want {
		t.Errorf("the original state changed with its clone: got %s, want %s", got, want)
	}
}

func TestInterPodAffinityAddPodUndoesTheFirstPodPass(t *testing.T) {
	t.Parallel()
	pl := &filter.InterPodAffinity{}
	nodes := nodeinfo.Build(threeNodes, nil)
	state := fwk.NewCycleState(nodes)
	incoming := newIPAPod("p", "web").near(app(zone, "web")).Pod
	if got, want := ipaVerdicts(pl, state, incoming, nodes), "n4"+affinityNo; got != want {
		t.Fatalf("first pod: got %s, want %s", got, want)
	}
	if s := pl.AddPod(context.Background(), state, incoming, nodeinfo.NewPodInfo(newIPAPod("w", "web").on("n3").Pod), nodes[2]); s != nil {
		t.Fatal(s)
	}
	if got, want := ipaFilterAll(pl, state, incoming, nodes), "n1"+affinityNo+" n2"+affinityNo+" n4"+affinityNo; got != want {
		t.Errorf("after a web pod arrives in zone b: got %s, want %s", got, want)
	}
}

func TestInterPodAffinityAddPodWithoutPreFilterIsAnError(t *testing.T) {
	t.Parallel()
	pl := &filter.InterPodAffinity{}
	nodes := nodeinfo.Build(threeNodes, nil)
	pi := nodeinfo.NewPodInfo(newIPAPod("w", "web").on("n1").Pod)
	if s := pl.AddPod(context.Background(), fwk.NewCycleState(nodes), &v1.Pod{}, pi, nodes[0]); s.Code() != fwk.Error {
		t.Errorf("AddPod = %v, want Error", s)
	}
	if s := pl.RemovePod(context.Background(), nil, &v1.Pod{}, pi, nodes[0]); s.Code() != fwk.Error {
		t.Errorf("RemovePod = %v, want Error", s)
	}
}

type failingNamespaces struct{ fwk.NamespaceLister }

func (failingNamespaces) List(labels.Selector) ([]*v1.Namespace, error) {
	return nil, errors.New("namespaces unavailable")
}

func TestInterPodAffinityBadInputIsAStatusNotAPanic(t *testing.T) {
	t.Parallel()
	pl := &filter.InterPodAffinity{}
	nodes := nodeinfo.Build(threeNodes, nil)
	state := fwk.NewCycleState(nodes).SetListers(fwk.Listers{Namespaces: failingNamespaces{}})
	pod := newIPAPod("p", "").near(selectingNamespaces(app(zone, "web"), &metav1.LabelSelector{MatchLabels: map[string]string{"team": "x"}})).Pod
	if _, s := pl.PreFilter(context.Background(), state, pod, nodes); s.Code() != fwk.Error || s.Message() != "namespaces unavailable" {
		t.Errorf("lister failure: %v", s)
	}
	if s := pl.Filter(context.Background(), nil, &v1.Pod{}, nodeinfo.New(nil)); s.Code() != fwk.Error {
		t.Errorf("a NodeInfo without a node: %v", s)
	}
}

func TestNewInterPodAffinityValidatesArgs(t *testing.T) {
	t.Parallel()
	w := int32(101)
	if _, err := filter.NewInterPodAffinity(&configv1.InterPodAffinityArgs{HardPodAffinityWeight: &w}); err == nil ||
		err.Error() != "hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]" {
		t.Errorf("err = %v", err)
	}
	if pl, err := filter.NewInterPodAffinity(&configv1.InterPodAffinityArgs{}); err != nil || pl.Name() != "InterPodAffinity" {
		t.Errorf("defaults: %v, %v", pl, err)
	}
}

func TestInterPodAffinityFilterDoesNotAllocate(t *testing.T) {
	nodes := nodeinfo.Build(threeNodes, []*v1.Pod{
		newIPAPod("w1", "web").on("n1").Pod,
		newIPAPod("h", "").on("n3").awayFrom(app(zone, "db")).Pod,
	})
	pod := newIPAPod("p", "db").near(app(zone, "web")).awayFrom(app(host, "web")).Pod
	pl := &filter.InterPodAffinity{}
	state := fwk.NewCycleState(nodes)
	if _, s := pl.PreFilter(context.Background(), state, pod, nodes); s != nil {
		t.Fatal(s)
	}
	if n := testing.AllocsPerRun(100, func() {
		for _, ni := range nodes {
			pl.Filter(context.Background(), state, pod, ni)
		}
	}); n != 0 {
		t.Errorf("Filter allocated %v times per round", n)
	}
}

func BenchmarkInterPodAffinity(b *testing.B) {
	for _, size := range []int{100, 1000, 5000} {
		var nodes []*v1.Node
		var pods []*v1.Pod
		for i := range size {
			name := fmt.Sprintf("n%d", i)
			nodes = append(nodes, ipaNode(name, fmt.Sprintf("z%d", i%10)))
			for j := range 10 {
				p := newIPAPod(fmt.Sprintf("p%d-%d", i, j), fmt.Sprintf("app%d", j)).on(name)
				if j == 0 {
					p = p.awayFrom(app(host, "app0"))
				}
				pods = append(pods, p.Pod)
			}
		}
		infos := nodeinfo.Build(nodes, pods)
		pod := newIPAPod("p", "new").near(app(zone, "app1")).awayFrom(app(host, "app0")).Pod
		pl := &filter.InterPodAffinity{}
		b.Run(fmt.Sprintf("%dnodes/PreFilter", size), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, s := pl.PreFilter(context.Background(), fwk.NewCycleState(infos), pod, infos); s != nil {
					b.Fatal(s)
				}
			}
		})
		state := fwk.NewCycleState(infos)
		if _, s := pl.PreFilter(context.Background(), state, pod, infos); s != nil {
			b.Fatal(s)
		}
		b.Run(fmt.Sprintf("%dnodes/Filter", size), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, ni := range infos {
					pl.Filter(context.Background(), state, pod, ni)
				}
			}
		})
	}
}
