package score_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/nodeinfo"
	"github.com/kubesched/kubesched/score"
)

// ipaNodes: n1 and n2 in zone a, n3 in zone b, n4 without a zone.
var ipaNodes = []*v1.Node{ipaNode("n1", "a"), ipaNode("n2", "a"), ipaNode("n3", "b"), ipaNode("n4", "")}

func ipaNode(name, zone string) *v1.Node {
	l := map[string]string{host: name}
	if zone != "" {
		l[zone_] = zone
	}
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l}}
}

const (
	host  = "kubernetes.io/hostname"
	zone_ = "zone"
)

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

func (p ipaPod) podAffinity() *v1.PodAffinity {
	if p.Spec.Affinity == nil {
		p.Spec.Affinity = &v1.Affinity{}
	}
	if p.Spec.Affinity.PodAffinity == nil {
		p.Spec.Affinity.PodAffinity = &v1.PodAffinity{}
	}
	return p.Spec.Affinity.PodAffinity
}

func (p ipaPod) podAntiAffinity() *v1.PodAntiAffinity {
	if p.Spec.Affinity == nil {
		p.Spec.Affinity = &v1.Affinity{}
	}
	if p.Spec.Affinity.PodAntiAffinity == nil {
		p.Spec.Affinity.PodAntiAffinity = &v1.PodAntiAffinity{}
	}
	return p.Spec.Affinity.PodAntiAffinity
}

func (p ipaPod) near(t v1.PodAffinityTerm) ipaPod {
	a := p.podAffinity()
	a.RequiredDuringSchedulingIgnoredDuringExecution = append(a.RequiredDuringSchedulingIgnoredDuringExecution, t)
	return p
}

func (p ipaPod) prefers(w int32, t v1.PodAffinityTerm) ipaPod {
	a := p.podAffinity()
	a.PreferredDuringSchedulingIgnoredDuringExecution = append(a.PreferredDuringSchedulingIgnoredDuringExecution, v1.WeightedPodAffinityTerm{Weight: w, PodAffinityTerm: t})
	return p
}

func (p ipaPod) avoids(w int32, t v1.PodAffinityTerm) ipaPod {
	a := p.podAntiAffinity()
	a.PreferredDuringSchedulingIgnoredDuringExecution = append(a.PreferredDuringSchedulingIgnoredDuringExecution, v1.WeightedPodAffinityTerm{Weight: w, PodAffinityTerm: t})
	return p
}

