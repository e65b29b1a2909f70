package podaffinity

import (
	"errors"
	"maps"
	"math/rand/v2"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

func pod(ns string, kv ...string) *v1.Pod {
	l := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		l[kv[i]] = kv[i+1]
	}
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: ns, Labels: l}}
}

func withTerm(p *v1.Pod, t v1.PodAffinityTerm) *v1.Pod {
	p.Spec.Affinity = &v1.Affinity{PodAffinity: &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{t}}}
	return p
}

func appIs(v string) *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchLabels: map[string]string{"app": v}}
}

func bogus() *metav1.LabelSelector {
	return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Bogus"}}}
}

type namespaces []*v1.Namespace

func (l namespaces) List(sel labels.Selector) ([]*v1.Namespace, error) {
	var out []*v1.Namespace
	for _, ns := range l {
		if sel.Matches(labels.Set(ns.Labels)) {
			out = append(out, ns)
		}
	}
	return out, nil
}

func (l namespaces) Get(name string) (*v1.Namespace, error) {
	for _, ns := range l {
		if ns.Name == name {
			return ns, nil
		}
	}
	return nil, errors.New("not found")
}

var cluster = namespaces{
	{ObjectMeta: metav1.ObjectMeta{Name: "red", Labels: map[string]string{"team": "x"}}},
	{ObjectMeta: metav1.ObjectMeta{Name: "blue", Labels: map[string]string{"team": "y"}}},
}

func TestTermMatches(t *testing.T) {
	t.Parallel()
	teamX := &metav1.LabelSelector{MatchLabels: map[string]string{"team": "x"}}
	tests := []struct {
		name      string
		term      v1.PodAffinityTerm
		candidate *v1.Pod
		nsLabels  labels.Set
		want      bool
	}{
		{"a term applies to its owner's namespace by default", v1.PodAffinityTerm{LabelSelector: appIs("web")}, pod("red", "app", "web"), nil, true},
		{"a term ignores other namespaces by default", v1.PodAffinityTerm{LabelSelector: appIs("web")}, pod("blue", "app", "web"), nil, false},
		{"listed namespaces replace the owner's", v1.PodAffinityTerm{LabelSelector: appIs("web"), Namespaces: []string{"blue"}}, pod("red", "app", "web"), nil, false},
		{"a listed namespace matches", v1.PodAffinityTerm{LabelSelector: appIs("web"), Namespaces: []string{"blue"}}, pod("blue", "app", "web"), nil, true},
		{"a namespace selector matches by the namespace's labels", v1.PodAffinityTerm{LabelSelector: appIs("web"), NamespaceSelector: teamX}, pod("blue", "app", "web"), labels.Set{"team": "x"}, true},
		{"a namespace selector alone drops the owner's namespace", v1.PodAffinityTerm{LabelSelector: appIs("web"), NamespaceSelector: teamX}, pod("red", "app", "web"), labels.Set{"team": "y"}, false},
		{"an empty namespace selector matches every namespace", v1.PodAffinityTerm{LabelSelector: appIs("web"), NamespaceSelector: &metav1.LabelSelector{}}, pod("blue", "app", "web"), nil, true},
		{"the label selector must match too", v1.PodAffinityTerm{LabelSelector: appIs("web")}, pod("red", "app", "db"), nil, false},
		{"a nil label selector matches nothing", v1.PodAffinityTerm{}, pod("red", "app", "web"), nil, false},
		{"an empty label selector matches everything", v1.PodAffinityTerm{LabelSelector: &metav1.LabelSelector{}}, pod("red"), nil, true},
		{"matchLabelKeys are left to the API server", v1.PodAffinityTerm{LabelSelector: &metav1.LabelSelector{}, MatchLabelKeys: []string{"app"}}, pod("red", "app", "other"), nil, true},
		{"mismatchLabelKeys are left to the API server", v1.PodAffinityTerm{LabelSelector: &metav1.LabelSelector{}, MismatchLabelKeys: []string{"app"}}, pod("red", "app", "web"), nil, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			owner := withTerm(pod("red", "app", "web"), tc.term)
			terms, err := Parse(owner)
			if err != nil || len(terms.RequiredAffinity) != 1 {
				t.Fatalf("Parse = %+v, %v", terms, err)
			}
			if got := terms.RequiredAffinity[0].Matches(tc.candidate, tc.nsLabels); got != tc.want {
				t.Errorf("Matches = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestAZeroTermMatchesNothing(t *testing.T) {
	t.Parallel()
	var term Term
	if term.Matches(pod("red"), nil) {
		t.Error("the zero Term matched a pod")
	}
}

func TestParseDropsOnlyTheListThatFails(t *testing.T) {
	t.Parallel()
	p := pod("red")
	p.Spec.Affinity = &v1.Affinity{
		PodAffinity: &v1.PodAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution:  []v1.PodAffinityTerm{{LabelSelector: appIs("a")}, {LabelSelector: bogus()}},
			PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{{Weight: 3, PodAffinityTerm: v1.PodAffinityTerm{LabelSelector: appIs("b"), TopologyKey: "zone"}}},
		},
		PodAntiAffinity: &v1.PodAntiAffinity{
			PreferredDuringSchedulingIgnoredDuringExecution: []v1.WeightedPodAffinityTerm{{Weight: 1, PodAffinityTerm: v1.PodAffinityTerm{
				LabelSelector: appIs("c"), NamespaceSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "team", Operator: metav1.LabelSelectorOpIn}}},
			}}},
		},
	}
	terms, err := Parse(p)
	const want = `[requiredAffinityTerms: "Bogus" is not a valid label selector operator, ` +
		`preferredAntiAffinityTerms: values: Invalid value: null: for 'in', 'notin' operators, values set can't be empty]`
	if err == nil || err.Error() != want {
		t.Errorf("error = %v, want %s", err, want)
	}
	if terms.RequiredAffinity != nil || terms.PreferredAntiAffinity != nil {
		t.Errorf("failing lists kept: %+v", terms)
	}
	if len(terms.PreferredAffinity) != 1 || terms.PreferredAffinity[0].Weight != 3 || terms.PreferredAffinity[0].TopologyKey != "zone" {
		t.Errorf("PreferredAffinity = %+v, want the one good term", terms.PreferredAffinity)
	}
}

