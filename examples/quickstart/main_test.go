package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestQuickstartPlacesEachPodAsKubeSchedulerWould(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	if err := run(&out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"Cluster: 7 nodes, 3 pods running.",
		// Prefers ssd and finds its image already on node-a1.
		"Pod default/web\n  -> node-a1 (5 of 7 nodes feasible)",
		// The second replica keeps off the first one's node.
		"Pod default/web-2\n  -> node-a2 (4 of 7 nodes feasible)",
		"node-a1  rejected by InterPodAffinity: node(s) didn't match pod anti-affinity rules",
		// Port 6379 is taken on node-a1.
		"node-a1  rejected by NodePorts: node(s) didn't have free ports for the requested pod ports",
		// Only the GPU node has GPUs, and the pod tolerates its taint.
		"Pod default/train\n  -> gpu-1 (1 of 7 nodes feasible)",
		"Pod default/analytics\n  unschedulable: 0/7 nodes are available: 1 node(s) had untolerated taint(s), 1 node(s) were unschedulable, 2 Insufficient cpu, 2 Insufficient memory, 3 node(s) didn't match Pod's node affinity/selector.",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q; got:\n%s", want, out.String())
		}
	}
}
