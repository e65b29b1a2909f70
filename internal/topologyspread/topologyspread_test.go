package topologyspread

import (
	"context"
	"maps"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/internal/podcount"
	"github.com/kubesched/kubesched/nodeinfo"
)

// fakeList is an in-memory lister of one kind.
type fakeList[T any] []T

func (l fakeList[T]) List(labels.Selector) ([]T, error) { return l, nil }

func labelled(kv ...string) map[string]string {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return m
}

func pod(ns string, kv ...string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: ns, Labels: labelled(kv...)}}
}

func withConstraints(p *v1.Pod, cs ...v1.TopologySpreadConstraint) *v1.Pod {
	p.Spec.TopologySpreadConstraints = cs
	return p
}

func ownedBy(p *v1.Pod, apiVersion, kind, name string) *v1.Pod {
	yes := true
	p.OwnerReferences = []metav1.OwnerReference{{APIVersion: apiVersion, Kind: kind, Name: name, Controller: &yes}}
	return p
}

func constraint(key string, action v1.UnsatisfiableConstraintAction, app string) v1.TopologySpreadConstraint {
	return v1.TopologySpreadConstraint{MaxSkew: 1, TopologyKey: key, WhenUnsatisfiable: action,
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}}
}

func service(ns string, selector map[string]string) *v1.Service {
	return &v1.Service{ObjectMeta: metav1.ObjectMeta{Name: "svc", Namespace: ns}, Spec: v1.ServiceSpec{Selector: selector}}
}

