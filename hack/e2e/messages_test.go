package e2e

import (
	"context"
	"fmt"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestUnschedulableMessagesAgree asks both schedulers, on one cluster,
// about pods that fit nowhere for different reasons: each pod is created
// once for each, and both must write the same PodScheduled=False reason
// and message.
func TestUnschedulableMessagesAgree(t *testing.T) {
	ctx := context.Background()
	cp, client := startControlPlane(t, ctx)
	tainted := node("node-0", "4", "8Gi", map[string]string{v1.LabelTopologyZone: "a"})
	tainted.Spec.Taints = []v1.Taint{{Key: "dedicated", Value: "gpu", Effect: v1.TaintEffectNoSchedule}}
	cordoned := node("node-1", "4", "8Gi", map[string]string{v1.LabelTopologyZone: "a"})
	cordoned.Spec.Unschedulable = true
	for _, n := range []*v1.Node{
		tainted, cordoned,
		node("node-2", "4", "8Gi", map[string]string{v1.LabelTopologyZone: "b", "disk": "ssd"}),
		node("node-3", "1", "2Gi", map[string]string{v1.LabelTopologyZone: "c"}),
	} {
		if _, err := client.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	pods := client.CoreV1().Pods(metav1.NamespaceDefault)
	// A running pod holding host port 8080 on node-2, labelled for
	// anti-affinity.
	holder := pod("holder", "none", "100m", "64Mi")
	holder.Spec.NodeName = "node-2"
	holder.Labels = map[string]string{"app": "db"}
	holder.Spec.Containers[0].Ports = []v1.ContainerPort{{ContainerPort: 80, HostPort: 8080}}
	if _, err := pods.Create(ctx, holder, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	startController(t, cp, "-scheduler-name", kubeschedName, "-leader-elect=false")

	kinds := []struct {
		name  string
		shape func(p *v1.Pod)
	}{
		{"too-much-cpu", func(p *v1.Pod) {
			p.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse("6")
		}},
		{"selector-nobody-matches", func(p *v1.Pod) { p.Spec.NodeSelector = map[string]string{"disk": "hdd"} }},
		{"port-taken-where-selected", func(p *v1.Pod) {
			p.Spec.NodeSelector = map[string]string{"disk": "ssd"}
			p.Spec.Containers[0].Ports = []v1.ContainerPort{{ContainerPort: 80, HostPort: 8080}}
		}},
		{"anti-affinity-and-cpu", func(p *v1.Pod) {
			p.Spec.Containers[0].Resources.Requests[v1.ResourceCPU] = resource.MustParse("2")
			p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}, TopologyKey: v1.LabelTopologyZone,
			}}}}
		}},
		{"tolerates-the-taint-but-too-big", func(p *v1.Pod) {
			p.Spec.Tolerations = []v1.Toleration{{Key: "dedicated", Operator: v1.TolerationOpExists}}
			p.Spec.Containers[0].Resources.Requests[v1.ResourceMemory] = resource.MustParse("12Gi")
		}},
		{"missing-claim", func(p *v1.Pod) {
			p.Spec.Volumes = []v1.Volume{{Name: "data", VolumeSource: v1.VolumeSource{PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: "nowhere"}}}}
		}},
		{"spread-that-cannot-be-kept", func(p *v1.Pod) {
			p.Labels = map[string]string{"app": "db"}
			p.Spec.NodeSelector = map[string]string{"disk": "ssd"}
			// Zone c counts though the selector rules node-3 out: zone b,
			// where node-2 already runs one, would be 2 against 0.
			ignore := v1.NodeInclusionPolicyIgnore
			p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{
				MaxSkew: 1, TopologyKey: v1.LabelTopologyZone, WhenUnsatisfiable: v1.DoNotSchedule,
				LabelSelector:      &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}},
				NodeAffinityPolicy: &ignore,
			}}
			p.Spec.Affinity = &v1.Affinity{NodeAffinity: &v1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{
				NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{{Key: v1.LabelTopologyZone, Operator: v1.NodeSelectorOpIn, Values: []string{"b", "c"}}}}},
			}}}
		}},
	}
	for _, k := range kinds {
		for _, scheduler := range []string{v1.DefaultSchedulerName, kubeschedName} {
			p := pod(k.name+"-"+scheduler, scheduler, "100m", "64Mi")
			k.shape(p)
			if _, err := pods.Create(ctx, p, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, k := range kinds {
		messages := map[string]string{}
		eventually(t, time.Minute, k.name+": both report the pod unschedulable", func() (bool, error) {
			for _, scheduler := range []string{v1.DefaultSchedulerName, kubeschedName} {
				p, err := pods.Get(ctx, k.name+"-"+scheduler, metav1.GetOptions{})
				if err != nil {
					return false, err
				}
				if p.Spec.NodeName != "" {
					return false, fmt.Errorf("%s was bound to %s", p.Name, p.Spec.NodeName)
				}
				if c := scheduledCondition(p); c != nil && c.Status == v1.ConditionFalse {
					messages[scheduler] = c.Reason + ": " + c.Message
				}
			}
			return len(messages) == 2, nil
		})
		if messages[v1.DefaultSchedulerName] != messages[kubeschedName] {
			t.Errorf("%s:\n kube-scheduler: %s\n kubesched:      %s", k.name, messages[v1.DefaultSchedulerName], messages[kubeschedName])
		} else {
			t.Logf("%s: %s", k.name, messages[kubeschedName])
		}
	}
}
