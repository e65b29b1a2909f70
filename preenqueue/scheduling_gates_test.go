package preenqueue_test

import (
	"context"
	"testing"

	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/preenqueue"
)

func TestSchedulingGates(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		gates []string
		want  string // the status's String(); empty for nil
	}{
		{name: "a pod without gates is admitted", want: ""},
		{name: "a pod with one gate waits for it", gates: []string{"example.com/quota"}, want: "UnschedulableAndUnresolvable: waiting for scheduling gates: [example.com/quota]"},
		{name: "a pod with several gates names them all, in order", gates: []string{"b", "a"}, want: "UnschedulableAndUnresolvable: waiting for scheduling gates: [b a]"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pod := &v1.Pod{}
			for _, g := range tc.gates {
				pod.Spec.SchedulingGates = append(pod.Spec.SchedulingGates, v1.PodSchedulingGate{Name: g})
			}
			s := (&preenqueue.SchedulingGates{}).PreEnqueue(context.Background(), fwk.Listers{}, pod)
			got := ""
			if s != nil {
				got = s.String()
			}
			if got != tc.want {
				t.Errorf("PreEnqueue = %q, want %q", got, tc.want)
			}
			if tc.want != "" && s.Code() != fwk.UnschedulableAndUnresolvable {
				t.Errorf("code %v, want UnschedulableAndUnresolvable", s.Code())
			}
		})
	}
}