func TestConstraints(t *testing.T) {
	t.Parallel()
	honor, ignore := v1.NodeInclusionPolicyHonor, v1.NodeInclusionPolicyIgnore
	three := int32(3)
	listDefaults := NewDefaults(&configv1.PodTopologySpreadArgs{DefaultingType: configv1.ListDefaulting, DefaultConstraints: []v1.TopologySpreadConstraint{
		{MaxSkew: 2, TopologyKey: "zone", WhenUnsatisfiable: v1.DoNotSchedule},
	}})
	webService := fwk.Listers{Services: fakeList[*v1.Service]{service("ns", labelled("app", "web"))}}
	tests := []struct {
		name     string
		defaults Defaults
		pod      *v1.Pod
		action   v1.UnsatisfiableConstraintAction
		listers  fwk.Listers
		want     []string // each constraint as "key maxSkew minDomains affinity taints selector"
	}{
		{
			name:   "only the constraints of the requested kind are kept, in order",
			pod:    withConstraints(pod("ns", "app", "web"), constraint("zone", v1.DoNotSchedule, "web"), constraint("host", v1.ScheduleAnyway, "web"), constraint("rack", v1.DoNotSchedule, "db")),
			action: v1.DoNotSchedule,
			want:   []string{"zone 1 1 Honor Ignore app=web", "rack 1 1 Honor Ignore app=db"},
		},
		{
			name: "set minDomains and inclusion policies are kept",
			pod: withConstraints(pod("ns"), func() v1.TopologySpreadConstraint {
				c := constraint("zone", v1.DoNotSchedule, "web")
				c.MinDomains, c.NodeAffinityPolicy, c.NodeTaintsPolicy = &three, &ignore, &honor
				return c
			}()),
			action: v1.DoNotSchedule,
			want:   []string{"zone 1 3 Ignore Honor app=web"},
		},
		{
			name: "matchLabelKeys add the pod's own values of those keys it has",
			pod: withConstraints(pod("ns", "app", "web", "hash", "abc"), func() v1.TopologySpreadConstraint {
				c := constraint("zone", v1.DoNotSchedule, "web")
				c.MatchLabelKeys = []string{"hash", "absent"}
				return c
			}()),
			action: v1.DoNotSchedule,
			want:   []string{"zone 1 1 Honor Ignore app=web,hash=abc"},
		},
		{
			name: "matchLabelKeys leave a nil label selector matching nothing",
			pod: withConstraints(pod("ns", "hash", "abc"), v1.TopologySpreadConstraint{
				MaxSkew: 1, TopologyKey: "zone", WhenUnsatisfiable: v1.DoNotSchedule, MatchLabelKeys: []string{"hash"},
			}),
			action: v1.DoNotSchedule,
			want:   []string{"zone 1 1 Honor Ignore <nothing>"},
		},
		{
			name:    "a pod with constraints of its own ignores the defaults",
			pod:     withConstraints(pod("ns", "app", "web"), constraint("rack", v1.ScheduleAnyway, "web")),
			action:  v1.ScheduleAnyway,
			listers: webService,
			want:    []string{"rack 1 1 Honor Ignore app=web"},
		},
		{
			name:    "system defaults take the selector of the Service selecting the pod",
			pod:     pod("ns", "app", "web", "extra", "x"),
			action:  v1.ScheduleAnyway,
			listers: webService,
			want:    []string{"kubernetes.io/hostname 3 1 Honor Ignore app=web", "topology.kubernetes.io/zone 5 1 Honor Ignore app=web"},
		},
		{
			name:    "system defaults give no hard constraints",
			pod:     pod("ns", "app", "web"),
			action:  v1.DoNotSchedule,
			listers: webService,
		},
		{
			name:   "defaults are dropped when nothing selects the pod",
			pod:    pod("ns", "app", "web"),
			action: v1.ScheduleAnyway,
		},
		{
			name:     "list defaults of the requested kind apply",
			defaults: listDefaults,
			pod:      pod("ns", "app", "web"),
			action:   v1.DoNotSchedule,
			listers:  webService,
			want:     []string{"zone 2 1 Honor Ignore app=web"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cs, err := tc.defaults.Constraints(tc.pod, tc.action, tc.listers)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, c := range cs {
				sel := c.Selector.String()
				if sel == "" {
					sel = "<everything>"
				}
				if _, ok := c.Selector.Requirements(); !ok {
					sel = "<nothing>"
				}
				got = append(got, strings.Join([]string{c.TopologyKey, itoa(c.MaxSkew), itoa(c.MinDomains), string(c.NodeAffinityPolicy), string(c.NodeTaintsPolicy), sel}, " "))
			}
			if strings.Join(got, "; ") != strings.Join(tc.want, "; ") {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func itoa(n int32) string { return strconv.Itoa(int(n)) }

func TestConstraintsReportSelectorsThatDoNotParse(t *testing.T) {
	t.Parallel()
	c := constraint("zone", v1.DoNotSchedule, "web")
	c.LabelSelector.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Near"}}
	_, err := Defaults{}.Constraints(withConstraints(pod("ns"), c), v1.DoNotSchedule, fwk.Listers{})
	if err == nil || !strings.HasPrefix(err.Error(), "obtaining pod's hard topology spread constraints: ") {
		t.Errorf("got %v, want kube-scheduler's wording", err)
	}
}

func TestDefaultSelector(t *testing.T) {
	t.Parallel()
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"},
		Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labelled("app", "web")}}}
	rsElsewhere := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "other"},
		Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: labelled("app", "elsewhere")}}}
	ss := &appsv1.StatefulSet{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "ns"},
		Spec: appsv1.StatefulSetSpec{Selector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpExists}}}}}
	rc := &v1.ReplicationController{ObjectMeta: metav1.ObjectMeta{Name: "old", Namespace: "ns"},
		Spec: v1.ReplicationControllerSpec{Selector: labelled("tier", "back")}}
	all := fwk.Listers{
		Services: fakeList[*v1.Service]{
			service("ns", labelled("app", "web")),
			service("ns", labelled("tier", "back")),
			service("ns", nil),
			service("other", labelled("app", "web")),
			service("ns", labelled("app", "db")),
			// Selects only pods labelled zone="", which none is: a
			// missing label is not an empty one.
			service("ns", labelled("zone", "")),
		},
		ReplicaSets:            fakeList[*appsv1.ReplicaSet]{rsElsewhere, rs},
		StatefulSets:           fakeList[*appsv1.StatefulSet]{ss},
		ReplicationControllers: fakeList[*v1.ReplicationController]{rc},
	}
	tests := []struct {
		name    string
		pod     *v1.Pod
		listers fwk.Listers
		want    string
	}{
		{"the selectors of the Services selecting the pod are merged", pod("ns", "app", "web", "tier", "back"), all, "app=web,tier=back"},
		{"nothing selects a pod without matching Services or a controller", pod("ns", "app", "cache"), all, ""},
		{"nil listers are empty", pod("ns", "app", "web"), fwk.Listers{}, ""},
		{"a ReplicaSet owner in the pod's namespace adds its requirements", ownedBy(pod("ns", "app", "web"), "apps/v1", "ReplicaSet", "web"), all, "app=web,app=web"},
		{"a StatefulSet owner adds its requirements", ownedBy(pod("ns", "tier", "front"), "apps/v1", "StatefulSet", "db"), all, "tier"},
		{"a ReplicationController owner's selector is merged", ownedBy(pod("ns", "app", "web"), "v1", "ReplicationController", "old"), all, "app=web,tier=back"},
		{"an owner that does not exist adds nothing", ownedBy(pod("ns", "app", "web"), "apps/v1", "ReplicaSet", "gone"), all, "app=web"},
		{"an owner of another kind adds nothing", ownedBy(pod("ns", "app", "web"), "apps/v1", "Deployment", "web"), all, "app=web"},
		{"an owner of the wrong group adds nothing", ownedBy(pod("ns", "app", "web"), "extensions/v1beta1", "ReplicaSet", "web"), all, "app=web"},
		{"an owner with a broken apiVersion adds nothing", ownedBy(pod("ns", "app", "web"), "a/b/c", "ReplicaSet", "web"), all, "app=web"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := DefaultSelector(tc.pod, tc.listers).String(); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func TestAControllerSelectorIsReadAgainOnceChanged(t *testing.T) {
	t.Parallel()
	sel := &metav1.LabelSelector{MatchLabels: labelled("app", "web")}
	rs := &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"}, Spec: appsv1.ReplicaSetSpec{Selector: sel}}
	l := fwk.Listers{ReplicaSets: fakeList[*appsv1.ReplicaSet]{rs}}
	p := ownedBy(pod("ns", "app", "web", "tier", "front"), "apps/v1", "ReplicaSet", "web")
	for _, step := range []struct {
		name   string
		change func()
		want   string
	}{
		{"as first parsed", func() {}, "app=web"},
		{"parsed before", func() {}, "app=web"},
		{"a label's value changed in place", func() { sel.MatchLabels["app"] = "web2" }, "app=web2"},
		{"an expression added in place", func() {
			sel.MatchExpressions = []metav1.LabelSelectorRequirement{{Key: "tier", Operator: metav1.LabelSelectorOpIn, Values: []string{"front"}}}
		}, "app=web2,tier in (front)"},
		{"a value of the expression changed in place", func() { sel.MatchExpressions[0].Values[0] = "back" }, "app=web2,tier in (back)"},
		{"an operator that does not parse adds nothing", func() { sel.MatchExpressions[0].Operator = "Near" }, ""},
		{"mended again", func() { sel.MatchExpressions[0].Operator = metav1.LabelSelectorOpNotIn }, "app=web2,tier notin (back)"},
	} {
		step.change()
		if got := DefaultSelector(p, l).String(); got != step.want {
			t.Fatalf("%s: got %q, want %q", step.name, got, step.want)
		}
	}
}

func TestLowestTwoTracksTheEmptiestDomain(t *testing.T) {
	t.Parallel()
	l := newLowestTwo()
	for _, d := range []struct {
		v string
		n int
	}{{"a", 4}, {"b", 2}, {"c", 3}, {"d", 5}} {
		l.set(d.v, d.n)
	}
	if l[0].value != "b" || l[0].count != 2 || l[1].value != "c" || l[1].count != 3 {
		t.Fatalf("after the initial counts got %+v, want b=2 then c=3", l)
	}
	// Pods added to the emptiest domain, one node at a time.
	l.set("b", 3)
	l.set("b", 4)
	if l[0].value != "c" || l[0].count != 3 {
		t.Errorf("after filling b got %+v, want c=3 first", l)
	}
	l.set("d", 1)
	if l[0].value != "d" || l[0].count != 1 {
		t.Errorf("after emptying d got %+v, want d=1 first", l)
	}
}

func nodeIn(name string, kv ...string) *v1.Node {
	return &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labelled(kv...)}}
}

