//go:build !kubernetes_1_36

package conformance

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubesched/kubesched/internal/testcluster"
)

// Simulation workloads: a cluster and the pending pods a simulation places
// in it one after another, each placement committed before the next.
const (
	// SimMix's pending pods are a realistic mix: 40% plain pods of four
	// sizes, 40% pods of ReplicaSets that PodTopologySpread's default
	// (system) constraints spread, 20% pods of ReplicaSets whose pods
	// repel each other from a node (required hostname anti-affinity).
	SimMix = "Mix"
	// SimReplicas' pending pods are replicas of one ReplicaSet's pod:
	// only their names and UIDs differ.
	SimReplicas = "Replicas"
	// SimAutoscaler is the mix cluster-autoscaler simulates: 60% plain
	// pods of five sizes (SimMix's four and one of half a node's CPU),
	// 25% pods of the ReplicaSets that default constraints spread, 15%
	// pods of those that keep their pods a node apart; every ReplicaSet
	// has a Service selecting its pods, so that default spreading reads
	// the Services too.
	SimAutoscaler = "Autoscaler"
	// SimAutoscalerReplicas' pending pods are SimReplicas', in
	// SimAutoscaler's cluster: with the Services.
	SimAutoscalerReplicas = "AutoscalerReplicas"
)

// SimWorkloadNames are the simulation workloads, for [NewSimWorkload].
var SimWorkloadNames = []string{SimMix, SimReplicas, SimAutoscaler, SimAutoscalerReplicas}

// simWorkloads says what makes each of [SimWorkloadNames] what it is.
var simWorkloads = map[string]struct {
	// mix is the pending pods' mix; nil for replicas of simReplicasApp's
	// pod.
	mix *simMix
	// services gives every app a Service selecting its pods.
	services bool
}{
	SimMix:                {mix: &simMix{plain: 40, spread: 40, sizes: simSizes}},
	SimReplicas:           {},
	SimAutoscaler:         {mix: &simMix{plain: 60, spread: 25, sizes: simAutoscalerSizes}, services: true},
	SimAutoscalerReplicas: {services: true},
}

// SimWorkload is a cluster and pods to place in it, for timing
// simulations side by side.
type SimWorkload struct {
	// Name is the workload, one of [SimWorkloadNames].
	Name string
	// Nodes are the cluster's nodes.
	Nodes []*v1.Node
	// Pods are the running pods, bound by spec.nodeName.
	Pods []*v1.Pod
	// Pending are the pods to place, in order; they have no node.
	Pending []*v1.Pod
	// Objects are the ReplicaSets the pods belong to and, for
	// SimAutoscaler's cluster, the Services selecting them, which default
	// spreading reads.
	Objects []runtime.Object
}

// simSeed seeds every workload's generator, so that a workload is the
// same on every run, and the running pods are the same in every workload.
const simSeed = 0x51b7e5

// simNamespace is every pod's and ReplicaSet's namespace.
const simNamespace = "default"

// simEpoch is when the first running pod was created; the others, then
// the pending pods, follow a second apart.
var simEpoch = time.Date(2026, time.January, 1, 0, 0, 0, 0, time.UTC)

// simSize is a pod's requests.
type simSize struct {
	cpu, memory resource.Quantity
}

// simSizes are the sizes of the plain pods, drawn uniformly, and of the
// ReplicaSets' pods, one per app in turn. The largest asks for a quarter
// of a node's CPU and a sixteenth of its memory, so CPU is what fills a
// node.
var simSizes = []simSize{
	{resource.MustParse("100m"), resource.MustParse("256Mi")},
	{resource.MustParse("250m"), resource.MustParse("512Mi")},
	{resource.MustParse("500m"), resource.MustParse("1Gi")},
	{resource.MustParse("1"), resource.MustParse("2Gi")},
}

// simAutoscalerSizes are [SimAutoscaler]'s plain pods' sizes: simSizes
// and one of half a node's CPU, which some nodes no longer have room for.
var simAutoscalerSizes = append(slices.Clip(simSizes), simSize{resource.MustParse("2"), resource.MustParse("4Gi")})

// simApp is one of the workloads' ReplicaSets.
type simApp struct {
	// name is the ReplicaSet's name and its pods' app label.
	name string
	uid  types.UID
	size simSize
	// antiAffinity is whether its pods require no other pod of the app on
	// their node.
	antiAffinity bool
}

const (
	// simNumApps is how many ReplicaSets there are.
	simNumApps = 20
	// simAntiAffineApps is how many of them, the first ones, keep their
	// pods a node apart. Pending pods of theirs are dealt to them in turn,
	// so that none needs more nodes than the cluster has.
	simAntiAffineApps = 4
	// simReplicasApp is the app SimReplicas' pending pods belong to: one
	// that spreads softly, as most do, and has running pods already, so
	// that spreading counts them.
	simReplicasApp = 5
)

