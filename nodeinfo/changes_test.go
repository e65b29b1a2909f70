package nodeinfo

import (
	"slices"
	"testing"
)

func TestANodeInfoTellsThePodsChangedSinceAGeneration(t *testing.T) {
	t.Parallel()
	// changed lists what PodChangesSince reports from since.
	changed := func(ni *NodeInfo, since int64) ([]string, bool) {
		var out []string
		changes, ok := ni.PodChangesSince(since)
		for _, c := range changes {
			op := "+"
			if c.Sign < 0 {
				op = "-"
			}
			out = append(out, op+c.Pod.Pod.Name)
		}
		return out, ok
	}
	a := New(node("n"))
	g0 := a.generation
	a.AddPod(pod("p1", "n"))
	g1 := a.generation
	b := a.Clone()
	b.AddPod(pod("p2", "n"))
	if err := b.RemovePod(pod("p1", "n")); err != nil {
		t.Fatal(err)
	}
	sibling := a.Clone()
	sibling.AddPod(pod("p3", "n"))
	burst := b.Clone()
	var afterQ1 int64
	for _, name := range []string{"q1", "q2", "q3", "q4"} {
		burst.AddPod(pod(name, "n"))
		if name == "q1" {
			afterQ1 = burst.generation
		}
	}
	relabelled := b.Clone()
	relabelled.SetNode(node("n"))
	reimaged := b.Clone()
	reimaged.SetImageStates(nil)
	for _, tc := range []struct {
		name  string
		ni    *NodeInfo
		since int64
		want  []string
		ok    bool
	}{
		{"a pod added to the node as it was", a, g0, []string{"+p1"}, true},
		{"a copy's own changes, oldest first", b, g1, []string{"+p2", "-p1"}, true},
		{"a copy's changes and the original's before it", b, g0, []string{"+p1", "+p2", "-p1"}, true},
		{"a sibling's generation is not its past", b, sibling.generation, nil, false},
		{"a generation it never had", a, b.generation, nil, false},
		{"more changes than it remembers", burst, g1, nil, false},
		{"the last few of a burst", burst, afterQ1, []string{"+q2", "+q3", "+q4"}, true},
		{"a new node object forgets the pods' changes", relabelled, g1, nil, false},
		{"new image states forget them too", reimaged, g1, nil, false},
		{"generation 0 is no one's", a, 0, nil, false},
	} {
		got, ok := changed(tc.ni, tc.since)
		if ok != tc.ok || !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, %v; want %v, %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
}