func on(p *v1.Pod, node string) *v1.Pod {
	p.Spec.NodeName = node
	return p
}

func TestDomainsCheck(t *testing.T) {
	t.Parallel()
	nodes := nodeinfo.Build(
		[]*v1.Node{nodeIn("a1", "zone", "a"), nodeIn("a2", "zone", "a"), nodeIn("b1", "zone", "b"), nodeIn("x", "rack", "1")},
		[]*v1.Pod{on(pod("ns", "app", "web"), "a1"), on(pod("ns", "app", "web"), "a2"), on(pod("ns", "app", "db"), "b1")},
	)
	incoming := withConstraints(pod("ns", "app", "web"), constraint("zone", v1.DoNotSchedule, "web"))
	cs, err := Defaults{}.Constraints(incoming, v1.DoNotSchedule, fwk.Listers{})
	if err != nil {
		t.Fatal(err)
	}
	d, err := NewDomains(context.Background(), incoming, cs, nodes, Incremental{})
	if err != nil {
		t.Fatal(err)
	}
	if n, ok := d.Count(0, "a"); n != 2 || !ok {
		t.Errorf("zone a holds %d (%v), want 2", n, ok)
	}
	if n, ok := d.Count(0, "b"); n != 0 || !ok {
		t.Errorf("zone b holds %d (%v), want an empty domain", n, ok)
	}
	for node, want := range map[string]Verdict{"a1": TooSkewed, "b1": Fits, "x": MissingLabel} {
		if got := d.Check(nodes[map[string]int{"a1": 0, "b1": 2, "x": 3}[node]].Labels()); got != want {
			t.Errorf("%s: got %v, want %v", node, got, want)
		}
	}

	// A "what if" on a clone leaves the original as it was.
	c := d.CloneState().(*Domains)
	c.Update(pod("ns", "app", "web"), incoming, nodes[2].Node(), 1)
	c.Update(pod("ns", "app", "web"), incoming, nodes[0].Node(), -1)
	if got := c.Check(nodes[0].Labels()); got != Fits {
		t.Errorf("after moving a pod from a to b, a1 got %v, want Fits", got)
	}
	if got := d.Check(nodes[0].Labels()); got != TooSkewed {
		t.Errorf("the original changed: a1 got %v, want TooSkewed", got)
	}
	c.Update(pod("other", "app", "web"), incoming, nodes[2].Node(), 5)
	if n, _ := c.Count(0, "b"); n != 1 {
		t.Errorf("a pod of another namespace was counted: zone b holds %d, want 1", n)
	}
}

