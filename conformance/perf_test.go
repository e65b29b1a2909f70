package conformance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"k8s.io/utils/ptr"

	"github.com/kubesched/kubesched"
	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/internal/testcluster"
	"github.com/kubesched/kubesched/nodeinfo"
)

// BenchmarkSideBySide times one scheduling decision by kubesched and by
// kube-scheduler's own SchedulePod ([Upstream]) on scheduler_perf-shaped
// clusters, both with every node filtered and scored (pct=100) and with
// kube-scheduler's default adaptive percentageOfNodesToScore
// (pct=adaptive). For the Preemption workload, whose pod fits no node,
// the decision is a whole scheduling attempt, PostFilter included
// ([UpstreamPreemption] on upstream's side), and kubesched's must be one
// upstream could make ([PreemptionReference]). Compare the pods/s of a
// kubesched and an upstream run of the same size and setting.
func BenchmarkSideBySide(b *testing.B) {
	for _, numNodes := range []int{500, 5000} {
		// One pod per 5 nodes: as many again would leave PodAntiAffinity's
		// pod no node.
		for _, w := range PerfWorkloads(numNodes, numNodes/5) {
			for _, pct := range []struct {
				name string
				// ours is kubesched's setting, where 0 is adaptive;
				// theirs is upstream's, where nil leaves its default.
				ours   int32
				theirs *int32
			}{
				{name: "100", ours: 100, theirs: ptr.To[int32](100)},
				{name: "adaptive", ours: 0, theirs: nil},
			} {
				b.Run(fmt.Sprintf("%dnodes/%s/pct=%s/kubesched", numNodes, w.Name, pct.name), func(b *testing.B) {
					benchmarkKubesched(b, w, pct.ours)
				})
				b.Run(fmt.Sprintf("%dnodes/%s/pct=%s/upstream", numNodes, w.Name, pct.name), func(b *testing.B) {
					benchmarkUpstream(b, w, pct.theirs)
				})
			}
		}
	}
}

