package conformance

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	fwk "k8s.io/kube-scheduler/framework"

	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/nodeinfo"
	"github.com/kubesched/kubesched/sim"
)

// preemptingSequence is a crowded cluster as the preemption generators
// make one, without pending pods, and pods to place one after another
// that mostly want to preempt: the scenario's own pod and the pods of
// other seeds' scenarios, which the same generators make alike.
func preemptingSequence(seed uint64, pending int) (*Scenario, []*v1.Pod) {
	s := generateWithPreemption(seed)
	s.Pods = slices.DeleteFunc(s.Pods, func(p *v1.Pod) bool { return p.Spec.NodeName == "" })
	pods := []*v1.Pod{s.Pod}
	for k := 1; k < pending; k++ {
		p := generateWithPreemption(seed + uint64(k)*100003).Pod
		p.Name, p.UID = fmt.Sprintf("%s-%d", p.Name, k), types.UID(fmt.Sprintf("%s-%d", p.UID, k))
		p.Status.NominatedNodeName = ""
		pods = append(pods, p)
	}
	return s, pods
}

// TestSimPreemptingSequenceAgreesWithUpstream places pods one after
// another with sim.Cluster.PlacePreempting and follows upstream step by
// step on the same committed state: a pod that fits goes where upstream
// could put it; a pod that fits nowhere gets upstream's preemption
// decision (a best candidate node, its victims and PDB violations) or,
// like upstream, none; after the victims are evicted, the pod's next
// cycle, nominated to that node, decides as upstream's on the cluster
// without them.
func TestSimPreemptingSequenceAgreesWithUpstream(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const seeds, perSequence = 30, 6
	outcomes := map[string]int{}
	for seed := range uint64(seeds) {
		s, pending := preemptingSequence(9100000+seed, perSequence)
		fw, err := ours.DefaultFramework(framework.WithPercentageOfNodesToScore(100), framework.WithRandSource(rand.NewPCG(s.Seed, 1)))
		if err != nil {
			t.Fatal(err)
		}
		// PodDisruptionBudgets included: preemption reads them.
		c, err := sim.New(fw, s.Nodes, s.Pods, s.Objects...)
		if err != nil {
			t.Fatal(err)
		}
		for _, pod := range pending {
			// The cluster as the sim holds it, each node's pods in its
			// order, which evictions change as in kube-scheduler's cache:
			// among equal victims, the order decides.
			bound := podsOf(c.Nodes())
			step := &Scenario{Seed: s.Seed, Nodes: s.Nodes, Pods: slices.Clone(bound), Pod: pod, Objects: s.Objects}
			wantPre, err := upstream.RunPreemption(ctx, step)
			if err != nil {
				t.Fatalf("seed %d, %s: oracle: %v", s.Seed, pod.Name, err)
			}
			res, p, err := c.PlacePreempting(ctx, pod)
			var diffs []disagreement
			add := func(kind, format string, args ...any) {
				diffs = append(diffs, disagreement{kind, fmt.Sprintf(format, args...)})
			}
			upstreamPreempts := wantPre.Tried && wantPre.NominatingMode == fwk.ModeOverride && wantPre.NominatedNodeName != ""
			if p == nil {
				if upstreamPreempts {
					add("preemption-node", "upstream nominates %s, kubesched does not preempt (%v)", wantPre.NominatedNodeName, err)
				}
				want, oerr := upstream.RunScenario(ctx, step)
				if oerr != nil {
					t.Fatalf("seed %d, %s: oracle: %v", s.Seed, pod.Name, oerr)
				}
				diffs = append(diffs, diffResults(step, want, res, err)...)
			} else {
				if !upstreamPreempts {
					add("preemption-node", "kubesched nominates %s, upstream does not preempt", p.NominatedNodeName)
				} else {
					comparePreemptionDecision(wantPre, p, add)
				}
				for _, v := range p.Victims {
					if _, ok := c.Pod(v.Namespace, v.Name); ok {
						add("eviction", "victim %s/%s is still in the cluster", v.Namespace, v.Name)
					}
				}
				// Upstream's next cycle, on the cluster without the
				// victims, for the pod nominated where kubesched put it.
				bound = slices.DeleteFunc(bound, func(b *v1.Pod) bool {
					return slices.ContainsFunc(p.Victims, func(v *v1.Pod) bool { return samePodName(v, b) }) || samePodName(b, pod)
				})
				nominated := pod.DeepCopy()
				nominated.Status.NominatedNodeName = p.NominatedNodeName
				next := &Scenario{Seed: s.Seed, Nodes: s.Nodes, Pods: slices.Clone(bound), Pod: nominated, Objects: s.Objects}
				want, oerr := upstream.RunScenario(ctx, next)
				if oerr != nil {
					t.Fatalf("seed %d, %s: oracle: %v", s.Seed, pod.Name, oerr)
				}
				diffs = append(diffs, diffResults(next, want, res, err)...)
				outcomes["preempted"]++
				outcomes["victims"] += len(p.Victims)
			}
			if len(diffs) > 0 {
				t.Fatalf("seed %d, %s (after %d bound): %d disagreement(s) with kube-scheduler:\n%s",
					s.Seed, pod.Name, len(bound), len(diffs), formatDiffs(diffs, 20))
			}
			countPlacement(t, c, outcomes, pod, res, err)
		}
	}
	t.Logf("outcomes: %v", outcomes)
	if outcomes["preempted"] < seeds/2 || outcomes["placed"] < seeds || outcomes["unschedulable"] == 0 {
		t.Errorf("outcomes %v: want many preemptions, placements, and some pods that fit nowhere", outcomes)
	}
}

func samePodName(a, b *v1.Pod) bool { return a.Namespace == b.Namespace && a.Name == b.Name }

// podsOf lists the pods of nodes, node by node, each node's in its order.
func podsOf(nodes []*nodeinfo.NodeInfo) []*v1.Pod {
	var pods []*v1.Pod
	for _, ni := range nodes {
		for _, pi := range ni.Pods() {
			pods = append(pods, pi.Pod)
		}
	}
	return pods
}