func TestScoresOfTwoZones(t *testing.T) {
	t.Parallel()
	nodes := nodeinfo.Build(
		[]*v1.Node{nodeIn("a1", "zone", "a"), nodeIn("a2", "zone", "a"), nodeIn("b1", "zone", "b"), nodeIn("bare")},
		[]*v1.Pod{on(pod("ns", "app", "web"), "a1"), on(pod("ns", "app", "web"), "a1"), on(pod("ns", "app", "web"), "b1")},
	)
	incoming := withConstraints(pod("ns", "app", "web"), constraint("zone", v1.ScheduleAnyway, "web"))
	cs, err := Defaults{}.Constraints(incoming, v1.ScheduleAnyway, fwk.Listers{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewScores(context.Background(), incoming, cs, true, nodes, nodes, nil, Incremental{})
	if err != nil {
		t.Fatal(err)
	}
	// Two zones weigh log(4): zone a's 2 pods give round(2.77) = 3, zone
	// b's 1 gives round(1.39) = 1; "bare" lacks the key and is ignored.
	raw := make([]int64, len(nodes))
	for i, ni := range nodes {
		raw[i] = s.Score(ni)
	}
	if want := []int64{3, 3, 1, 0}; !slices.Equal(raw, want) {
		t.Errorf("raw scores %v, want %v", raw, want)
	}
	s.Normalize(nodes, raw)
	// 100*(3+1-3)/3 = 33 and 100*(3+1-1)/3 = 100.
	if want := []int64{33, 33, 100, 0}; !slices.Equal(raw, want) {
		t.Errorf("normalized scores %v, want %v", raw, want)
	}
}

// TestCountsAreTheSameOnOneWorkerAsOnMany counts a cluster large enough
// for several workers, whose per-worker counts are merged, and on one.
func TestCountsAreTheSameOnOneWorkerAsOnMany(t *testing.T) {
	var nodes []*v1.Node
	var pods []*v1.Pod
	for i := range 3000 {
		name := "n" + strconv.Itoa(i)
		nodes = append(nodes, nodeIn(name, "zone", "z"+strconv.Itoa(i%7), "kubernetes.io/hostname", name))
		for j := range i % 3 {
			pods = append(pods, on(pod("ns", "app", []string{"web", "db"}[j%2]), name))
		}
	}
	cluster := nodeinfo.Build(nodes, pods)
	incoming := withConstraints(pod("ns", "app", "web"),
		constraint("zone", v1.DoNotSchedule, "web"), constraint("kubernetes.io/hostname", v1.DoNotSchedule, "web"))
	cs, err := Defaults{}.Constraints(incoming, v1.DoNotSchedule, fwk.Listers{})
	if err != nil {
		t.Fatal(err)
	}
	count := func(procs int) []map[string]int {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		e := eligibilityOf(incoming)
		keys := []podcount.Key{matchKey(cs[0].Selector, "ns"), matchKey(cs[1].Selector, "ns")}
		counts, err := countEach(context.Background(), incoming, cs, keys, &e, cluster, true, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		return counts
	}
	one, many := count(1), count(8)
	if len(one) != 2 || len(one[0]) != 7 || len(one[1]) != len(nodes) {
		t.Fatalf("counted %d zones and %d hosts, want 7 and %d", len(one[0]), len(one[1]), len(nodes))
	}
	for i := range one {
		if !maps.Equal(one[i], many[i]) {
			t.Errorf("constraint %d: %v on one worker, %v on many", i, one[i], many[i])
		}
	}
}

// TestAggregatesCountAsEveryNodeCountedAgain changes random nodes of a
// cluster, some through new NodeInfos, some in place, some by replacing
// the list, and checks after each change that counting through the
// aggregate, which visits only the changed nodes, finds what counting
// every node finds, for filtering and for scoring.
func TestAggregatesCountAsEveryNodeCountedAgain(t *testing.T) {
	aggs := new(Aggregates)
	r := rand.New(rand.NewPCG(3, 4))
	var nodes []*v1.Node
	for i := range 60 {
		name := "n" + strconv.Itoa(i)
		kv := []string{"kubernetes.io/hostname", name}
		if i%10 != 0 {
			kv = append(kv, "zone", "z"+strconv.Itoa(i%4))
		}
		nodes = append(nodes, nodeIn(name, kv...))
	}
	cluster := nodeinfo.Build(nodes, nil)
	// The first two match alike (a changed pod is matched once for
	// both), the third does not.
	incoming := withConstraints(pod("ns", "app", "web"),
		constraint("zone", v1.ScheduleAnyway, "web"), constraint("kubernetes.io/hostname", v1.ScheduleAnyway, "web"),
		constraint("zone", v1.ScheduleAnyway, "db"))
	cs, err := Defaults{}.Constraints(incoming, v1.ScheduleAnyway, fwk.Listers{})
	if err != nil {
		t.Fatal(err)
	}
	if !cacheable(incoming, cs) {
		t.Fatal("the constraints are not cacheable")
	}
	keys := []podcount.Key{matchKey(cs[0].Selector, "ns"), matchKey(cs[1].Selector, "ns"), matchKey(cs[2].Selector, "ns")}
	e := eligibilityOf(incoming)
	wantZ1 := func(_ int, value string) bool { return value != "z1" }
	var fork struct {
		i    int
		orig *nodeinfo.NodeInfo
	}
	for step := range 600 {
		i := r.IntN(len(cluster))
		p := on(pod([]string{"ns", "other"}[r.IntN(2)], "app", []string{"web", "db"}[r.IntN(2)]), cluster[i].Name())
		p.Name = "p" + strconv.Itoa(step)
		switch r.IntN(9) {
		case 8: // a fork's copy counted, then the original, changed on its own, back
			if fork.orig == nil {
				fork.i, fork.orig = i, cluster[i]
				cluster[i] = cluster[i].Clone()
				cluster[i].AddPod(p)
				break
			}
			back := fork.orig.Clone()
			q := on(pod("ns", "app", "web"), back.Name())
			q.Name = p.Name + "-back"
			back.AddPod(q)
			cluster[fork.i], fork.orig = back, nil
		case 0, 1: // a new NodeInfo, as a snapshot gets
			ni := cluster[i].Clone()
			ni.AddPod(p)
			cluster[i] = ni
		case 2: // the same NodeInfo changed in place
			cluster[i].AddPod(p)
		case 3: // a new list of the same length
			cluster = slices.Clone(cluster)
			cluster[i] = cluster[i].Clone()
			cluster[i].AddPod(p)
		case 4: // a pod removed, from a copy or in place
			if len(cluster[i].Pods()) > 0 {
				if r.IntN(2) == 0 {
					cluster[i] = cluster[i].Clone()
				}
				if err := cluster[i].RemovePod(cluster[i].Pods()[r.IntN(len(cluster[i].Pods()))].Pod); err != nil {
					t.Fatal(err)
				}
			}
		case 5: // a pod being deleted, which counts nothing
			p.DeletionTimestamp = &metav1.Time{}
			cluster[i] = cluster[i].Clone()
			cluster[i].AddPod(p)
		case 6: // the node moves zone, its pods staying
			node := cluster[i].Node().DeepCopy()
			node.Labels["zone"] = "z" + strconv.Itoa(r.IntN(5))
			cluster[i] = cluster[i].Clone()
			cluster[i].SetNode(node)
		default: // a burst on one node, longer than a NodeInfo remembers
			ni := cluster[i].Clone()
			for k := range 2 + r.IntN(4) {
				q := p.DeepCopy()
				q.Name, q.UID = p.Name+"-"+strconv.Itoa(k), ""
				ni.AddPod(q)
			}
			// A sibling that parts ways, as a fork's copy does.
			sibling := cluster[i].Clone()
			sibling.AddPod(p)
			cluster[i] = ni
		}
		if step%3 == 1 {
			continue // changes pile up before the next count
		}
		for _, tc := range []struct {
			requireAll bool
			want       func(int, string) bool
			counted    []bool
		}{{true, nil, nil}, {false, wantZ1, []bool{true, false, true}}} {
			// Every other step, the generations come beside the nodes,
			// as a snapshot keeps them.
			var gens []int64
			if step%2 == 0 {
				gens = generationsOf(cluster)
			}
			got, err := countDomains(context.Background(), incoming, cs, &e, cluster, Incremental{Aggregates: aggs, Gens: gens}, tc.requireAll, tc.want, tc.counted)
			if err != nil {
				t.Fatal(err)
			}
			want, err := countEach(context.Background(), incoming, cs, keys, &e, cluster, tc.requireAll, tc.want, tc.counted)
			if err != nil {
				t.Fatal(err)
			}
			for c := range cs {
				if !maps.Equal(got[c], want[c]) {
					t.Fatalf("step %d, requireAll %v, constraint %d: aggregate counted %v, every node %v", step, tc.requireAll, c, got[c], want[c])
				}
			}
		}
	}
}

func TestScoresFromAnAggregateEqualThoseOfEachNode(t *testing.T) {
	aggs := new(Aggregates)
	r := rand.New(rand.NewPCG(5, 6))
	var nodes []*v1.Node
	for i := range 80 {
		name := "n" + strconv.Itoa(i)
		kv := []string{"kubernetes.io/hostname", name}
		switch {
		case i%10 == 0: // no zone label
		case i%10 == 1: // a zone label with the empty value
			kv = append(kv, "zone", "")
		case i == 7: // alone in its zone, until it moves (step 100)
			kv = append(kv, "zone", "lonely")
		default:
			kv = append(kv, "zone", "z"+strconv.Itoa(i%4))
		}
		nodes = append(nodes, nodeIn(name, kv...))
	}
	cluster := nodeinfo.Build(nodes, nil)
	zone := constraint("zone", v1.ScheduleAnyway, "web")
	zone.MaxSkew = 2
	incoming := withConstraints(pod("ns", "app", "web"), zone, constraint("kubernetes.io/hostname", v1.ScheduleAnyway, "web"))
	cs, err := Defaults{}.Constraints(incoming, v1.ScheduleAnyway, fwk.Listers{})
	if err != nil {
		t.Fatal(err)
	}
	for step := range 200 {
		i := r.IntN(len(cluster))
		p := on(pod([]string{"ns", "other"}[r.IntN(2)], "app", []string{"web", "db"}[r.IntN(2)]), cluster[i].Name())
		p.Name = "p" + strconv.Itoa(step)
		if r.IntN(2) == 0 {
			cluster = slices.Clone(cluster)
			cluster[i] = cluster[i].Clone()
		}
		if len(cluster[i].Pods()) > 0 && r.IntN(4) == 0 {
			if err := cluster[i].RemovePod(cluster[i].Pods()[0].Pod); err != nil {
				t.Fatal(err)
			}
		} else {
			cluster[i].AddPod(p)
		}
		if step == 100 {
			// The lonely zone is left without nodes, and its domain
			// without members.
			cluster = slices.Clone(cluster)
			cluster[7] = cluster[7].Clone()
			moved := cluster[7].Node().DeepCopy()
			moved.Labels["zone"] = "z1"
			cluster[7].SetNode(moved)
		}
		positions := func(nodes []*nodeinfo.NodeInfo) ([]int32, bool) {
			var at []int32
			for _, ni := range nodes {
				at = append(at, int32(slices.Index(cluster, ni)))
			}
			return at, true
		}
		// Every third step, every node is feasible.
		var feasible []*nodeinfo.NodeInfo
		for _, ni := range cluster {
			if step%3 == 0 || r.IntN(4) != 0 {
				feasible = append(feasible, ni)
			}
		}
		for _, requireAll := range []bool{true, false} {
			fast, err := NewScores(context.Background(), incoming, cs, requireAll, cluster, feasible, positions, Incremental{Aggregates: aggs, Gens: generationsOf(cluster)})
			if err != nil {
				t.Fatal(err)
			}
			if fast.raw == nil {
				t.Fatal("the scores were not worked out from an aggregate")
			}
			each, err := NewScores(context.Background(), incoming, cs, requireAll, cluster, feasible, nil, Incremental{})
			if err != nil {
				t.Fatal(err)
			}
			gotRaw, wantRaw := make([]int64, len(feasible)), make([]int64, len(feasible))
			// In two batches, as the framework's workers ask.
			half := len(feasible) / 2
			if !fast.Batch(0, gotRaw[:half]) || !fast.Batch(half, gotRaw[half:]) {
				t.Fatalf("step %d: the feasible nodes have no scores worked out", step)
			}
			for j, ni := range feasible {
				if got, want := fast.Score(ni), each.Score(ni); got != want {
					t.Fatalf("step %d: Score of %s is %d with the aggregate's counts, %d without", step, ni.Name(), got, want)
				}
				wantRaw[j] = each.Score(ni)
			}
			if fast.Batch(len(feasible), make([]int64, 1)) || fast.Batch(-1, make([]int64, 1)) {
				t.Fatalf("step %d: a batch beyond the feasible nodes has scores", step)
			}
			if !slices.Equal(gotRaw, wantRaw) {
				t.Fatalf("step %d, requireAll %v: raw scores from the aggregate %v, node by node %v", step, requireAll, gotRaw, wantRaw)
			}
			fast.Normalize(feasible, gotRaw)
			each.Normalize(feasible, wantRaw)
			if !slices.Equal(gotRaw, wantRaw) {
				t.Fatalf("step %d, requireAll %v: normalized scores from the aggregate %v, node by node %v", step, requireAll, gotRaw, wantRaw)
			}
		}
	}
}

// generationsOf returns the generation of each of nodes.
func generationsOf(nodes []*nodeinfo.NodeInfo) []int64 {
	gens := make([]int64, len(nodes))
	for i, ni := range nodes {
		gens[i] = ni.Generation()
	}
	return gens
}

// TestNormalizeDividesAsKubeScheduler: whatever the spread of raw scores
// (few values, many, negative ones from maxSkew 0, ignored nodes),
// Normalize gives each node kube-scheduler's
// MaxNodeScore*(max+min-score)/max over the nodes not ignored, 0 for
// ignored nodes and for a raw -1, and MaxNodeScore for all when the
// highest is 0.
func TestNormalizeDividesAsKubeScheduler(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name         string
		spread, from int64
		ignoreEvery  int
	}{
		{"a few values over many nodes are looked up", 7, 0, 0},
		{"all zero scores all get the maximum", 1, 0, 0},
		{"values spread wider than the table are divided one by one", 5000, 0, 0},
		{"a raw -1 scores 0 as an ignored node does", 6, -1, 0},
		{"scores below -1 are divided one by one", 6, -3, 0},
		{"ignored nodes score 0 and count for neither end", 9, 0, 3},
		{"more values than nodes are divided one by one", 400, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := rand.New(rand.NewPCG(uint64(tc.spread), 7))
			n := 300
			if tc.name == "a few values over many nodes are looked up" {
				n = 3000
			}
			nodes := make([]*nodeinfo.NodeInfo, n)
			s := &Scores{ignored: sets.New[string]()}
			raw := make([]int64, n)
			for i := range nodes {
				name := "n" + strconv.Itoa(i)
				nodes[i] = nodeinfo.New(&v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}})
				raw[i] = tc.from + r.Int64N(tc.spread)
				if tc.ignoreEvery > 0 && i%tc.ignoreEvery == 0 {
					s.ignored.Insert(name)
				}
			}
			want := slices.Clone(raw)
			lowest, highest := int64(1<<62), int64(0)
			for i, ni := range nodes {
				if !s.ignored.Has(ni.Name()) {
					lowest, highest = min(lowest, raw[i]), max(highest, raw[i])
				}
			}
			for i, ni := range nodes {
				switch {
				case s.ignored.Has(ni.Name()), raw[i] == -1:
					want[i] = 0
				case highest == 0:
					want[i] = fwk.MaxNodeScore
				default:
					want[i] = fwk.MaxNodeScore * (highest + lowest - raw[i]) / highest
				}
			}
			got := slices.Clone(raw)
			s.Normalize(nodes, got)
			if !slices.Equal(got, want) {
				for i := range got {
					if got[i] != want[i] {
						t.Fatalf("node %d, raw %d (lowest %d, highest %d): normalized to %d, want %d", i, raw[i], lowest, highest, got[i], want[i])
					}
				}
			}
		})
	}
}

