package framework_test

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/nodeinfo"
)

func TestOutputsHoldOneValuePerKey(t *testing.T) {
	t.Parallel()
	first, second := fwk.NewOutputKey[string](), fwk.NewOutputKey[string]()
	count := fwk.NewOutputKey[int]()
	for _, tc := range []struct {
		name string
		set  func(o *fwk.Outputs)
		want map[string]any // by key name; absent keys are missing
	}{
		{name: "empty outputs hold nothing", set: func(*fwk.Outputs) {}, want: map[string]any{}},
		{name: "a value set is got back under its key alone", set: func(o *fwk.Outputs) { first.Set(o, "a") }, want: map[string]any{"first": "a"}},
		{name: "two keys of one type hold two values", set: func(o *fwk.Outputs) { first.Set(o, "a"); second.Set(o, "b") }, want: map[string]any{"first": "a", "second": "b"}},
		{name: "setting a key again replaces its value", set: func(o *fwk.Outputs) { first.Set(o, "a"); count.Set(o, 1); first.Set(o, "c") }, want: map[string]any{"first": "c", "count": 1}},
		{name: "the zero key holds nothing", set: func(o *fwk.Outputs) { fwk.OutputKey[string]{}.Set(o, "x") }, want: map[string]any{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var o fwk.Outputs
			tc.set(&o)
			got := map[string]any{}
			if v, ok := first.Get(&o); ok {
				got["first"] = v
			}
			if v, ok := second.Get(&o); ok {
				got["second"] = v
			}
			if v, ok := count.Get(&o); ok {
				got["count"] = v
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %v, want %v", got, tc.want)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("%s = %v, want %v", k, got[k], v)
				}
			}
		})
	}
	// Nil outputs: nothing set, nothing got, no panic.
	first.Set(nil, "x")
	if v, ok := first.Get(nil); ok || v != "" {
		t.Errorf("nil outputs give %q, %v", v, ok)
	}
}

// labelReserver is a third-party Reserve plugin that leaves the chosen
// node's label in the Result.
type labelReserver struct{}

var nodeZone = fwk.NewOutputKey[string]()

func (labelReserver) Name() string { return "LabelReserver" }

func (labelReserver) Reserve(_ context.Context, state *fwk.CycleState, _ *v1.Pod, nodeName string, out *fwk.Outputs) *fwk.Status {
	for _, ni := range state.AllNodes() {
		if ni.Name() == nodeName {
			nodeZone.Set(out, ni.Labels()["zone"])
			return nil
		}
	}
	return fwk.NewStatus(fwk.Error, "no node "+nodeName)
}

func TestAReservePluginOfYourOwnLeavesItsOutputInTheResult(t *testing.T) {
	t.Parallel()
	fw, err := framework.New(framework.WithPlugin(labelReserver{}, 0))
	if err != nil {
		t.Fatal(err)
	}
	n := &v1.Node{}
	n.Name, n.Labels = "n1", map[string]string{"zone": "a"}
	res, err := fw.Schedule(context.Background(), &v1.Pod{}, []*nodeinfo.NodeInfo{nodeinfo.New(n)})
	if err != nil {
		t.Fatal(err)
	}
	if zone, ok := nodeZone.Get(&res.Outputs); !ok || zone != "a" {
		t.Errorf("the Result's zone is %q (%v), want a", zone, ok)
	}
}
