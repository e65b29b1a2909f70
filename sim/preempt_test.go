package sim_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/sim"
)

func withPriority(p *v1.Pod, priority int32) *v1.Pod {
	p.Spec.Priority = &priority
	return p
}

func TestPlacePreemptingEvictsTheVictimsAndPlacesThePod(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		pod  *v1.Pod
		// wantNode is where the pod goes, "" nowhere; wantVictims the
		// pods evicted; wantLayout the cluster afterwards.
		wantNode    string
		wantVictims []string
		wantLayout  string
	}{
		{name: "a pod that fits takes no one's place", pod: withPriority(pod("fits", "500m"), 1000),
			wantNode: "a", wantLayout: "a:fits,low b:other"},
		{name: "a more important pod evicts the less important one and takes its node", pod: withPriority(pod("important", "1500m"), 1000),
			wantNode: "a", wantVictims: []string{"low"}, wantLayout: "a:important b:other"},
		{name: "a pod of the same priority evicts no one", pod: withPriority(pod("peer", "1500m"), 0),
			wantLayout: "a:low b:other"},
		{name: "a pod no eviction makes room for evicts no one", pod: withPriority(pod("huge", "8"), 1000),
			wantLayout: "a:low b:other"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			low := withPriority(on(pod("low", "1500m"), "a"), 0)
			other := withPriority(on(pod("other", "500m"), "b"), 2000)
			c := newCluster(t, []*v1.Node{node("a", "2"), node("b", "1")}, []*v1.Pod{low, other})
			res, p, err := c.PlacePreempting(context.Background(), tc.pod)
			var fitErr *framework.FitError
			switch {
			case tc.wantNode != "" && (err != nil || res.SuggestedHost != tc.wantNode):
				t.Errorf("placed on %v, %v; want %s", res, err, tc.wantNode)
			case tc.wantNode == "" && !errors.As(err, &fitErr):
				t.Errorf("error %v, want a FitError", err)
			}
			var victims []string
			if p != nil {
				for _, v := range p.Victims {
					victims = append(victims, v.Name)
				}
			}
			if !slices.Equal(victims, tc.wantVictims) {
				t.Errorf("victims %v, want %v", victims, tc.wantVictims)
			}
			if got := layout(c.Nodes()); got != tc.wantLayout {
				t.Errorf("layout %s, want %s", got, tc.wantLayout)
			}
		})
	}
}

func TestPlaceAllPreemptsWhenAsked(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name              string
		preempt, firstFit bool
		wantPlaced        []bool
		wantVictims       []string
		wantLayout        string
	}{
		{name: "without Preempt the important pod waits", wantPlaced: []bool{false, true},
			wantLayout: "a:low b:small"},
		{name: "with Preempt it evicts, is placed, and the next pod sees the change", preempt: true,
			wantPlaced: []bool{true, true}, wantVictims: []string{"low"}, wantLayout: "a:important b:small"},
		{name: "first fit never preempts", preempt: true, firstFit: true, wantPlaced: []bool{false, true},
			wantLayout: "a:low b:small"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			low := withPriority(on(pod("low", "1500m"), "a"), 0)
			c := newCluster(t, []*v1.Node{node("a", "2"), node("b", "1")}, []*v1.Pod{low})
			pods := []*v1.Pod{withPriority(pod("important", "1500m"), 1000), pod("small", "1")}
			var victims, calls []string
			opts := []sim.PlaceOption{sim.AfterEach(func(i int, _ *framework.Result, _ error) { calls = append(calls, "placed "+pods[i].Name) })}
			if tc.preempt {
				opts = append(opts, sim.Preempt(func(i int, p *fwk.Preemption) {
					calls = append(calls, "preempted for "+pods[i].Name)
					for _, v := range p.Victims {
						victims = append(victims, v.Name)
					}
				}))
			}
			if tc.firstFit {
				opts = append(opts, sim.FirstFit())
			}
			res, err := c.PlaceAll(context.Background(), pods, opts...)
			if err != nil {
				t.Fatal(err)
			}
			for i, want := range tc.wantPlaced {
				if (res[i] != nil) != want {
					t.Errorf("pod %s placed: %v, want %v", pods[i].Name, res[i] != nil, want)
				}
			}
			if !slices.Equal(victims, tc.wantVictims) {
				t.Errorf("victims %v, want %v", victims, tc.wantVictims)
			}
			if len(tc.wantVictims) > 0 && !slices.Equal(calls, []string{"preempted for important", "placed important", "placed small"}) {
				t.Errorf("calls %q, want the preemption reported before AfterEach", calls)
			}
			if got := layout(c.Nodes()); got != tc.wantLayout {
				t.Errorf("layout %s, want %s", got, tc.wantLayout)
			}
		})
	}
}
