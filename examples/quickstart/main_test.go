package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestQuickstartExplainsEachPlacement(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	if err := run(&out); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		want string
	}{
		{"the cluster is read from multi-document YAML", "Cluster: 7 nodes, 3 pods running."},
		{"the legend lists the score plugins with their weights", "Score plugins and weights: TaintToleration x3, NodeAffinity x2, NodeResourcesFit x1, VolumeBinding x1, PodTopologySpread x2, InterPodAffinity x2, DynamicResources x2, NodeResourcesBalancedAllocation x1, ImageLocality x1."},
		{"web prefers ssd and finds its image on node-a1", "Pod default/web -> node-a1 (5 of 7 nodes feasible)"},
		{"a rejection says which taint is not tolerated", "  gpu-1    rejected by TaintToleration: node(s) had untolerated taint(s)\n           taint nvidia.com/gpu=present:NoSchedule is not tolerated"},
		{"scores show raw and weighted values and the total", "  node-a1  0/300            50/200        65/65             0/0            0/0               73/73                            7/7            645 <- chosen"},
		{"an inverted plugin's raw 1 weighs nothing", "  node-b2  1/0              50/200        94/94"},
		{"the second replica keeps off the first one's node and says which pod is in the way", "  node-a1  rejected by InterPodAffinity: node(s) didn't match pod anti-affinity rules\n           pod anti-affinity term 1: 1 matching pod(s) run in kubernetes.io/hostname=node-a1"},
		{"the port in use is named with its holder", "host port 0.0.0.0:6379/TCP is in use by default/cache-0"},
		{"the pods placed before count against the next one", "cpu: the pod requests 8, the node has 4 allocatable of which its pods request 1.5: 5.5 short"},
		{"a single feasible node is not scored", "Pod default/train -> gpu-1 (1 of 7 nodes feasible)\n"},
		{"the unschedulable pod gets kube-scheduler's message", "Pod default/analytics fits nowhere: 0/7 nodes are available: 1 node(s) had untolerated taint(s), 1 node(s) were unschedulable, 2 Insufficient cpu, 2 Insufficient memory, 3 node(s) didn't match Pod's node affinity/selector."},
		{"every rejecting filter of a node is listed, the reported one marked", "  node-b1\n    * NodeAffinity: nodeSelector disk=hdd: the node has disk=ssd\n      NodeResourcesFit: cpu: the pod requests 6, the node has 8 allocatable of which its pods request 3: 1 short\n"},
		{"the closest nodes close the explanation", "Closest to fitting: node-b2 (1 filter(s) in the way), node-a2 (1 filter(s) in the way)."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(out.String(), tt.want) {
				t.Errorf("output lacks %q; got:\n%s", tt.want, out.String())
			}
		})
	}
}
