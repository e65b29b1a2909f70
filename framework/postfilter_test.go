package framework_test

import (
	"context"
	"errors"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/fwk"
)

// notedOutput is the output fakePostFilter leaves.
var notedOutput = fwk.NewOutputKey[string]()

// fakePostFilter returns result and status, and records what it saw.
type fakePostFilter struct {
	name   string
	result *fwk.PostFilterResult
	status *fwk.Status
	// ran, sawHandle and sawN1 record the call.
	ran, sawHandle bool
	sawN1          *fwk.Status
}

func (p *fakePostFilter) Name() string { return p.name }

func (p *fakePostFilter) PostFilter(_ context.Context, state *fwk.CycleState, _ *v1.Pod, filtered fwk.NodeToStatus) (*fwk.PostFilterResult, *fwk.Status) {
	p.ran = true
	p.sawHandle = fwk.HandleOf(state) != nil
	p.sawN1 = filtered.NodeStatus("n1")
	return p.result, p.status
}

func outputs(v string) fwk.Outputs {
	var o fwk.Outputs
	notedOutput.Set(&o, v)
	return o
}

func TestPostFilterPluginsResultsReachTheFitError(t *testing.T) {
	t.Parallel()
	preemption := &fwk.Preemption{NominatedNodeName: "n2"}
	for _, tc := range []struct {
		name          string
		first, second *fakePostFilter
		wantSecondRan bool
		wantMsg       string
		wantOutput    string
		wantPreempt   *fwk.Preemption
		wantClear     bool
	}{
		{
			name:          "an Unschedulable plugin's outputs stay when the next one preempts",
			first:         &fakePostFilter{name: "A", result: &fwk.PostFilterResult{Outputs: outputs("from A")}, status: fwk.NewStatus(fwk.Unschedulable, "A could not")},
			second:        &fakePostFilter{name: "B", result: &fwk.PostFilterResult{Preemption: preemption}},
			wantSecondRan: true,
			wantOutput:    "from A",
			wantPreempt:   preemption,
		},
		{
			name:          "Unschedulable reasons are joined when no plugin helps",
			first:         &fakePostFilter{name: "A", status: fwk.NewStatus(fwk.Unschedulable, "A could not")},
			second:        &fakePostFilter{name: "B", result: &fwk.PostFilterResult{ClearNomination: true}, status: fwk.NewStatus(fwk.Unschedulable, "B could not")},
			wantSecondRan: true,
			wantMsg:       "A could not, B could not",
			wantClear:     true,
		},
		{
			name:        "a Success ends the phase with its result and message",
			first:       &fakePostFilter{name: "A", result: &fwk.PostFilterResult{Preemption: preemption, Outputs: outputs("from A")}, status: fwk.NewStatus(fwk.Success, "found room")},
			second:      &fakePostFilter{name: "B", result: &fwk.PostFilterResult{ClearNomination: true}},
			wantMsg:     "found room",
			wantOutput:  "from A",
			wantPreempt: preemption,
		},
		{
			name:    "UnschedulableAndUnresolvable ends the phase",
			first:   &fakePostFilter{name: "A", status: fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "hopeless")},
			second:  &fakePostFilter{name: "B"},
			wantMsg: "hopeless",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := mustNew(t,
				framework.WithPlugin(&fakeFilter{name: "Fit", reject: map[string]string{"n1": "Insufficient cpu", "n2": "Insufficient cpu"}}, 0),
				framework.WithPlugin(tc.first, 0), framework.WithPlugin(tc.second, 0))
			_, err := f.Schedule(context.Background(), testPod, nodes("n1", "n2"))
			var fe *framework.FitError
			if !errors.As(err, &fe) {
				t.Fatalf("Schedule = %v, want a FitError", err)
			}
			if !tc.first.sawHandle || tc.first.sawN1.Code() != fwk.Unschedulable {
				t.Errorf("the plugin saw handle %v and n1 %v, want the framework and n1's rejection", tc.first.sawHandle, tc.first.sawN1)
			}
			if tc.second.ran != tc.wantSecondRan {
				t.Errorf("second plugin ran: %v, want %v", tc.second.ran, tc.wantSecondRan)
			}
			if fe.Diagnosis.PostFilterMsg != tc.wantMsg {
				t.Errorf("PostFilterMsg = %q, want %q", fe.Diagnosis.PostFilterMsg, tc.wantMsg)
			}
			if got, _ := notedOutput.Get(fe.PluginOutputs()); got != tc.wantOutput {
				t.Errorf("output = %q, want %q", got, tc.wantOutput)
			}
			if fe.Preemption != tc.wantPreempt || fe.ClearNomination != tc.wantClear {
				t.Errorf("Preemption %v, ClearNomination %v; want %v, %v", fe.Preemption, fe.ClearNomination, tc.wantPreempt, tc.wantClear)
			}
		})
	}
}

func TestAStateMadeOutsideAFrameworkHasNoHandle(t *testing.T) {
	if h := fwk.HandleOf(fwk.NewCycleState(nil)); h != nil {
		t.Errorf("HandleOf = %v, want nil", h)
	}
}

func TestANilResultOrFitErrorHoldsNoOutputs(t *testing.T) {
	var r *framework.Result
	var fe *framework.FitError
	if r.PluginOutputs() != nil || fe.PluginOutputs() != nil {
		t.Error("a nil Result or FitError returned outputs")
	}
}