// app is a term selecting app=value by topology key.
func app(key, value string) v1.PodAffinityTerm {
	return v1.PodAffinityTerm{TopologyKey: key, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": value}}}
}

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

// ipaScore runs PreScore, Score and NormalizeScore over ipaNodes holding
// placed, and returns the raw and normalized scores, or PreScore's status.
func ipaScore(t *testing.T, pl *score.InterPodAffinity, lister fwk.NamespaceLister, placed []*v1.Pod, pod *v1.Pod) (raw, normalized []int64, _ *fwk.Status) {
	t.Helper()
	ctx := context.Background()
	nodes := nodeinfo.Build(ipaNodes, placed)
	state := fwk.NewCycleState(nodes).SetListers(fwk.Listers{Namespaces: lister})
	if s := pl.PreScore(ctx, state, pod, nodes); !s.IsSuccess() {
		return nil, nil, s
	}
	fresh := fwk.NewCycleState(nodes).SetListers(fwk.Listers{Namespaces: lister})
	for _, ni := range nodes {
		s, st := pl.Score(ctx, state, pod, ni)
		if !st.IsSuccess() {
			t.Fatalf("Score(%s): %v", ni.Name(), st)
		}
		// Without PreScore's state, Score computes it and must agree.
		if again, _ := pl.Score(ctx, fresh, pod, ni); again != s {
			t.Errorf("Score(%s) without PreScore = %d, with = %d", ni.Name(), again, s)
		}
		raw = append(raw, s)
	}
	normalized = slices.Clone(raw)
	if s := pl.NormalizeScore(ctx, state, pod, nodes, normalized); !s.IsSuccess() {
		t.Fatalf("NormalizeScore: %v", s)
	}
	return raw, normalized, nil
}

func weight(w int32) *int32 { return &w }

func TestInterPodAffinityScore(t *testing.T) {
	t.Parallel()
	web := func(name, node string) *v1.Pod { return newIPAPod(name, "web").on(node).Pod }
	db := func(name, node string) *v1.Pod { return newIPAPod(name, "db").on(node).Pod }
	teamX := &metav1.LabelSelector{MatchLabels: map[string]string{"team": "x"}}
	tests := []struct {
		name     string
		args     *configv1.InterPodAffinityArgs
		lister   fwk.NamespaceLister
		placed   []*v1.Pod
		incoming *v1.Pod
		// Scores of n1, n2, n3, n4; nil when PreScore skips.
		raw, normalized []int64
	}{
		{
			name:     "nothing to score is skipped",
			placed:   []*v1.Pod{web("w1", "n1")},
			incoming: newIPAPod("p", "web").Pod,
		},
		{
			name:     "a preferred affinity term adds its weight to the zone of each matching pod",
			placed:   []*v1.Pod{web("w1", "n1"), web("w2", "n2")},
			incoming: newIPAPod("p", "").prefers(10, app(zone_, "web")).Pod,
			// Zone a holds two web pods: 2 × 10.
			raw:        []int64{20, 20, 0, 0},
			normalized: []int64{100, 100, 0, 0},
		},
		{
			name:     "a preferred anti-affinity term subtracts its weight",
			placed:   []*v1.Pod{web("w1", "n1"), db("d1", "n2")},
			incoming: newIPAPod("p", "").prefers(10, app(zone_, "web")).avoids(5, app(host, "db")).Pod,
			// n2 is in web's zone (+10) and runs db (-5).
			raw:        []int64{10, 5, 0, 0},
			normalized: []int64{100, 50, 0, 0},
		},
		{
			name:       "a placed pod's required affinity for the pod scores hardPodAffinityWeight, 1 by default",
			placed:     []*v1.Pod{newIPAPod("w1", "web").on("n3").near(app(zone_, "db")).Pod},
			incoming:   newIPAPod("p", "db").Pod,
			raw:        []int64{0, 0, 1, 0},
			normalized: []int64{0, 0, 100, 0},
		},
		{
			name:       "hardPodAffinityWeight is configurable",
			args:       &configv1.InterPodAffinityArgs{HardPodAffinityWeight: weight(5)},
			placed:     []*v1.Pod{newIPAPod("w1", "web").on("n3").near(app(zone_, "db")).Pod},
			incoming:   newIPAPod("p", "db").Pod,
			raw:        []int64{0, 0, 5, 0},
			normalized: []int64{0, 0, 100, 0},
		},
		{
			name:     "hardPodAffinityWeight 0 ignores placed pods' required affinity",
			args:     &configv1.InterPodAffinityArgs{HardPodAffinityWeight: weight(0)},
			placed:   []*v1.Pod{newIPAPod("w1", "web").on("n3").near(app(zone_, "db")).Pod},
			incoming: newIPAPod("p", "db").Pod,
		},
		{
			name:     "a placed pod's preferred anti-affinity for the pod lowers its zone",
			placed:   []*v1.Pod{newIPAPod("w1", "web").on("n1").avoids(7, app(zone_, "db")).Pod},
			incoming: newIPAPod("p", "db").Pod,
			// The lowest raw score becomes 0, the highest 100.
			raw:        []int64{-7, -7, 0, 0},
			normalized: []int64{0, 0, 100, 100},
		},
		{
			name:     "a placed pod's preferred affinity for the pod raises its zone",
			placed:   []*v1.Pod{newIPAPod("w1", "web").on("n3").prefers(7, app(zone_, "db")).Pod, db("d1", "n1")},
			incoming: newIPAPod("p", "db").Pod,
			// d1 has no affinity of its own and the pod no preferences:
			// only w1 is visited.
			raw:        []int64{0, 0, 7, 0},
			normalized: []int64{0, 0, 100, 0},
		},
		{
			name:     "IgnorePreferredTermsOfExistingPods skips a pod without preferred terms",
			args:     &configv1.InterPodAffinityArgs{IgnorePreferredTermsOfExistingPods: true},
			placed:   []*v1.Pod{newIPAPod("w1", "web").on("n1").avoids(7, app(zone_, "db")).Pod},
			incoming: newIPAPod("p", "db").Pod,
		},
		{
			name:     "IgnorePreferredTermsOfExistingPods still counts placed pods for a pod with preferred terms",
			args:     &configv1.InterPodAffinityArgs{IgnorePreferredTermsOfExistingPods: true},
			placed:   []*v1.Pod{newIPAPod("w1", "web").on("n1").avoids(7, app(zone_, "db")).Pod},
			incoming: newIPAPod("p", "db").prefers(3, app(zone_, "cache")).Pod,
			raw:      []int64{-7, -7, 0, 0}, normalized: []int64{0, 0, 100, 100},
		},
		{
			name:     "normalization rounds down",
			placed:   []*v1.Pod{web("w1", "n2"), web("w2", "n3"), web("w3", "n3"), web("w4", "n3")},
			incoming: newIPAPod("p", "").prefers(1, app(host, "web")).Pod,
			// 100 × 1/3 = 33.3.
			raw:        []int64{0, 1, 3, 0},
			normalized: []int64{0, 33, 100, 0},
		},
		{
			name:     "weights that cancel out still score, all nodes alike",
			placed:   []*v1.Pod{web("w1", "n1")},
			incoming: newIPAPod("p", "").prefers(5, app(zone_, "web")).avoids(5, app(zone_, "web")).Pod,
			raw:      []int64{0, 0, 0, 0}, normalized: []int64{0, 0, 0, 0},
		},
		{
			name:     "a pod in another namespace does not match a term by default",
			placed:   []*v1.Pod{newIPAPod("w1", "web").in("red").on("n1").Pod},
			incoming: newIPAPod("p", "").prefers(4, app(host, "web")).Pod,
		},
		{
			name:     "the pod's namespace selector selects namespaces through the lister",
			lister:   ipaCluster,
			placed:   []*v1.Pod{newIPAPod("w1", "web").in("red").on("n1").Pod, newIPAPod("w2", "web").in("blue").on("n2").Pod},
			incoming: newIPAPod("p", "").prefers(4, v1.PodAffinityTerm{TopologyKey: host, LabelSelector: app("", "web").LabelSelector, NamespaceSelector: teamX}).Pod,
			raw:      []int64{4, 0, 0, 0}, normalized: []int64{100, 0, 0, 0},
		},
		{
			name:   "a placed pod's namespace selector is matched with the pod's namespace labels",
			lister: ipaCluster,
			placed: []*v1.Pod{newIPAPod("w1", "web").in("blue").on("n3").
				prefers(9, v1.PodAffinityTerm{TopologyKey: zone_, LabelSelector: app("", "db").LabelSelector, NamespaceSelector: teamX}).Pod},
			incoming: newIPAPod("p", "db").in("red").Pod,
			raw:      []int64{0, 0, 9, 0}, normalized: []int64{0, 0, 100, 0},
		},
		{
			name:   "a placed pod's namespace selector not matching the pod's namespace scores nothing",
			lister: ipaCluster,
			placed: []*v1.Pod{newIPAPod("w1", "web").in("blue").on("n3").
				prefers(9, v1.PodAffinityTerm{TopologyKey: zone_, LabelSelector: app("", "db").LabelSelector, NamespaceSelector: teamX}).Pod},
			incoming: newIPAPod("p", "db").in("blue").Pod,
		},
		{
			name:     "matchLabelKeys are left to the API server",
			placed:   []*v1.Pod{web("w1", "n1")},
			incoming: newIPAPod("p", "db").prefers(2, v1.PodAffinityTerm{TopologyKey: host, LabelSelector: &metav1.LabelSelector{}, MatchLabelKeys: []string{"app"}}).Pod,
			raw:      []int64{2, 0, 0, 0}, normalized: []int64{100, 0, 0, 0},
		},
		{
			name:     "a topology key no node has scores nothing",
			placed:   []*v1.Pod{web("w1", "n1")},
			incoming: newIPAPod("p", "").prefers(2, app("rack", "web")).Pod,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pl, err := score.NewInterPodAffinity(tc.args)
			if err != nil {
				t.Fatal(err)
			}
			raw, normalized, s := ipaScore(t, pl, tc.lister, tc.placed, tc.incoming)
			if tc.raw == nil {
				if !s.IsSkip() {
					t.Errorf("PreScore = %v, raw %v; want Skip", s, raw)
				}
				return
			}
			if s != nil {
				t.Fatalf("PreScore = %v", s)
			}
			if !slices.Equal(raw, tc.raw) || !slices.Equal(normalized, tc.normalized) {
				t.Errorf("raw %v normalized %v, want %v %v", raw, normalized, tc.raw, tc.normalized)
			}
		})
	}
}

