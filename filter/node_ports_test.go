package filter_test

import (
	"context"
	"fmt"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesched/kubesched/filter"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/names"
	"github.com/kubesched/kubesched/nodeinfo"
)

// hostPort is a container port bound on the host at ip (empty: all
// addresses) with protocol proto (empty: TCP).
func hostPort(ip string, proto v1.Protocol, port int32) v1.ContainerPort {
	return v1.ContainerPort{HostIP: ip, Protocol: proto, HostPort: port, ContainerPort: 8080}
}

// podWithPorts is a pod with one container binding ports.
func podWithPorts(ports ...v1.ContainerPort) *v1.Pod {
	return &v1.Pod{Spec: v1.PodSpec{Containers: []v1.Container{{Name: "app", Ports: ports}}}}
}

// podWithInitPorts is a pod whose only ports are on an init container,
// a sidecar if restartPolicy is Always.
func podWithInitPorts(restartPolicy *v1.ContainerRestartPolicy, ports ...v1.ContainerPort) *v1.Pod {
	return &v1.Pod{Spec: v1.PodSpec{
		InitContainers: []v1.Container{{Name: "init", RestartPolicy: restartPolicy, Ports: ports}},
		Containers:     []v1.Container{{Name: "app"}},
	}}
}

var (
	sidecar     = new(v1.ContainerRestartPolicyAlways)
	portsNodeV1 = &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "node-a"}}
)

// nodeRunning is node-a with pods bound to it.
func nodeRunning(pods ...*v1.Pod) *nodeinfo.NodeInfo { return nodeinfo.New(portsNodeV1, pods...) }