func TestParseOfAPodWithoutPodAffinityDoesNotAllocate(t *testing.T) {
	p := pod("red")
	p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{}}
	if n := testing.AllocsPerRun(100, func() { _, _ = Parse(p) }); n != 0 {
		t.Errorf("Parse allocated %v times", n)
	}
}

func TestResolveAddsTheSelectedNamespaces(t *testing.T) {
	t.Parallel()
	teamX := &metav1.LabelSelector{MatchLabels: map[string]string{"team": "x"}}
	notTeamX := &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "team", Operator: metav1.LabelSelectorOpNotIn, Values: []string{"x"}}}}
	tests := []struct {
		name      string
		term      v1.PodAffinityTerm
		lister    NamespaceLister
		candidate *v1.Pod
		want      bool
		// wantListedOnly is the match from v1.37, where only the listed
		// namespaces count.
		wantListedOnly bool
	}{
		{"a selected namespace matches", v1.PodAffinityTerm{LabelSelector: appIs("web"), NamespaceSelector: teamX}, cluster, pod("red", "app", "web"), true, true},
		{"an unselected namespace does not", v1.PodAffinityTerm{LabelSelector: appIs("web"), NamespaceSelector: teamX}, cluster, pod("blue", "app", "web"), false, false},
		{"listed namespaces are kept", v1.PodAffinityTerm{LabelSelector: appIs("web"), NamespaceSelector: teamX, Namespaces: []string{"green"}}, cluster, pod("green", "app", "web"), true, true},
		{"no lister means no namespaces to add", v1.PodAffinityTerm{LabelSelector: appIs("web"), NamespaceSelector: teamX}, nil, pod("red", "app", "web"), false, false},
		// Before v1.37 kube-scheduler keeps the selector and matches it
		// against no labels, which NotIn accepts: every namespace then
		// matches. From v1.37 only the listed namespaces do.
		{"a selector accepting no labels matches every namespace before v1.37", v1.PodAffinityTerm{LabelSelector: appIs("web"), NamespaceSelector: notTeamX}, cluster, pod("nowhere", "app", "web"), true, false},
		{"a selector accepting no labels still matches the namespaces it lists", v1.PodAffinityTerm{LabelSelector: appIs("web"), NamespaceSelector: notTeamX}, cluster, pod("blue", "app", "web"), true, true},
		{"without a lister, a selector accepting no labels matches nothing from v1.37", v1.PodAffinityTerm{LabelSelector: appIs("web"), NamespaceSelector: notTeamX}, nil, pod("blue", "app", "web"), true, false},
		{"an empty selector matches every namespace", v1.PodAffinityTerm{LabelSelector: appIs("web"), NamespaceSelector: &metav1.LabelSelector{}}, cluster, pod("nowhere", "app", "web"), true, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			terms, err := Parse(withTerm(pod("blue"), tc.term))
			if err != nil {
				t.Fatal(err)
			}
			orig := terms.RequiredAffinity[0]
			for _, listedOnly := range []bool{false, true} {
				resolved, err := orig.Resolve(tc.lister, listedOnly)
				if err != nil {
					t.Fatal(err)
				}
				want := tc.want
				if listedOnly {
					want = tc.wantListedOnly
				}
				if got := MatchesAll([]Term{resolved}, tc.candidate); got != want {
					t.Errorf("listedOnly %v: MatchesAll = %v, want %v", listedOnly, got, want)
				}
			}
			if len(tc.term.Namespaces) == 0 && orig.namespaces.Len() != 0 {
				t.Errorf("Resolve changed the original term: %v", orig.namespaces)
			}
		})
	}
}