func benchmarkKubesched(b *testing.B, w PerfWorkload, percentage int32) {
	ctx := context.Background()
	fw, err := kubesched.DefaultFramework(framework.WithPercentageOfNodesToScore(percentage), framework.WithObjects(w.Objects...))
	if err != nil {
		b.Fatal(err)
	}
	nodes := nodeinfo.Build(w.Nodes, w.Pods)
	schedule := func() error { _, err := fw.Schedule(ctx, w.Pod, nodes); return err }
	if w.Name == testcluster.Preemption {
		ref := preemptionReference(b, w)
		var fe *framework.FitError
		if err := schedule(); !errors.As(err, &fe) {
			b.Fatalf("kubesched: %v, want a FitError", err)
		}
		if err := ref.Check(DecisionOf(fe)); err != nil {
			b.Fatalf("kubesched: %v", err)
		}
		schedule = func() error {
			if _, err := fw.Schedule(ctx, w.Pod, nodes); !errors.As(err, &fe) {
				return fmt.Errorf("%v, want a FitError", err)
			}
			return nil
		}
	}
	if err := schedule(); err != nil {
		b.Fatalf("kubesched: %v", err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := schedule(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pods/s")
}

func benchmarkUpstream(b *testing.B, w PerfWorkload, percentage *int32) {
	ctx := context.Background()
	u := newUpstreamWith(b, w, percentage)
	schedule := func() error { _, err := u.Schedule(ctx, w.Pod); return err }
	if w.Name == testcluster.Preemption {
		p, err := NewUpstreamPreemption(u)
		if err != nil {
			b.Fatal(err)
		}
		// Checks that upstream's own decision is one of the best.
		if _, err := p.Reference(ctx, w.Pod); err != nil {
			b.Fatalf("upstream: %v", err)
		}
		schedule = func() error { _, err := p.Schedule(ctx, w.Pod); return err }
	}
	if err := schedule(); err != nil {
		b.Fatalf("upstream: %v", err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := schedule(); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pods/s")
}

// newUpstreamWith builds an Upstream holding w's cluster and objects,
// closed when the test or benchmark ends.
func newUpstreamWith(tb testing.TB, w PerfWorkload, percentage *int32) *Upstream {
	tb.Helper()
	u, err := NewUpstream(percentage)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(u.Close)
	if err := u.SetObjects(context.Background(), w.Objects); err != nil {
		tb.Fatal(err)
	}
	if err := u.SetCluster(w.Nodes, w.Pods); err != nil {
		tb.Fatal(err)
	}
	return u
}

// preemptionReference returns upstream's reference for w's pod, which
// fits no node.
func preemptionReference(tb testing.TB, w PerfWorkload) *PreemptionReference {
	tb.Helper()
	p, err := NewUpstreamPreemption(newUpstreamWith(tb, w, nil))
	if err != nil {
		tb.Fatal(err)
	}
	ref, err := p.Reference(context.Background(), w.Pod)
	if err != nil {
		tb.Fatalf("upstream: %v", err)
	}
	return ref
}

// TestPerfPreemptionAgreesWithUpstream checks the Preemption workload on
// a cluster large enough that both schedulers' dry runs stop early (100
// candidates of 300 nodes): upstream's timed attempts nominate one of the
// cheapest nodes, and so does kubesched, with the same victims.
func TestPerfPreemptionAgreesWithUpstream(t *testing.T) {
	linkedOnly(t)
	t.Parallel()
	ctx := context.Background()
	w := NewPerfWorkload(testcluster.Preemption, 300, 0)
	p, err := NewUpstreamPreemption(newUpstreamWith(t, w, nil))
	if err != nil {
		t.Fatal(err)
	}
	ref, err := p.Reference(ctx, w.Pod)
	if err != nil {
		t.Fatal(err)
	}
	if want := 300 / testcluster.PreemptionCheapestEvery; len(ref.BestCandidates) != want || len(ref.Candidates) != 300 {
		t.Errorf("%d best of %d candidates, want %d of 300", len(ref.BestCandidates), len(ref.Candidates), want)
	}
	if len(ref.Upstream.Victims) != 1 {
		t.Errorf("upstream evicts %v, want one pod", ref.Upstream.Victims)
	}
	for range 5 {
		node, err := p.Schedule(ctx, w.Pod)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Contains(ref.BestCandidates, node) {
			t.Errorf("upstream nominates %s, not one of the best candidates", node)
		}
	}
	fw, err := kubesched.DefaultFramework(framework.WithObjects(w.Objects...))
	if err != nil {
		t.Fatal(err)
	}
	nodes := nodeinfo.Build(w.Nodes, w.Pods)
	for range 5 {
		var fe *framework.FitError
		if _, err := fw.Schedule(ctx, w.Pod, nodes); !errors.As(err, &fe) {
			t.Fatalf("kubesched: %v, want a FitError", err)
		}
		if err := ref.Check(DecisionOf(fe)); err != nil {
			t.Errorf("kubesched: %v", err)
		}
	}
}

func TestPerfPreemptionReferenceRefusesOtherDecisions(t *testing.T) {
	linkedOnly(t)
	t.Parallel()
	ref := &PreemptionReference{
		Upstream: PreemptionDecision{Message: "0/3 nodes are available: 3 Insufficient cpu.", NominatedNodeName: "a", Victims: []string{"default/x"}},
		Candidates: []PreemptionCandidate{
			{Node: "a", Victims: []string{"default/x"}},
			{Node: "b", Victims: []string{"default/y"}},
			{Node: "c", Victims: []string{"default/z", "default/w"}},
		},
		BestCandidates: []string{"a", "b"},
	}
	for _, tc := range []struct {
		name    string
		d       PreemptionDecision
		wantErr bool
	}{
		{name: "upstream's own decision passes", d: ref.Upstream},
		{name: "another best candidate with its victims passes", d: PreemptionDecision{Message: ref.Upstream.Message, NominatedNodeName: "b", Victims: []string{"default/y"}}},
		{name: "another message fails", d: PreemptionDecision{Message: "0/3 nodes are available.", NominatedNodeName: "a", Victims: []string{"default/x"}}, wantErr: true},
		{name: "a candidate that is not among the best fails", d: PreemptionDecision{Message: ref.Upstream.Message, NominatedNodeName: "c", Victims: []string{"default/z", "default/w"}}, wantErr: true},
		{name: "other victims on a best candidate fail", d: PreemptionDecision{Message: ref.Upstream.Message, NominatedNodeName: "b", Victims: []string{"default/x"}}, wantErr: true},
		{name: "PDB violations upstream does not count fail", d: PreemptionDecision{Message: ref.Upstream.Message, NominatedNodeName: "a", Victims: []string{"default/x"}, NumPDBViolations: 1}, wantErr: true},
		{name: "no nomination fails", d: PreemptionDecision{Message: ref.Upstream.Message}, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if err := ref.Check(tc.d); (err != nil) != tc.wantErr {
				t.Errorf("Check(%+v) = %v, want an error: %v", tc.d, err, tc.wantErr)
			}
		})
	}
}