func TestInterPodAffinityPreScoreReadsEveryNodeOfTheCycle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pl := &score.InterPodAffinity{}
	nodes := nodeinfo.Build(ipaNodes, []*v1.Pod{newIPAPod("w1", "web").on("n3").Pod})
	pod := newIPAPod("p", "").prefers(10, app(zone_, "web")).Pod
	if !pl.PodOnlyPreScore(nil, pod) {
		t.Error("PodOnlyPreScore = false")
	}
	// Only n1 and n2 passed filtering; the web pod on n3 still counts.
	state := fwk.NewCycleState(nodes)
	if s := pl.PreScore(ctx, state, pod, nodes[:2]); s != nil {
		t.Fatalf("PreScore = %v", s)
	}
	if got, _ := pl.Score(ctx, state, pod, nodes[2]); got != 10 {
		t.Errorf("Score(n3) = %d, want 10", got)
	}
}

func TestInterPodAffinityScoreWithoutStateLooksAtTheNodeAlone(t *testing.T) {
	t.Parallel()
	pl := &score.InterPodAffinity{}
	pod := newIPAPod("p", "").prefers(10, app(host, "web")).Pod
	busy := nodeinfo.New(ipaNode("n1", "a"), newIPAPod("w1", "web").on("n1").Pod)
	if got, s := pl.Score(context.Background(), nil, pod, busy); got != 10 || s != nil {
		t.Errorf("busy node: %d, %v", got, s)
	}
	if got, s := pl.Score(context.Background(), nil, pod, nodeinfo.New(ipaNode("n2", "a"))); got != 0 || s != nil {
		t.Errorf("empty node: %d, %v", got, s)
	}
}