// NewSimWorkload builds the workload called name (one of
// [SimWorkloadNames]; it panics for another) over numNodes nodes of 4
// CPU, 32Gi and 110 pods in three zones (testcluster's Basic nodes), with
// numRunning running pods and numPending pending ones. It is
// deterministic, and the nodes and running pods are the same for every
// workload.
//
// Running pods are half plain pods of the four sizes, half pods of one of
// 20 ReplicaSets (apps/v1, in Objects, selecting app=<name>, which the
// pods carry with a controller owner reference, so that
// PodTopologySpread's default constraints spread them); the first four
// apps' pods also require, by pod anti-affinity on the hostname, that no
// other pod of theirs share their node. Each is bound to a random node
// with room for it, where its anti-affinity allows. In SimAutoscaler's
// cluster each ReplicaSet also has a Service of its name selecting
// app=<name>, in Objects. For the pending pods see [SimMix],
// [SimReplicas], [SimAutoscaler] and [SimAutoscalerReplicas]: every one
// fits some node when placed in order, as long as numNodes is at least a
// quarter of the anti-affine pods (see simAntiAffineApps) and the cluster
// has room for all. Every pod has a unique name and UID and a creation
// timestamp; names are running-NNNNN and pending-NNNNN.
func NewSimWorkload(name string, numNodes, numRunning, numPending int) SimWorkload {
	spec, ok := simWorkloads[name]
	if !ok {
		panic(fmt.Sprintf("NewSimWorkload: unknown workload %q, want one of %v", name, SimWorkloadNames))
	}
	r := rand.New(rand.NewPCG(simSeed, 0))
	apps := make([]*simApp, simNumApps)
	objs := make([]runtime.Object, simNumApps)
	for i := range apps {
		apps[i] = &simApp{
			name:         fmt.Sprintf("app-%02d", i),
			uid:          types.UID(fmt.Sprintf("uid-replicaset-%02d", i)),
			size:         simSizes[i%len(simSizes)],
			antiAffinity: i < simAntiAffineApps,
		}
		objs[i] = apps[i].replicaSet()
	}
	if spec.services {
		for _, a := range apps {
			objs = append(objs, a.service())
		}
	}
	w := SimWorkload{Name: name, Nodes: testcluster.Nodes(numNodes, testcluster.Basic), Objects: objs}
	// The running pods first, so that they are drawn alike whatever the
	// workload.
	w.Pods = simRunningPods(r, w.Nodes, apps, numRunning)
	created := func(k int) time.Time { return simEpoch.Add(time.Duration(numRunning+k) * time.Second) }
	if spec.mix != nil {
		w.Pending = spec.mix.pending(r, apps, numPending, created)
		return w
	}
	// Replicas, created by the ReplicaSet controller in one go: the same
	// timestamp, so that names and UIDs are all that differ.
	for k := range numPending {
		w.Pending = append(w.Pending, apps[simReplicasApp].pod(fmt.Sprintf("pending-%05d", k), created(0)))
	}
	return w
}

// simRunningPods returns n running pods, half of them plain, half of the
// apps', each bound to a random node with room for it that its
// anti-affinity, and that of the pods already there, allows; the next
// node that does when the one drawn does not. It panics when no node does.
func simRunningPods(r *rand.Rand, nodes []*v1.Node, apps []*simApp, n int) []*v1.Pod {
	// What each node has left, and the anti-affine apps on it.
	type room struct {
		milliCPU, memory int64
		pods             int64
		apps             map[string]bool
	}
	rooms := make([]room, len(nodes))
	for i, node := range nodes {
		a := node.Status.Allocatable
		rooms[i] = room{milliCPU: a.Cpu().MilliValue(), memory: a.Memory().Value(), pods: a.Pods().Value(), apps: map[string]bool{}}
	}
	pods := make([]*v1.Pod, n)
	for i := range pods {
		name := fmt.Sprintf("running-%05d", i)
		created := simEpoch.Add(time.Duration(i) * time.Second)
		var app *simApp
		if r.IntN(2) == 0 {
			app = apps[r.IntN(len(apps))]
			pods[i] = app.pod(name, created)
		} else {
			pods[i] = simPlainPod(name, created, simSizes[r.IntN(len(simSizes))])
		}
		req := pods[i].Spec.Containers[0].Resources.Requests
		fits := func(rm *room) bool {
			// Anti-affinity holds both ways, but only within an app: an
			// app's pods are the only ones its term selects.
			return rm.milliCPU >= req.Cpu().MilliValue() && rm.memory >= req.Memory().Value() && rm.pods > 0 &&
				(app == nil || !app.antiAffinity || !rm.apps[app.name])
		}
		start := r.IntN(len(nodes))
		placed := false
		for k := range nodes {
			j := (start + k) % len(nodes)
			rm := &rooms[j]
			if !fits(rm) {
				continue
			}
			rm.milliCPU -= req.Cpu().MilliValue()
			rm.memory -= req.Memory().Value()
			rm.pods--
			if app != nil && app.antiAffinity {
				rm.apps[app.name] = true
			}
			pods[i].Spec.NodeName = nodes[j].Name
			placed = true
			break
		}
		if !placed {
			panic(fmt.Sprintf("NewSimWorkload: no node has room for running pod %d of %d", i, n))
		}
	}
	return pods
}

