package fwk_test

import (
	"testing"

	"github.com/kubesched/kubesched/fwk"
)

func TestFitMessage(t *testing.T) {
	cpu := fwk.NewStatus(fwk.Unschedulable, "Insufficient cpu")
	taint := fwk.NewStatus(fwk.UnschedulableAndUnresolvable, "node(s) had untolerated taint(s)")
	for _, tc := range []struct {
		name     string
		all      int
		statuses map[string]*fwk.Status
		others   *fwk.Status
		want     string
	}{
		{"reasons are counted and sorted as strings", 3, map[string]*fwk.Status{"a": cpu, "b": taint, "c": cpu}, nil,
			"0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu."},
		{"the nodes without a verdict of their own share others", 5, map[string]*fwk.Status{"a": cpu}, taint,
			"0/5 nodes are available: 1 Insufficient cpu, 4 node(s) had untolerated taint(s)."},
		{"no reasons leave the count alone", 2, nil, nil, "0/2 nodes are available:"},
		{"a status with several reasons counts each", 1, map[string]*fwk.Status{"a": fwk.NewStatus(fwk.Unschedulable, "x", "y")}, nil,
			"0/1 nodes are available: 1 x, 1 y."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := fwk.FitMessage(tc.all, tc.statuses, tc.others); got != tc.want {
				t.Errorf("FitMessage = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestMergeReplacesOutputsUnderTheSameKey(t *testing.T) {
	a, b := fwk.NewOutputKey[string](), fwk.NewOutputKey[int]()
	var into, from fwk.Outputs
	a.Set(&into, "old")
	a.Set(&from, "new")
	b.Set(&from, 7)
	into.Merge(&from)
	if got, _ := a.Get(&into); got != "new" {
		t.Errorf("a = %q, want the merged value", got)
	}
	if got, ok := b.Get(&into); !ok || got != 7 {
		t.Errorf("b = %d, %v; want 7, true", got, ok)
	}
	into.Merge(nil)
	var none *fwk.Outputs
	none.Merge(&from)
}