func TestNodePorts(t *testing.T) {
	t.Parallel()
	conflict := fwk.NewStatus(fwk.Unschedulable, filter.ErrReasonNodePorts).WithPlugin(names.NodePorts)
	tests := []struct {
		name     string
		pod      *v1.Pod
		node     *nodeinfo.NodeInfo
		wantSkip bool
		want     *fwk.Status
	}{
		{
			name:     "a pod without host ports is skipped and fits a node whose ports are taken",
			pod:      podWithPorts(v1.ContainerPort{ContainerPort: 80}),
			node:     nodeRunning(podWithPorts(hostPort("", "", 80))),
			wantSkip: true,
		},
		{
			name: "a pod fits an empty node",
			pod:  podWithPorts(hostPort("", "", 80)),
			node: nodeRunning(),
		},
		{
			name: "the same IP, protocol and port conflict",
			pod:  podWithPorts(hostPort("10.0.0.1", v1.ProtocolTCP, 80)),
			node: nodeRunning(podWithPorts(hostPort("10.0.0.1", v1.ProtocolTCP, 80))),
			want: conflict,
		},
		{
			name: "the same port on another protocol fits",
			pod:  podWithPorts(hostPort("10.0.0.1", v1.ProtocolUDP, 80)),
			node: nodeRunning(podWithPorts(hostPort("10.0.0.1", v1.ProtocolTCP, 80))),
		},
		{
			name: "an empty protocol means TCP and conflicts with TCP",
			pod:  podWithPorts(hostPort("10.0.0.1", "", 80)),
			node: nodeRunning(podWithPorts(hostPort("10.0.0.1", v1.ProtocolTCP, 80))),
			want: conflict,
		},
		{
			name: "SCTP conflicts with SCTP",
			pod:  podWithPorts(hostPort("", v1.ProtocolSCTP, 9000)),
			node: nodeRunning(podWithPorts(hostPort("", v1.ProtocolSCTP, 9000))),
			want: conflict,
		},
		{
			name: "another port on the same IP fits",
			pod:  podWithPorts(hostPort("10.0.0.1", v1.ProtocolTCP, 81)),
			node: nodeRunning(podWithPorts(hostPort("10.0.0.1", v1.ProtocolTCP, 80))),
		},
		{
			name: "the same port on two specific IPs fits",
			pod:  podWithPorts(hostPort("10.0.0.2", v1.ProtocolTCP, 80)),
			node: nodeRunning(podWithPorts(hostPort("10.0.0.1", v1.ProtocolTCP, 80))),
		},
		{
			name: "a wanted 0.0.0.0 conflicts with the port in use on a specific IP",
			pod:  podWithPorts(hostPort("0.0.0.0", v1.ProtocolTCP, 80)),
			node: nodeRunning(podWithPorts(hostPort("10.0.0.1", v1.ProtocolTCP, 80))),
			want: conflict,
		},
		{
			name: "a wanted specific IP conflicts with the port in use on 0.0.0.0",
			pod:  podWithPorts(hostPort("10.0.0.1", v1.ProtocolTCP, 80)),
			node: nodeRunning(podWithPorts(hostPort("0.0.0.0", v1.ProtocolTCP, 80))),
			want: conflict,
		},
		{
			name: "an empty wanted IP means 0.0.0.0 and conflicts with a specific IP",
			pod:  podWithPorts(hostPort("", v1.ProtocolTCP, 80)),
			node: nodeRunning(podWithPorts(hostPort("10.0.0.1", v1.ProtocolTCP, 80))),
			want: conflict,
		},
		{
			name: "a port in use on an empty IP conflicts with a specific wanted IP",
			pod:  podWithPorts(hostPort("10.0.0.1", v1.ProtocolTCP, 80)),
			node: nodeRunning(podWithPorts(hostPort("", "", 80))),
			want: conflict,
		},
		{
			name: "0.0.0.0 on another protocol fits",
			pod:  podWithPorts(hostPort("0.0.0.0", v1.ProtocolUDP, 53)),
			node: nodeRunning(podWithPorts(hostPort("10.0.0.1", v1.ProtocolTCP, 53))),
		},
		{
			name: "one conflicting port among several rejects the node",
			pod:  podWithPorts(hostPort("", "", 80), hostPort("", "", 443), hostPort("", "", 8443)),
			node: nodeRunning(podWithPorts(hostPort("", "", 8443))),
			want: conflict,
		},
		{
			name: "a sidecar's port in use conflicts",
			pod:  podWithPorts(hostPort("", "", 80)),
			node: nodeRunning(podWithInitPorts(sidecar, hostPort("", "", 80))),
			want: conflict,
		},
		{
			name: "an ordinary init container's port is not in use",
			pod:  podWithPorts(hostPort("", "", 80)),
			node: nodeRunning(podWithInitPorts(nil, hostPort("", "", 80))),
		},
		{
			name: "a wanted sidecar port conflicts",
			pod:  podWithInitPorts(sidecar, hostPort("", "", 80)),
			node: nodeRunning(podWithPorts(hostPort("", "", 80))),
			want: conflict,
		},
		{
			name:     "a pod whose only host port is on an ordinary init container is skipped",
			pod:      podWithInitPorts(nil, hostPort("", "", 80)),
			node:     nodeRunning(podWithPorts(hostPort("", "", 80))),
			wantSkip: true,
		},
		{
			name: "ports of every pod on the node count",
			pod:  podWithPorts(hostPort("", "", 90)),
			node: nodeRunning(podWithPorts(hostPort("", "", 80)), podWithPorts(hostPort("", "", 90))),
			want: conflict,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			pl := &filter.NodePorts{}
			ctx := context.Background()
			state := fwk.NewCycleState([]*nodeinfo.NodeInfo{tc.node})
			res, s := pl.PreFilter(ctx, state, tc.pod, state.AllNodes())
			if res != nil {
				t.Errorf("PreFilter result = %v, want nil", res)
			}
			if s.IsSkip() != tc.wantSkip || (!tc.wantSkip && s != nil) {
				t.Fatalf("PreFilter = %v, want skip %v", s, tc.wantSkip)
			}
			// Without PreFilter's record (nil state, or a skipped pod) Filter
			// finds the ports itself and must agree.
			if got := pl.Filter(ctx, nil, tc.pod, tc.node); got.String() != tc.want.String() {
				t.Errorf("Filter without state = %v, want %v", got, tc.want)
			}
			if tc.wantSkip {
				return
			}
			if got := pl.Filter(ctx, state, tc.pod, tc.node); got.String() != tc.want.String() {
				t.Errorf("Filter = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestNodePortsPreFilterWithoutState(t *testing.T) {
	t.Parallel()
	_, s := (&filter.NodePorts{}).PreFilter(context.Background(), nil, podWithPorts(hostPort("", "", 80)), nil)
	if s != nil {
		t.Errorf("PreFilter with nil state = %v, want nil", s)
	}
}

// A NodeInfo without a node is a caller bug, reported as Error rather than
// a panic or a verdict.
func TestNodePortsNameUnschedulableReportNilNodeAsError(t *testing.T) {
	t.Parallel()
	pod := podWithPorts(hostPort("", "", 80))
	pod.Spec.NodeName = "node-a"
	plugins := []fwk.FilterPlugin{&filter.NodePorts{}, &filter.NodeName{}, &filter.NodeUnschedulable{}}
	infos := map[string]*nodeinfo.NodeInfo{"nil NodeInfo": nil, "NodeInfo without node": nodeinfo.New(nil)}
	for _, pl := range plugins {
		for what, ni := range infos {
			t.Run(pl.Name()+" given a "+what+" returns Error", func(t *testing.T) {
				t.Parallel()
				if got := pl.Filter(context.Background(), nil, pod, ni); got.Code() != fwk.Error {
					t.Errorf("Filter = %v, want Error", got)
				}
			})
		}
	}
}

func BenchmarkNodePorts(b *testing.B) {
	pl := &filter.NodePorts{}
	ctx := context.Background()
	pod := podWithPorts(hostPort("", "", 80), hostPort("", v1.ProtocolUDP, 53), hostPort("10.0.0.1", "", 443))
	for _, inUse := range []int{10, 1000} {
		for _, fits := range []bool{true, false} {
			var pods []*v1.Pod
			for i := range inUse {
				pods = append(pods, podWithPorts(hostPort("10.0.0.1", v1.ProtocolTCP, int32(1000+i))))
			}
			want := "Success"
			name := "Fits"
			if !fits {
				pods = append(pods, podWithPorts(hostPort("", "", 443)))
				want = "Unschedulable (NodePorts): " + filter.ErrReasonNodePorts
				name = "Conflicts"
			}
			node := nodeRunning(pods...)
			state := fwk.NewCycleState([]*nodeinfo.NodeInfo{node})
			b.Run(fmt.Sprintf("%dportsInUse/%s", inUse, name), func(b *testing.B) {
				if _, s := pl.PreFilter(ctx, state, pod, state.AllNodes()); s != nil {
					b.Fatalf("PreFilter = %v", s)
				}
				if got := pl.Filter(ctx, state, pod, node).String(); got != want {
					b.Fatalf("Filter = %v, want %v", got, want)
				}
				b.ReportAllocs()
				for b.Loop() {
					pl.Filter(ctx, state, pod, node)
				}
			})
		}
	}
}
