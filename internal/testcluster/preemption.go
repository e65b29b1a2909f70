package testcluster

import (
	"fmt"
	"math/rand/v2"
	"time"

	v1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
)

// PreemptorPriority is the Preemption workload's pod's priority, above
// every pod [PreemptionPods] places.
const PreemptorPriority int32 = 1000

// PreemptionPatterns is how many ways [PreemptionPods] fills a node that
// is not one of the cheapest to preempt on ([PreemptionCheapestEvery]):
// node i is filled the (i mod PreemptionPatterns)th way, with the same
// sizes, priorities, labels and start times. It is a prime, so that
// patterns do not line up with the zones.
const PreemptionPatterns = 61

// PreemptionCheapestEvery is how often a node is one of the cheapest to
// preempt on: one node in every PreemptionCheapestEvery, from the first,
// holds four pods of 1 CPU, and evicting the least important, of
// priority 0, not under a PodDisruptionBudget and started after every
// other pod, makes room. Preemption's choice ranks these nodes equal and
// above every other. Both schedulers' dry runs stop once they have enough
// candidates (every node is one; DefaultPreemption's
// minCandidateNodesAbsolute is 100), and so many cheapest nodes make sure
// both meet some: kubesched's candidates are a stretch of at least 100
// consecutive nodes; kube-scheduler's come from stretches of consecutive
// nodes that at most 16 workers examine at a time, each stretch a chunk of
// its parallelizer or the start of one, so that one stretch holds at least
// 7 of the 100.
const PreemptionCheapestEvery = 5

// preemptionApps is how many apps (label app=batch-<k>) the filling pods
// belong to; [preemptionBudgets] cover the first few.
const preemptionApps = 8

// preemptionBudgets are the Preemption workload's PodDisruptionBudgets:
// the app each covers and its status.disruptionsAllowed.
var preemptionBudgets = []struct {
	app     string
	allowed int32
}{{"batch-0", 0}, {"batch-1", 1}, {"batch-2", 0}}

// preemptionEpoch is when the oldest filling pod could have started; the
// start times are fixed so that both schedulers see the same cluster
// whenever they run. Preemption prefers nodes whose most important
// victims started last.
var preemptionEpoch = time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)

// PreemptionPods returns the pods that fill each of nodes (4 CPU, as
// [Nodes] makes them) so that the Preemption workload's pod (1 CPU) fits
// none: pods of 500m / 1Gi or 1 CPU / 2Gi, priority 0 to 10, labelled
// app=batch-<k> for k in 0..7, started in the first month of 2026, use 4
// CPU on about half the nodes and 3.5 on the others. Evicting the least
// important of them, as preemption does, frees the CPU in one to three
// pods. Node i holds pods named low-<i>-<j>, filled the cheapest way
// ([PreemptionCheapestEvery]) or by pattern i mod [PreemptionPatterns].
func PreemptionPods(nodes []*v1.Node) []*v1.Pod {
	patterns := make([][]*v1.Pod, min(len(nodes), PreemptionPatterns))
	for i := range patterns {
		patterns[i] = preemptionPattern(uint64(i))
	}
	cheapest := cheapestPattern()
	var pods []*v1.Pod
	for i, n := range nodes {
		fill := cheapest
		if i%PreemptionCheapestEvery != 0 {
			fill = patterns[i%PreemptionPatterns]
		}
		for j, tmpl := range fill {
			p := tmpl.DeepCopy()
			p.Name = fmt.Sprintf("low-%05d-%d", i, j)
			p.UID = types.UID(p.Name)
			p.Spec.NodeName = n.Name
			pods = append(pods, p)
		}
	}
	return pods
}

// preemptionPattern returns the pods of one way of filling a node, without
// names or node.
func preemptionPattern(pattern uint64) []*v1.Pod {
	r := rand.New(rand.NewPCG(pattern, 0x5eed))
	milliCPU := 4000 - 500*r.IntN(2)
	var pods []*v1.Pod
	for j := 0; milliCPU > 0; j++ {
		size := 500
		if milliCPU >= 1000 && r.IntN(2) == 0 {
			size = 1000
		}
		milliCPU -= size
		// Distinct within the node, so that equally important victims are
		// ordered alike by both schedulers' unstable sorts.
		started := time.Duration(r.IntN(30*24*60))*time.Minute + time.Duration(j)*time.Second
		pods = append(pods, fillingPod(size, int32(r.IntN(11)), r.IntN(preemptionApps), started))
	}
	return pods
}

// cheapestPattern returns the pods of the cheapest nodes
// ([PreemptionCheapestEvery]), without names or node.
func cheapestPattern() []*v1.Pod {
	day := 24 * time.Hour
	return []*v1.Pod{
		fillingPod(1000, 5, 3, 2*day),
		fillingPod(1000, 7, 4, 9*day),
		fillingPod(1000, 3, 5, 20*day),
		// The victim: started after every pod of preemptionPattern.
		fillingPod(1000, 0, 6, 31*day),
	}
}

// fillingPod returns a pod of milliCPU and as many Gi per 500m, of the
// priority, labelled app=batch-<app>, started that long after
// preemptionEpoch.
func fillingPod(milliCPU int, priority int32, app int, started time.Duration) *v1.Pod {
	p := Pod("", Basic)
	p.Labels = map[string]string{"app": fmt.Sprintf("batch-%d", app)}
	p.Spec.Priority = new(priority)
	p.Spec.Containers[0].Resources.Requests = v1.ResourceList{
		v1.ResourceCPU:    *resource.NewMilliQuantity(int64(milliCPU), resource.DecimalSI),
		v1.ResourceMemory: *resource.NewQuantity(int64(milliCPU/500)<<30, resource.BinarySI),
	}
	p.Status.StartTime = &metav1.Time{Time: preemptionEpoch.Add(started)}
	p.Status.Phase = v1.PodRunning
	return p
}

// preemptionObjects returns the Preemption workload's
// PodDisruptionBudgets, in the pods' namespace.
func preemptionObjects() []runtime.Object {
	var objs []runtime.Object
	for _, b := range preemptionBudgets {
		objs = append(objs, &policyv1.PodDisruptionBudget{
			ObjectMeta: metav1.ObjectMeta{Name: b.app, Namespace: "default"},
			Spec: policyv1.PodDisruptionBudgetSpec{
				Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": b.app}},
			},
			Status: policyv1.PodDisruptionBudgetStatus{DisruptionsAllowed: b.allowed},
		})
	}
	return objs
}