// TestRawScoresBeyondInt32FromAnAggregate: raw scores are kept in 32
// bits when they fit; maxSkew near its int32 limit on two constraints
// gives scores that do not, which must come out whole.
func TestRawScoresBeyondInt32FromAnAggregate(t *testing.T) {
	aggs := new(Aggregates)
	var nodes []*v1.Node
	for i := range 6 {
		name := "n" + strconv.Itoa(i)
		nodes = append(nodes, nodeIn(name, "kubernetes.io/hostname", name, "zone", "z"+strconv.Itoa(i%2)))
	}
	cluster := nodeinfo.Build(nodes, []*v1.Pod{on(pod("ns", "app", "web"), "n1")})
	zone, host := constraint("zone", v1.ScheduleAnyway, "web"), constraint("kubernetes.io/hostname", v1.ScheduleAnyway, "web")
	zone.MaxSkew, host.MaxSkew = math.MaxInt32, math.MaxInt32
	incoming := withConstraints(pod("ns", "app", "web"), zone, host)
	cs, err := Defaults{}.Constraints(incoming, v1.ScheduleAnyway, fwk.Listers{})
	if err != nil {
		t.Fatal(err)
	}
	positions := func(nodes []*nodeinfo.NodeInfo) ([]int32, bool) {
		var at []int32
		for _, ni := range nodes {
			at = append(at, int32(slices.Index(cluster, ni)))
		}
		return at, true
	}
	fast, err := NewScores(context.Background(), incoming, cs, true, cluster, cluster, positions, Incremental{Aggregates: aggs, Gens: generationsOf(cluster)})
	if err != nil {
		t.Fatal(err)
	}
	got := make([]int64, len(cluster))
	if !fast.Batch(0, got) {
		t.Fatal("no scores worked out from the aggregate")
	}
	for i, ni := range cluster {
		want := fast.Score(ni)
		if want <= math.MaxInt32 {
			t.Fatalf("%s: raw score %d fits in 32 bits; the test needs more", ni.Name(), want)
		}
		if got[i] != want {
			t.Fatalf("%s: raw score %d from the aggregate, %d node by node", ni.Name(), got[i], want)
		}
	}
}
