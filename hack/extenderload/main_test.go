package main

import (
	"encoding/json"
	"testing"
	"time"

	extenderv1 "k8s.io/kube-scheduler/extender/v1"
)

func TestBodiesAreFilterCallsOfTheSizeAsked(t *testing.T) {
	for _, tc := range []struct {
		name string
		node func(int) []byte
	}{
		{name: "nodes as kubelets report them", node: kubeletNode},
		{name: "small nodes", node: smallNode},
	} {
		t.Run(tc.name, func(t *testing.T) {
			nodeJSON = tc.node
			const size = 200 << 10
			body := filterBody(size)
			if len(body) < size-100 || len(body) > size+len(tc.node(0))+100 {
				t.Errorf("the body is %d bytes, want about %d", len(body), size)
			}
			var args extenderv1.ExtenderArgs
			if err := json.Unmarshal(body, &args); err != nil {
				t.Fatal(err)
			}
			if args.Pod == nil || args.Pod.Name != "p" || args.Nodes == nil || len(args.Nodes.Items) < 2 {
				t.Fatalf("the body decodes to pod %v and %v", args.Pod, args.Nodes)
			}
			seen := map[string]bool{}
			for _, n := range args.Nodes.Items {
				if n.Name == "" || seen[n.Name] || n.Labels["priority.lixueduan.com"] == "" {
					t.Fatalf("node %q: a name given twice, or no name or label", n.Name)
				}
				seen[n.Name] = true
			}
		})
	}
}

func TestPercentilesAreByNearestRank(t *testing.T) {
	ms := func(n ...int) []time.Duration {
		var d []time.Duration
		for _, v := range n {
			d = append(d, time.Duration(v)*time.Millisecond)
		}
		return d
	}
	for _, tc := range []struct {
		name      string
		latencies []time.Duration
		p         int
		want      time.Duration
	}{
		{name: "no calls give zero", p: 99, want: 0},
		{name: "one call is every percentile", latencies: ms(7), p: 50, want: 7 * time.Millisecond},
		{name: "the median of four is the second", latencies: ms(4, 1, 3, 2), p: 50, want: 2 * time.Millisecond},
		{name: "p99 of a hundred is the 99th", latencies: ms(func() []int {
			var v []int
			for i := 100; i >= 1; i-- {
				v = append(v, i)
			}
			return v
		}()...), p: 99, want: 99 * time.Millisecond},
		{name: "p100 is the slowest", latencies: ms(5, 9, 1), p: 100, want: 9 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := &result{latencies: tc.latencies}
			if got := r.percentile(tc.p); got != tc.want {
				t.Errorf("p%d = %v, want %v", tc.p, got, tc.want)
			}
		})
	}
}