type failingLister struct{ namespaces }

func (failingLister) List(labels.Selector) ([]*v1.Namespace, error) { return nil, errors.New("boom") }

func TestResolveReturnsTheListersError(t *testing.T) {
	t.Parallel()
	terms, _ := Parse(withTerm(pod("red"), v1.PodAffinityTerm{LabelSelector: appIs("a"), NamespaceSelector: appIs("x")}))
	if _, err := terms.RequiredAffinity[0].Resolve(failingLister{}, true); err == nil || err.Error() != "boom" {
		t.Errorf("err = %v, want boom", err)
	}
}

func TestMatchesAllNeedsAtLeastOneTerm(t *testing.T) {
	t.Parallel()
	if MatchesAll(nil, pod("red")) {
		t.Error("no terms matched a pod")
	}
}

func TestNamespaceLabels(t *testing.T) {
	t.Parallel()
	if got := NamespaceLabels(cluster, "red"); got["team"] != "x" {
		t.Errorf("red = %v", got)
	}
	if got := NamespaceLabels(cluster, "missing"); got != nil {
		t.Errorf("missing = %v, want nil", got)
	}
	if got := NamespaceLabels(nil, "red"); got != nil {
		t.Errorf("nil lister = %v, want nil", got)
	}
}

func TestCountsDropZeroEntries(t *testing.T) {
	t.Parallel()
	c := &Counts{}
	c.Add("zone", "a", 2)
	c.Add("host", "n1", 1)
	clone := c.Clone()
	c.Add("zone", "a", -2)
	if c.Get("zone", "a") != 0 || c.Len() != 1 {
		t.Errorf("after cancelling out: %v, want only host", c)
	}
	if clone.Get("zone", "a") != 2 {
		t.Errorf("the clone changed with the original: %v", clone)
	}
	node := map[string]string{"zone": "a", "host": "n1"}
	if !clone.AnyPositive(node) || clone.Sum(node) != 3 {
		t.Errorf("AnyPositive = %v, Sum = %d; want true, 3", clone.AnyPositive(node), clone.Sum(node))
	}
	c.Add("host", "n1", -2)
	if c.AnyPositive(node) || c.Sum(node) != -1 {
		t.Errorf("negative count: AnyPositive = %v, Sum = %d; want false, -1", c.AnyPositive(node), c.Sum(node))
	}
	c.Add("host", "n1", 1)
	if c.Len() != 0 || c.Sum(node) != 0 {
		t.Errorf("back to zero from below: Len = %d, Sum = %d; want 0, 0", c.Len(), c.Sum(node))
	}
	var none *Counts
	if none.Len() != 0 || none.Get("zone", "a") != 0 || none.AnyPositive(node) || none.Sum(node) != 0 || none.Clone().Len() != 0 {
		t.Error("a nil Counts does not read as empty")
	}
}