func TestInterPodAffinityBadInputIsAnErrorNotAPanic(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pl := &score.InterPodAffinity{}
	nodes := nodeinfo.Build(ipaNodes, nil)
	bad := newIPAPod("p", "").prefers(1, v1.PodAffinityTerm{TopologyKey: zone_, LabelSelector: &metav1.LabelSelector{
		MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Near"}}}}).Pod
	const want = `failed to parse pod: preferredAffinityTerms: "Near" is not a valid label selector operator`
	if s := pl.PreScore(ctx, fwk.NewCycleState(nodes), bad, nodes); s.Code() != fwk.Error || s.Message() != want {
		t.Errorf("PreScore = %v, want Error %q", s, want)
	}
	if _, s := pl.Score(ctx, nil, bad, nodes[0]); s.Code() != fwk.Error {
		t.Errorf("Score without state = %v, want Error", s)
	}
	if _, s := pl.Score(ctx, nil, bad, nodeinfo.New(nil)); s.Code() != fwk.Error {
		t.Errorf("a NodeInfo without a node: %v", s)
	}
	failing := fwk.NewCycleState(nodes).SetListers(fwk.Listers{Namespaces: failingNamespaces{}})
	selecting := newIPAPod("p", "").prefers(1, v1.PodAffinityTerm{TopologyKey: zone_, LabelSelector: app("", "x").LabelSelector,
		NamespaceSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"team": "x"}}}).Pod
	if s := pl.PreScore(ctx, failing, selecting, nodes); s.Code() != fwk.Error ||
		s.Message() != "updating PreferredAffinityTerms: namespaces unavailable" {
		t.Errorf("lister failure: %v", s)
	}
}

type failingNamespaces struct{ fwk.NamespaceLister }

func (failingNamespaces) List(labels.Selector) ([]*v1.Namespace, error) {
	return nil, errors.New("namespaces unavailable")
}

func TestInterPodAffinityNormalizeScore(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		in, want []int64
	}{
		{"the lowest becomes 0 and the highest 100", []int64{-10, 0, 10}, []int64{0, 50, 100}},
		{"equal scores all become 0", []int64{7, 7}, []int64{0, 0}},
		{"fractions round down", []int64{0, 2, 3}, []int64{0, 66, 100}},
		{"no scores is fine", []int64{}, []int64{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := slices.Clone(tc.in)
			if s := (&score.InterPodAffinity{}).NormalizeScore(context.Background(), nil, nil, nil, got); s != nil || !slices.Equal(got, tc.want) {
				t.Errorf("got %v (%v), want %v", got, s, tc.want)
			}
		})
	}
}