// simMix is a mix of pending pods, its kinds shuffled together: plain
// percent plain pods of sizes drawn uniformly, spread percent pods of the
// apps that spread softly, picked at random, and the rest pods of the
// anti-affine apps, dealt to them in turn.
type simMix struct {
	plain, spread int
	sizes         []simSize
}

// pending returns m's n pending pods; the k-th is created at created(k).
func (m *simMix) pending(r *rand.Rand, apps []*simApp, n int, created func(int) time.Time) []*v1.Pod {
	const plain, spread, antiAffine = 0, 1, 2
	kinds := make([]int, n)
	for k := range kinds {
		switch {
		case k < n*m.plain/100:
			kinds[k] = plain
		case k < n*(m.plain+m.spread)/100:
			kinds[k] = spread
		default:
			kinds[k] = antiAffine
		}
	}
	r.Shuffle(n, func(i, j int) { kinds[i], kinds[j] = kinds[j], kinds[i] })
	pods := make([]*v1.Pod, n)
	dealt := 0
	for k, kind := range kinds {
		name := fmt.Sprintf("pending-%05d", k)
		switch kind {
		case plain:
			pods[k] = simPlainPod(name, created(k), m.sizes[r.IntN(len(m.sizes))])
		case spread:
			pods[k] = apps[simAntiAffineApps+r.IntN(len(apps)-simAntiAffineApps)].pod(name, created(k))
		default:
			pods[k] = apps[dealt%simAntiAffineApps].pod(name, created(k))
			dealt++
		}
	}
	return pods
}

// simPlainPod is a pod of size that belongs to no controller.
func simPlainPod(name string, created time.Time, size simSize) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: simNamespace, UID: types.UID("uid-" + name),
			CreationTimestamp: metav1.NewTime(created),
		},
		Spec: size.podSpec("registry.example/batch:1"),
	}
}

// podSpec is a pod spec of one container asking for size.
func (s simSize) podSpec(image string) v1.PodSpec {
	return v1.PodSpec{Containers: []v1.Container{{
		Name:      "main",
		Image:     image,
		Resources: v1.ResourceRequirements{Requests: v1.ResourceList{v1.ResourceCPU: s.cpu, v1.ResourceMemory: s.memory}},
	}}}
}

// labels are the labels of a's pods, which its ReplicaSet selects.
func (a *simApp) labels() map[string]string {
	return map[string]string{"app": a.name}
}

// template is a's pod template: its labels, its size and, for an
// anti-affine app, the anti-affinity.
func (a *simApp) template() v1.PodTemplateSpec {
	t := v1.PodTemplateSpec{
		ObjectMeta: metav1.ObjectMeta{Labels: a.labels()},
		Spec:       a.size.podSpec("registry.example/" + a.name + ":1"),
	}
	if a.antiAffinity {
		t.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{
			RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{{
				LabelSelector: &metav1.LabelSelector{MatchLabels: a.labels()},
				TopologyKey:   "kubernetes.io/hostname",
			}},
		}}
	}
	return t
}

// replicaSet is a's ReplicaSet.
func (a *simApp) replicaSet() *appsv1.ReplicaSet {
	return &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: a.name, Namespace: simNamespace, UID: a.uid, CreationTimestamp: metav1.NewTime(simEpoch)},
		Spec: appsv1.ReplicaSetSpec{
			Selector: &metav1.LabelSelector{MatchLabels: a.labels()},
			Template: a.template(),
		},
	}
}

// service is a Service of a's name selecting its pods.
func (a *simApp) service() *v1.Service {
	return &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: a.name, Namespace: simNamespace, UID: types.UID("uid-service-" + a.name), CreationTimestamp: metav1.NewTime(simEpoch)},
		Spec: v1.ServiceSpec{
			Selector: a.labels(),
			Ports:    []v1.ServicePort{{Port: 80}},
		},
	}
}

// pod is a pod of a's, as its ReplicaSet controller creates it from the
// template: owned by the ReplicaSet, as its controller.
func (a *simApp) pod(name string, created time.Time) *v1.Pod {
	t := a.template()
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name: name, Namespace: simNamespace, UID: types.UID("uid-" + name),
			CreationTimestamp: metav1.NewTime(created),
			Labels:            t.Labels,
			OwnerReferences: []metav1.OwnerReference{{
				APIVersion: "apps/v1", Kind: "ReplicaSet", Name: a.name, UID: a.uid, Controller: new(true),
			}},
		},
		Spec: t.Spec,
	}
}