func TestCountsMerge(t *testing.T) {
	t.Parallel()
	node := map[string]string{"zone": "a", "host": "n1"}
	tests := []struct {
		name      string
		into, add func(*Counts)
		wantSum   int64
		wantLen   int
	}{
		{"a key only the other has is taken over",
			func(c *Counts) { c.Add("zone", "a", 1) },
			func(c *Counts) { c.Add("host", "n1", 2) },
			3, 2},
		{"counts of a shared key add up",
			func(c *Counts) { c.Add("zone", "a", 1) },
			func(c *Counts) { c.Add("zone", "a", 4); c.Add("zone", "b", 1) },
			5, 1},
		{"counts that cancel out leave no key",
			func(c *Counts) { c.Add("zone", "a", 2) },
			func(c *Counts) { c.Add("zone", "a", -2) },
			0, 0},
		{"a negative count taken over still cancels later",
			func(c *Counts) {},
			func(c *Counts) { c.Add("zone", "a", -1) },
			-1, 1},
		{"merging into an empty Counts copies everything",
			func(c *Counts) {},
			func(c *Counts) { c.Add("zone", "a", 1); c.Add("host", "n1", 1) },
			2, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			into, add := &Counts{}, &Counts{}
			tc.into(into)
			tc.add(add)
			into.Merge(add)
			if got := into.Sum(node); got != tc.wantSum {
				t.Errorf("Sum = %d, want %d", got, tc.wantSum)
			}
			if got := into.Len(); got != tc.wantLen {
				t.Errorf("Len = %d, want %d", got, tc.wantLen)
			}
			// Whatever was merged must still reach zero exactly.
			into.Add("zone", "a", -into.Get("zone", "a"))
			into.Add("zone", "b", -into.Get("zone", "b"))
			into.Add("host", "n1", -into.Get("host", "n1"))
			if into.Len() != 0 {
				t.Errorf("after cancelling every count Len = %d, want 0", into.Len())
			}
		})
	}
}

// FuzzMatchLabelsAgreesWithTheSelector checks the direct matchLabels test
// against apimachinery's selector for any labels on either side.
func FuzzMatchLabelsAgreesWithTheSelector(f *testing.F) {
	f.Add("app", "web", "", "", "app", "web", "tier", "db")
	f.Add("app", "web", "tier", "db", "app", "web", "", "")
	f.Add("app", "", "", "", "app", "", "", "")
	f.Add("a/b", "x", "c", "y", "a/b", "x", "c", "z")
	f.Fuzz(func(t *testing.T, k1, val1, k2, val2, pk1, pv1, pk2, pv2 string) {
		match := map[string]string{}
		for _, kv := range [][2]string{{k1, val1}, {k2, val2}} {
			if kv[0] != "" {
				match[kv[0]] = kv[1]
			}
		}
		selector := &metav1.LabelSelector{MatchLabels: match}
		want, err := metav1.LabelSelectorAsSelector(selector)
		owner := withTerm(pod("red"), v1.PodAffinityTerm{LabelSelector: selector})
		terms, parseErr := Parse(owner)
		if (err != nil) != (parseErr != nil) {
			t.Fatalf("selector error %v, Parse error %v", err, parseErr)
		}
		if err != nil {
			return
		}
		candidate := pod("red", pk1, pv1, pk2, pv2)
		if got, want := terms.RequiredAffinity[0].Matches(candidate, nil), want.Matches(labels.Set(candidate.Labels)); got != want {
			t.Fatalf("Matches(%v) with matchLabels %v = %v, selector says %v", candidate.Labels, match, got, want)
		}
	})
}

// TestCountsCountAsAMapThroughResets adds random counts, positive and
// negative, to a few topology pairs, emptying the Counts now and then,
// and compares it after every step with a plain map: keys that empty
// hand their maps on to keys that come later, which must start empty.
func TestCountsCountAsAMapThroughResets(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 9))
	keys := []string{"zone", "host", "rack", "region"}
	values := []string{"a", "b", "c"}
	c := &Counts{}
	want := map[string]int64{}
	for step := range 5000 {
		if r.IntN(50) == 0 {
			c.Reset()
			clear(want)
		} else {
			key, value, n := keys[r.IntN(len(keys))], values[r.IntN(len(values))], int64(r.IntN(5)-2)
			c.Add(key, value, n)
			if want[key+"="+value] += n; want[key+"="+value] == 0 {
				delete(want, key+"="+value)
			}
		}
		got := map[string]int64{}
		c.Each(func(key, value string, n int64) {
			if n == 0 {
				t.Fatalf("step %d: a zero count of %s=%s is kept", step, key, value)
			}
			got[key+"="+value] = n
		})
		if !maps.Equal(got, want) {
			t.Fatalf("step %d: counts %v, want %v", step, got, want)
		}
		withKey := map[string]bool{}
		for pair := range want {
			withKey[strings.SplitN(pair, "=", 2)[0]] = true
		}
		if c.Len() != len(withKey) {
			t.Fatalf("step %d: Len = %d, want %d keys counted", step, c.Len(), len(withKey))
		}
	}
}

func TestCountingAgainIntoResetCountsDoesNotAllocate(t *testing.T) {
	c := &Counts{}
	count := func() {
		c.Reset()
		c.Add("kubernetes.io/hostname", "n1", 1)
		c.Add("zone", "a", 2)
	}
	count()
	if n := testing.AllocsPerRun(100, count); n != 0 {
		t.Errorf("counting again allocates %v times, want 0", n)
	}
}