func TestNewInterPodAffinityScoreValidatesArgs(t *testing.T) {
	t.Parallel()
	for _, w := range []int32{-1, 101} {
		if _, err := score.NewInterPodAffinity(&configv1.InterPodAffinityArgs{HardPodAffinityWeight: weight(w)}); err == nil {
			t.Errorf("weight %d accepted", w)
		}
	}
	w := weight(3)
	pl, err := score.NewInterPodAffinity(&configv1.InterPodAffinityArgs{HardPodAffinityWeight: w})
	if err != nil || pl.Name() != "InterPodAffinity" {
		t.Fatalf("NewInterPodAffinity = %v, %v", pl, err)
	}
	*w = 50 // the plugin keeps its own copy
	raw, _, _ := ipaScore(t, pl, nil, []*v1.Pod{newIPAPod("w1", "web").on("n3").near(app(zone_, "db")).Pod}, newIPAPod("p", "db").Pod)
	if !slices.Equal(raw, []int64{0, 0, 3, 0}) {
		t.Errorf("raw = %v, want weight 3 on n3", raw)
	}
}

func TestInterPodAffinityScoreDoesNotAllocate(t *testing.T) {
	nodes := nodeinfo.Build(ipaNodes, []*v1.Pod{newIPAPod("w1", "web").on("n1").Pod})
	pod := newIPAPod("p", "").prefers(3, app(zone_, "web")).avoids(2, app(host, "web")).Pod
	pl := &score.InterPodAffinity{}
	state := fwk.NewCycleState(nodes)
	if s := pl.PreScore(context.Background(), state, pod, nodes); s != nil {
		t.Fatal(s)
	}
	if n := testing.AllocsPerRun(100, func() {
		for _, ni := range nodes {
			_, _ = pl.Score(context.Background(), state, pod, ni)
		}
	}); n != 0 {
		t.Errorf("Score allocated %v times per round", n)
	}
}

func BenchmarkInterPodAffinityScore(b *testing.B) {
	for _, size := range []int{100, 1000, 5000} {
		var nodes []*v1.Node
		var pods []*v1.Pod
		for i := range size {
			name := fmt.Sprintf("n%d", i)
			nodes = append(nodes, ipaNode(name, fmt.Sprintf("z%d", i%10)))
			for j := range 10 {
				p := newIPAPod(fmt.Sprintf("p%d-%d", i, j), fmt.Sprintf("app%d", j)).on(name)
				if j == 0 {
					p = p.prefers(5, app(zone_, "app0"))
				}
				pods = append(pods, p.Pod)
			}
		}
		infos := nodeinfo.Build(nodes, pods)
		pod := newIPAPod("p", "app0").prefers(10, app(zone_, "app1")).avoids(3, app(host, "app2")).Pod
		pl := &score.InterPodAffinity{}
		b.Run(fmt.Sprintf("%dnodes/PreScore", size), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if s := pl.PreScore(context.Background(), fwk.NewCycleState(infos), pod, infos); s != nil {
					b.Fatal(s)
				}
			}
		})
		state := fwk.NewCycleState(infos)
		if s := pl.PreScore(context.Background(), state, pod, infos); s != nil {
			b.Fatal(s)
		}
		b.Run(fmt.Sprintf("%dnodes/Score", size), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, ni := range infos {
					_, _ = pl.Score(context.Background(), state, pod, ni)
				}
			}
		})
	}
}
