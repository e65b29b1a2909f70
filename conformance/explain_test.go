package conformance

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"

	kfwk "github.com/kubesched/kubesched/fwk"

	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/nodeinfo"
)

// TestExplainAgreesWithSchedule explains the generated scenarios' pods,
// half of them with nominated pods, and requires on every node the
// verdict of Schedule's Diagnosis (which TestDifferential and
// TestNominatedPods hold to upstream's): the same code, plugin and
// reasons; for a node without nominated pods that PreFilter kept, the
// first rejecting plugin of the per-plugin list is that verdict's; a
// feasible node has no rejection, and Schedule's scores. Every rejection
// by any plugin, on nodes with nominated pods too, comes with details.
func TestExplainAgreesWithSchedule(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const scenarios = 400
	var rejected, feasible, withDetails int
	undetailed := map[string]int{}
	for seed := range uint64(scenarios) {
		s := Generate(seed)
		var nominated []Nomination
		if seed%2 == 1 {
			nominated = nominate(s, seed, nil)
		}
		fw, err := nominatedFramework(s, nominated)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		nodes := nodeinfo.Build(s.Nodes, s.Pods)
		e, err := fw.Explain(ctx, s.Pod, nodes)
		if err != nil {
			// Bad input the generator makes on purpose: Schedule must
			// refuse it the same way.
			_, want := fw.Schedule(ctx, s.Pod, nodes)
			if fmt.Sprint(want) != fmt.Sprint(err) {
				t.Fatalf("seed %d: Explain: %v; Schedule: %v", seed, err, want)
			}
			continue
		}
		got, err := fw.Schedule(ctx, s.Pod, nodes)
		var d framework.Diagnosis
		var fe, efe *framework.FitError
		scores := map[string]int64{}
		switch {
		case errors.As(err, &fe):
			// Of equally good preemption nodes each picks one at random.
			if !errors.As(e.Err, &efe) || withoutNominee(efe.Error()) != withoutNominee(fe.Error()) {
				t.Fatalf("seed %d: Explain's decision %v, Schedule's %v", seed, e.Err, err)
			}
			d = fe.Diagnosis
		case err != nil:
			t.Fatalf("seed %d: Schedule: %v", seed, err)
		default:
			if e.Result == nil || e.Result.FeasibleNodes != got.FeasibleNodes {
				t.Fatalf("seed %d: Explain's decision %v, Schedule found %d feasible", seed, e.Err, got.FeasibleNodes)
			}
			d = got.Diagnosis
			for _, ns := range got.NodeScores() {
				scores[ns.Name] = ns.TotalScore
			}
		}
		nominatedOn := map[string]bool{}
		for _, n := range nominated {
			nominatedOn[n.Node] = true
		}
		for _, ne := range e.Nodes {
			want := d.NodeStatus(ne.Name)
			if ne.Status.Code() != want.Code() || ne.Status.Plugin() != want.Plugin() || !reflect.DeepEqual(ne.Status.Reasons(), want.Reasons()) {
				t.Fatalf("seed %d, %s: Explain %v, Schedule %v", seed, ne.Name, ne.Status, want)
			}
			first := slices.IndexFunc(ne.Filters, func(v framework.PluginVerdict) bool { return v.Status.IsRejected() })
			if ne.Status == nil {
				feasible++
				if first >= 0 {
					t.Fatalf("seed %d, %s: feasible, yet %s rejects it", seed, ne.Name, ne.Filters[first].Plugin)
				}
				if total, ok := scores[ne.Name]; ok && total != ne.Total {
					t.Fatalf("seed %d, %s: total %d, Schedule's %d", seed, ne.Name, ne.Total, total)
				}
				continue
			}
			rejected++
			if first >= 0 && len(ne.Filters[first].Details) > 0 {
				withDetails++
			}
			for _, v := range ne.Filters {
				if v.Status.IsRejected() && len(v.Details) == 0 && v.Status.Code() != kfwk.Error {
					undetailed[v.Plugin+": "+v.Status.Message()]++
				}
			}
			if len(ne.Filters) == 0 || nominatedOn[ne.Name] || ne.ExcludedByPreFilter {
				continue
			}
			if first < 0 || ne.Filters[first].Status.Plugin() != ne.Status.Plugin() || ne.Filters[first].Status.Message() != ne.Status.Message() {
				t.Fatalf("seed %d, %s: first rejecting filter %d of %v; kube-scheduler's verdict %v", seed, ne.Name, first, ne.Filters, ne.Status)
			}
		}
	}
	// Every rejection says what the plugin found, not only its reason.
	for k, n := range undetailed {
		t.Errorf("%d rejections without details: %s", n, k)
	}
	t.Logf("%d scenarios: %d rejected nodes (%d with details from the first rejecting plugin), %d feasible", scenarios, rejected, withDetails, feasible)
	if rejected == 0 || feasible == 0 || withDetails == 0 {
		t.Errorf("the scenarios exercised too little: %d rejected, %d feasible, %d with details", rejected, feasible, withDetails)
	}
}
