package framework_test

import (
	"context"
	"math/rand/v2"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/fwk"
)

func TestUsingListersServesOtherObjectsToTheSamePlugins(t *testing.T) {
	t.Parallel()
	var got fwk.Listers
	f := mustNew(t, framework.WithPlugin(&capture{got: &got}, 0), framework.WithObjects(&v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "old"}}))
	other, err := fwk.NewListers(&v1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "new"}})
	if err != nil {
		t.Fatal(err)
	}
	g := f.UsingListers(other)
	for _, tc := range []struct {
		fw   *framework.Framework
		want string
	}{{g, "new"}, {f, "old"}} {
		if _, err := tc.fw.Schedule(context.Background(), &v1.Pod{}, nodes("a")); err != nil {
			t.Fatal(err)
		}
		if _, err := got.Namespaces.Get(tc.want); err != nil {
			t.Errorf("the plugin read %v, want the namespace %q", err, tc.want)
		}
	}
}

func TestUsingListersSharesTheRandomSource(t *testing.T) {
	t.Parallel()
	draws := func(fws ...*framework.Framework) []int {
		var out []int
		for i := range 6 {
			out = append(out, fws[i%len(fws)].IntN(1000))
		}
		return out
	}
	a := mustNew(t, framework.WithRandSource(rand.NewPCG(3, 4)))
	want := draws(a)
	b := mustNew(t, framework.WithRandSource(rand.NewPCG(3, 4)))
	if got := draws(b, b.UsingListers(fwk.Listers{})); !slices.Equal(got, want) {
		t.Errorf("draws alternating between a framework and its derivative %v, want one sequence %v", got, want)
	}
}

func TestRunPreFilterPlugins(t *testing.T) {
	t.Parallel()
	snap := snapshotOf(nodes("a", "b", "c"))
	ctx := context.Background()
	rejecting := &fakeFilter{name: "Rejecting", reject: map[string]string{"b": "no b"}}
	t.Run("nodes a PreFilter result leaves out get kube-scheduler's verdict; the others are filtered", func(t *testing.T) {
		t.Parallel()
		f := mustNew(t, framework.WithPlugin(narrowTo("a", "b"), 0), framework.WithPlugin(rejecting, 0))
		state, status := f.RunPreFilterPlugins(ctx, &v1.Pod{}, snap)
		if status != nil {
			t.Fatal(status)
		}
		if s := framework.ExcludedByPreFilter(state, "c"); s.Code() != fwk.UnschedulableAndUnresolvable || s.Message() != "node(s) didn't satisfy plugin(s) [Narrow]" {
			t.Errorf("ExcludedByPreFilter(c) = %v", s)
		}
		if s := framework.ExcludedByPreFilter(state, "a"); s != nil {
			t.Errorf("ExcludedByPreFilter(a) = %v, want nil", s)
		}
		if s := f.RunFilterPluginsWithNominatedPods(ctx, state, &v1.Pod{}, snap.nodes[1]); s.Message() != "no b" {
			t.Errorf("filtering b = %v, want its rejection", s)
		}
		res, s := f.RunReservePlugins(ctx, state, &v1.Pod{}, "a")
		if s != nil || res.SuggestedHost != "a" {
			t.Errorf("RunReservePlugins = %v, %v; want a result naming a", res, s)
		}
	})
	t.Run("a PreFilter rejection of every node is returned", func(t *testing.T) {
		t.Parallel()
		f := mustNew(t, framework.WithPlugin(&fakeFilter{name: "No", preStatus: fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "never")}, 0))
		if _, status := f.RunPreFilterPlugins(ctx, &v1.Pod{}, snap); status.Message() != "never" || status.Plugin() != "No" {
			t.Errorf("status = %v, want the plugin's rejection", status)
		}
	})
	t.Run("a gated pod gets its PreEnqueue verdict", func(t *testing.T) {
		t.Parallel()
		f := mustNew(t, framework.WithPlugin(gates{}, 0))
		gated := &v1.Pod{Spec: v1.PodSpec{SchedulingGates: []v1.PodSchedulingGate{{Name: "example.com/wait"}}}}
		if _, status := f.RunPreFilterPlugins(ctx, gated, snap); status.Code() != fwk.UnschedulableAndUnresolvable {
			t.Errorf("status = %v, want the gate's verdict", status)
		}
	})
	t.Run("bad calls are Errors", func(t *testing.T) {
		t.Parallel()
		f := mustNew(t)
		cancelled, cancel := context.WithCancel(ctx)
		cancel()
		for name, call := range map[string]func() *fwk.Status{
			"nil snapshot": func() *fwk.Status { _, s := f.RunPreFilterPlugins(ctx, &v1.Pod{}, nil); return s },
			"nil pod":      func() *fwk.Status { _, s := f.RunPreFilterPlugins(ctx, nil, snap); return s },
			"cancelled":    func() *fwk.Status { _, s := f.RunPreFilterPlugins(cancelled, &v1.Pod{}, snap); return s },
			"nil state":    func() *fwk.Status { _, s := f.RunReservePlugins(ctx, nil, &v1.Pod{}, "a"); return s },
		} {
			if s := call(); s.Code() != fwk.Error {
				t.Errorf("%s: %v, want an Error", name, s)
			}
		}
	})
}

// gates turns down pods with scheduling gates.
type gates struct{}

func (gates) Name() string { return "Gates" }
func (gates) PreEnqueue(_ context.Context, _ fwk.Listers, pod *v1.Pod) *fwk.Status {
	if len(pod.Spec.SchedulingGates) > 0 {
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "gated")
	}
	return nil
}
