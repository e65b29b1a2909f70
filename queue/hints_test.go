package queue

import (
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubesched/kubesched/feature"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/names"
)

// Builders for the hint tests.

func hintNode(name string, mods ...func(*v1.Node)) *v1.Node {
	n := &v1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, Labels: map[string]string{v1.LabelHostname: name}},
		Status: v1.NodeStatus{Allocatable: v1.ResourceList{
			v1.ResourceCPU: resource.MustParse("2"), v1.ResourceMemory: resource.MustParse("4Gi"), v1.ResourcePods: resource.MustParse("110"),
		}},
	}
	for _, m := range mods {
		m(n)
	}
	return n
}

func withLabel(k, v string) func(*v1.Node) { return func(n *v1.Node) { n.Labels[k] = v } }
func withTaint(k string) func(*v1.Node) {
	return func(n *v1.Node) {
		n.Spec.Taints = append(n.Spec.Taints, v1.Taint{Key: k, Effect: v1.TaintEffectNoSchedule})
	}
}
func withCPU(q string) func(*v1.Node) {
	return func(n *v1.Node) { n.Status.Allocatable[v1.ResourceCPU] = resource.MustParse(q) }
}
func withAllocatable(name v1.ResourceName, q string) func(*v1.Node) {
	return func(n *v1.Node) { n.Status.Allocatable[name] = resource.MustParse(q) }
}
func cordoned(n *v1.Node) { n.Spec.Unschedulable = true }

func hintPod(name string, mods ...func(*v1.Pod)) *v1.Pod {
	p := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name), Labels: map[string]string{"app": name}},
		Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "c", Resources: v1.ResourceRequirements{Requests: v1.ResourceList{}}}}},
	}
	for _, m := range mods {
		m(p)
	}
	return p
}

func requesting(name v1.ResourceName, q string) func(*v1.Pod) {
	return func(p *v1.Pod) { p.Spec.Containers[0].Resources.Requests[name] = resource.MustParse(q) }
}
func onNode(n string) func(*v1.Pod)      { return func(p *v1.Pod) { p.Spec.NodeName = n } }
func labelled(k, v string) func(*v1.Pod) { return func(p *v1.Pod) { p.Labels[k] = v } }
func hostPort(port int32) func(*v1.Pod) {
	return func(p *v1.Pod) {
		p.Spec.Containers[0].Ports = append(p.Spec.Containers[0].Ports, v1.ContainerPort{ContainerPort: port, HostPort: port})
	}
}
func tolerating(key string) func(*v1.Pod) {
	return func(p *v1.Pod) {
		p.Spec.Tolerations = append(p.Spec.Tolerations, v1.Toleration{Key: key, Operator: v1.TolerationOpExists})
	}
}
func withNodeSelector(k, v string) func(*v1.Pod) {
	return func(p *v1.Pod) { p.Spec.NodeSelector = map[string]string{k: v} }
}
func withClaimVolume(claim string) func(*v1.Pod) {
	return func(p *v1.Pod) {
		p.Spec.Volumes = append(p.Spec.Volumes, v1.Volume{Name: claim, VolumeSource: v1.VolumeSource{
			PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: claim}}})
	}
}
func requiringAffinity(key string, labels map[string]string) func(*v1.Pod) {
	return func(p *v1.Pod) {
		p.Spec.Affinity = &v1.Affinity{PodAffinity: &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{
			{TopologyKey: key, LabelSelector: &metav1.LabelSelector{MatchLabels: labels}},
		}}}
	}
}
func avoiding(key string, labels map[string]string) func(*v1.Pod) {
	return func(p *v1.Pod) {
		p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{
			{TopologyKey: key, LabelSelector: &metav1.LabelSelector{MatchLabels: labels}},
		}}}
	}
}
func spreading(key string, labels map[string]string) func(*v1.Pod) {
	return func(p *v1.Pod) {
		p.Spec.TopologySpreadConstraints = append(p.Spec.TopologySpreadConstraints, v1.TopologySpreadConstraint{
			MaxSkew: 1, TopologyKey: key, WhenUnsatisfiable: v1.DoNotSchedule, LabelSelector: &metav1.LabelSelector{MatchLabels: labels}})
	}
}
func withResourceClaim(name string) func(*v1.Pod) {
	return func(p *v1.Pod) {
		p.Spec.ResourceClaims = append(p.Spec.ResourceClaims, v1.PodResourceClaim{Name: name, ResourceClaimName: &name})
	}
}

func resourceClaim(name string, allocated bool) *resourceapi.ResourceClaim {
	c := &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("claim-" + name)}}
	if allocated {
		c.Status.Allocation = &resourceapi.AllocationResult{}
	}
	return c
}

// updated returns a copy of n changed by mods.
func updated(n *v1.Node, mods ...func(*v1.Node)) *v1.Node {
	c := n.DeepCopy()
	for _, m := range mods {
		m(c)
	}
	return c
}

func updatedPod(p *v1.Pod, mods ...func(*v1.Pod)) *v1.Pod {
	c := p.DeepCopy()
	for _, m := range mods {
		m(c)
	}
	return c
}

// TestDefaultHints asks each default plugin's hint about one event, as
// the queue would for a pod that plugin rejected.
func TestDefaultHints(t *testing.T) {
	t.Parallel()
	cpuHungry := hintPod("cpu-hungry", requesting(v1.ResourceCPU, "3"))
	small := hintNode("small")
	gpuClass := &resourceapi.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "gpu"}, Spec: resourceapi.DeviceClassSpec{ExtendedResourceName: ptrTo("example.com/gpu")}}
	gpuPod := hintPod("gpu", requesting("example.com/gpu", "1"))
	claimed := hintPod("claimed", withResourceClaim("gpu-claim"))
	zoned := hintPod("zoned", withNodeSelector(v1.LabelTopologyZone, "a"))
	affine := hintPod("affine", requiringAffinity(v1.LabelTopologyZone, map[string]string{"app": "db"}))
	spread := hintPod("spread", spreading(v1.LabelTopologyZone, map[string]string{"app": "web"}))
	waitForConsumer := storagev1.VolumeBindingWaitForFirstConsumer
	for _, tc := range []struct {
		name           string
		plugin         string
		pod            *v1.Pod
		event          fwk.ClusterEvent
		oldObj, newObj any
		objects        []runtime.Object // the listers'
		want           fwk.QueueingHint
	}{
		{name: "a pod rejected for cpu is not retried when an unrelated node label changes",
			plugin: names.NodeResourcesFit, pod: cpuHungry, event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.UpdateNodeAllocatable},
			oldObj: small, newObj: updated(small, withLabel("team", "a"), withAllocatable(v1.ResourceMemory, "8Gi")), want: fwk.QueueSkip},
		{name: "a pod rejected for cpu is retried when a node's allocatable grows enough",
			plugin: names.NodeResourcesFit, pod: cpuHungry, event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.UpdateNodeAllocatable},
			oldObj: small, newObj: updated(small, withCPU("4")), want: fwk.Queue},
		{name: "a pod rejected for cpu is not retried when a node grows too little",
			plugin: names.NodeResourcesFit, pod: cpuHungry, event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.UpdateNodeAllocatable},
			oldObj: small, newObj: updated(small, withCPU("2500m")), want: fwk.QueueSkip},
		{name: "a pod asking for cpu only is not retried when a node it already fitted gains memory",
			plugin: names.NodeResourcesFit, pod: hintPod("modest", requesting(v1.ResourceCPU, "1")), event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.UpdateNodeAllocatable},
			oldObj: small, newObj: updated(small, withAllocatable(v1.ResourceMemory, "8Gi")), want: fwk.QueueSkip},
		{name: "a pod is retried when a node it fits gains pod slots",
			plugin: names.NodeResourcesFit, pod: hintPod("modest", requesting(v1.ResourceCPU, "1")), event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.UpdateNodeAllocatable},
			oldObj: small, newObj: updated(small, withAllocatable(v1.ResourcePods, "111")), want: fwk.Queue},
		{name: "a pod rejected for cpu is retried when a node with room is added",
			plugin: names.NodeResourcesFit, pod: cpuHungry, event: fwk.EventNodeAdd, newObj: hintNode("big", withCPU("8")), want: fwk.Queue},
		{name: "a pod rejected for cpu is not retried when a node without room is added",
			plugin: names.NodeResourcesFit, pod: cpuHungry, event: fwk.EventNodeAdd, newObj: hintNode("other"), want: fwk.QueueSkip},
		{name: "a pod rejected for cpu is retried when a bound pod is deleted",
			plugin: names.NodeResourcesFit, pod: cpuHungry, event: fwk.EventAssignedPodDelete, oldObj: hintPod("bound", onNode("small")), want: fwk.Queue},
		{name: "a pod rejected for cpu is not retried when a pending pod that held no place is deleted",
			plugin: names.NodeResourcesFit, pod: cpuHungry, event: fwk.EventAssignedPodDelete, oldObj: hintPod("pending"), want: fwk.QueueSkip},
		{name: "a pod rejected for cpu is retried when a bound pod gives up cpu",
			plugin: names.NodeResourcesFit, pod: cpuHungry, event: fwk.ClusterEvent{Resource: fwk.AssignedPod, ActionType: fwk.UpdatePodScaleDown},
			oldObj: hintPod("bound", onNode("small"), requesting(v1.ResourceCPU, "1")), newObj: hintPod("bound", onNode("small"), requesting(v1.ResourceCPU, "500m")), want: fwk.Queue},
		{name: "a pod rejected for cpu is not retried when a bound pod gives up memory only",
			plugin: names.NodeResourcesFit, pod: cpuHungry, event: fwk.ClusterEvent{Resource: fwk.AssignedPod, ActionType: fwk.UpdatePodScaleDown},
			oldObj: hintPod("bound", onNode("small"), requesting(v1.ResourceMemory, "1Gi")), newObj: hintPod("bound", onNode("small"), requesting(v1.ResourceMemory, "512Mi")), want: fwk.QueueSkip},
		{name: "a pod asking for an extended resource is retried when a node without it is added once a DeviceClass provides it",
			plugin: names.NodeResourcesFit, pod: gpuPod, event: fwk.EventNodeAdd, newObj: hintNode("plain"), objects: []runtime.Object{gpuClass}, want: fwk.Queue},
		{name: "a pod asking for an extended resource is not retried when a node without it is added and no DeviceClass provides it",
			plugin: names.NodeResourcesFit, pod: gpuPod, event: fwk.EventNodeAdd, newObj: hintNode("plain"), want: fwk.QueueSkip},
		{name: "a pod asking for an extended resource is retried when a DeviceClass providing it is added",
			plugin: names.NodeResourcesFit, pod: gpuPod, event: fwk.ClusterEvent{Resource: fwk.DeviceClass, ActionType: fwk.Add}, newObj: gpuClass, want: fwk.Queue},
		{name: "a pod rejected by NodeAffinity is retried when a node gains the label it needs",
			plugin: names.NodeAffinity, pod: zoned, event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.UpdateNodeLabel},
			oldObj: small, newObj: updated(small, withLabel(v1.LabelTopologyZone, "a")), want: fwk.Queue},
		{name: "a pod rejected by NodeAffinity is not retried when a node gains another label",
			plugin: names.NodeAffinity, pod: zoned, event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.UpdateNodeLabel},
			oldObj: small, newObj: updated(small, withLabel(v1.LabelTopologyZone, "b")), want: fwk.QueueSkip},
		{name: "a pod rejected by NodeAffinity is not retried when a node that already matched changes another label",
			plugin: names.NodeAffinity, pod: zoned, event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.UpdateNodeLabel},
			oldObj: hintNode("a", withLabel(v1.LabelTopologyZone, "a")), newObj: hintNode("a", withLabel(v1.LabelTopologyZone, "a"), withLabel("x", "y")), want: fwk.QueueSkip},
		{name: "a pod rejected by TaintToleration is retried when the taint is removed",
			plugin: names.TaintToleration, pod: hintPod("p"), event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.UpdateNodeTaint},
			oldObj: hintNode("t", withTaint("dedicated")), newObj: hintNode("t"), want: fwk.Queue},
		{name: "a pod rejected by TaintToleration is not retried when another untolerated taint remains",
			plugin: names.TaintToleration, pod: hintPod("p"), event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.UpdateNodeTaint},
			oldObj: hintNode("t", withTaint("dedicated"), withTaint("gpu")), newObj: hintNode("t", withTaint("gpu")), want: fwk.QueueSkip},
		{name: "a pod rejected by TaintToleration is retried when it gains a toleration itself",
			plugin: names.TaintToleration, pod: hintPod("p"), event: fwk.ClusterEvent{Resource: fwk.TargetPod, ActionType: fwk.UpdatePodToleration},
			oldObj: hintPod("p"), newObj: hintPod("p", tolerating("dedicated")), want: fwk.Queue},
		{name: "a pod rejected by NodeUnschedulable is retried when the node is uncordoned",
			plugin: names.NodeUnschedulable, pod: hintPod("p"), event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.UpdateNodeTaint},
			oldObj: hintNode("c", cordoned), newObj: hintNode("c"), want: fwk.Queue},
		{name: "a pod rejected by NodeUnschedulable is not retried when a cordoned node is added",
			plugin: names.NodeUnschedulable, pod: hintPod("p"), event: fwk.EventNodeAdd, newObj: hintNode("c", cordoned), want: fwk.QueueSkip},
		{name: "a pod rejected by NodeUnschedulable is not retried when it gains an unrelated toleration",
			plugin: names.NodeUnschedulable, pod: hintPod("p"), event: fwk.ClusterEvent{Resource: fwk.TargetPod, ActionType: fwk.UpdatePodToleration},
			oldObj: hintPod("p"), newObj: hintPod("p", tolerating("dedicated")), want: fwk.QueueSkip},
		{name: "a pod rejected by NodePorts is retried when a bound pod holding its port is deleted",
			plugin: names.NodePorts, pod: hintPod("p", hostPort(80)), event: fwk.EventAssignedPodDelete, oldObj: hintPod("web", onNode("n"), hostPort(80)), want: fwk.Queue},
		{name: "a pod rejected by NodePorts is not retried when a bound pod holding another port is deleted",
			plugin: names.NodePorts, pod: hintPod("p", hostPort(80)), event: fwk.EventAssignedPodDelete, oldObj: hintPod("web", onNode("n"), hostPort(443)), want: fwk.QueueSkip},
		{name: "a pod rejected by InterPodAffinity is retried when a pod it wants is bound",
			plugin: names.InterPodAffinity, pod: affine, event: fwk.EventAssignedPodAdd, newObj: hintPod("db", onNode("n"), labelled("app", "db")), want: fwk.Queue},
		{name: "a pod rejected by InterPodAffinity is not retried when an unrelated pod is bound",
			plugin: names.InterPodAffinity, pod: affine, event: fwk.EventAssignedPodAdd, newObj: hintPod("web", onNode("n")), want: fwk.QueueSkip},
		{name: "a pod avoiding others is retried when a node is added",
			plugin: names.InterPodAffinity, pod: hintPod("p", avoiding(v1.LabelHostname, map[string]string{"app": "db"})), event: fwk.EventNodeAdd, newObj: hintNode("n"), want: fwk.Queue},
		{name: "a pod rejected by InterPodAffinity is not retried when a node without the topology key is added",
			plugin: names.InterPodAffinity, pod: affine, event: fwk.EventNodeAdd, newObj: hintNode("n"), want: fwk.QueueSkip},
		{name: "a pod rejected by PodTopologySpread is retried when a matching pod of its namespace is deleted",
			plugin: names.PodTopologySpread, pod: spread, event: fwk.EventAssignedPodDelete, oldObj: hintPod("web", onNode("n"), labelled("app", "web")), want: fwk.Queue},
		{name: "a pod rejected by PodTopologySpread is not retried when a matching pod of another namespace is deleted",
			plugin: names.PodTopologySpread, pod: spread, event: fwk.EventAssignedPodDelete,
			oldObj: hintPod("web", onNode("n"), labelled("app", "web"), func(p *v1.Pod) { p.Namespace = "other" }), want: fwk.QueueSkip},
		{name: "a pod rejected by PodTopologySpread is not retried when a node without its topology key is added",
			plugin: names.PodTopologySpread, pod: spread, event: fwk.EventNodeAdd, newObj: hintNode("n"), want: fwk.QueueSkip},
		{name: "a pod rejected by VolumeBinding is retried when its claim is added",
			plugin: names.VolumeBinding, pod: hintPod("p", withClaimVolume("data")), event: fwk.ClusterEvent{Resource: fwk.PersistentVolumeClaim, ActionType: fwk.Add},
			newObj: &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "default"}}, want: fwk.Queue},
		{name: "a pod rejected by VolumeBinding is not retried when a claim of another namespace is added",
			plugin: names.VolumeBinding, pod: hintPod("p", withClaimVolume("data")), event: fwk.ClusterEvent{Resource: fwk.PersistentVolumeClaim, ActionType: fwk.Add},
			newObj: &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "other"}}, want: fwk.QueueSkip},
		{name: "a pod rejected by VolumeZone is retried when a WaitForFirstConsumer class is added",
			plugin: names.VolumeZone, pod: hintPod("p"), event: fwk.ClusterEvent{Resource: fwk.StorageClass, ActionType: fwk.Add},
			newObj: &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "late"}, VolumeBindingMode: &waitForConsumer}, want: fwk.Queue},
		{name: "a pod rejected by VolumeZone is not retried when a PersistentVolume's zone labels are rewritten unchanged",
			plugin: names.VolumeZone, pod: hintPod("p"), event: fwk.ClusterEvent{Resource: fwk.PersistentVolume, ActionType: fwk.Update},
			oldObj: &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv", Labels: map[string]string{v1.LabelTopologyZone: "a__b"}}},
			newObj: &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv", Labels: map[string]string{v1.LabelTopologyZone: "b__a", "x": "y"}}}, want: fwk.QueueSkip},
		{name: "a pod rejected by NodeVolumeLimits is retried when a CSINode's limit goes up",
			plugin: names.NodeVolumeLimits, pod: hintPod("p"), event: fwk.ClusterEvent{Resource: fwk.CSINode, ActionType: fwk.Update},
			oldObj: csiNode(2), newObj: csiNode(3), want: fwk.Queue},
		{name: "a pod rejected by NodeVolumeLimits is not retried when a CSINode's limit goes down",
			plugin: names.NodeVolumeLimits, pod: hintPod("p"), event: fwk.ClusterEvent{Resource: fwk.CSINode, ActionType: fwk.Update},
			oldObj: csiNode(3), newObj: csiNode(2), want: fwk.QueueSkip},
		{name: "a pod rejected by DynamicResources is retried when its claim is deallocated",
			plugin: names.DynamicResources, pod: claimed, event: fwk.ClusterEvent{Resource: fwk.ResourceClaim, ActionType: fwk.Update},
			oldObj: resourceClaim("gpu-claim", true), newObj: resourceClaim("gpu-claim", false), objects: []runtime.Object{resourceClaim("gpu-claim", false)}, want: fwk.Queue},
		{name: "a pod rejected by DynamicResources is not retried when another claim's labels change",
			plugin: names.DynamicResources, pod: claimed, event: fwk.ClusterEvent{Resource: fwk.ResourceClaim, ActionType: fwk.Update},
			oldObj: resourceClaim("other", false), newObj: resourceClaim("other", false), objects: []runtime.Object{resourceClaim("gpu-claim", false), resourceClaim("other", false)}, want: fwk.QueueSkip},
		{name: "a pod rejected by DynamicResources is not retried by any claim while one of its claims is missing",
			plugin: names.DynamicResources, pod: claimed, event: fwk.ClusterEvent{Resource: fwk.ResourceClaim, ActionType: fwk.Update},
			oldObj: resourceClaim("other", true), newObj: resourceClaim("other", false), want: fwk.QueueSkip},
		{name: "a gated pod is retried when its own gates are removed",
			plugin: names.SchedulingGates, pod: hintPod("p"), event: fwk.ClusterEvent{Resource: fwk.TargetPod, ActionType: fwk.UpdatePodSchedulingGatesEliminated},
			oldObj: hintPod("p"), newObj: hintPod("p"), want: fwk.Queue},
		{name: "a pod rejected by NodeDeclaredFeatures is not retried when a node's features stay the same",
			plugin: names.NodeDeclaredFeatures, pod: hintPod("p"), event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.UpdateNodeDeclaredFeature},
			oldObj: small, newObj: updated(small, withLabel("x", "y")), want: fwk.QueueSkip},
		{name: "a hint that gets an object of the wrong type retries the pod",
			plugin: names.NodeAffinity, pod: zoned, event: fwk.EventNodeAdd, newObj: hintPod("not-a-node"), want: fwk.Queue},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			listers, err := fwk.NewListers(tc.objects...)
			if err != nil {
				t.Fatal(err)
			}
			got, matched := askHints(defaultPluginEvents(feature.Default(), listers), tc.plugin, tc.event, tc.pod, tc.oldObj, tc.newObj)
			if !matched {
				t.Fatalf("%s registers no event matching %s", tc.plugin, tc.event.Label())
			}
			if got != tc.want {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

// askHints asks the plugin's hints for the registrations matching event,
// as the queue does: Queue if one says so (an error counts as Queue).
func askHints(pe fwk.PluginEvents, plugin string, event fwk.ClusterEvent, pod *v1.Pod, oldObj, newObj any) (hint fwk.QueueingHint, matched bool) {
	hint = fwk.QueueSkip
	for _, eh := range pe[plugin] {
		if !eh.Event.Match(event) {
			continue
		}
		matched = true
		h := fwk.Queue
		if eh.Hint != nil {
			var err error
			if h, err = eh.Hint(pod, oldObj, newObj); err != nil {
				h = fwk.Queue
			}
		}
		if h == fwk.Queue {
			hint = fwk.Queue
		}
	}
	return hint, matched
}

func csiNode(limit int32) *storagev1.CSINode {
	return &storagev1.CSINode{ObjectMeta: metav1.ObjectMeta{Name: "n"}, Spec: storagev1.CSINodeSpec{Drivers: []storagev1.CSINodeDriver{
		{Name: "ebs.csi.aws.com", NodeID: "n", Allocatable: &storagev1.VolumeNodeResources{Count: &limit}},
	}}}
}

func ptrTo[T any](v T) *T { return &v }

// TestQueueUsesHints follows a pod NodeResourcesFit rejected through the
// queue: an unrelated node change leaves it waiting, a node with room
// moves it.
func TestQueueUsesHints(t *testing.T) {
	t.Parallel()
	q, clock := newTestQueue(t)
	mustAdd(t, q, hintPod("cpu-hungry", requesting(v1.ResourceCPU, "3")))
	fail(t, q, names.NodeResourcesFit)
	clock.Step(time.Minute) // past its backoff

	small := hintNode("small")
	for _, e := range NodeSchedulingPropertiesChange(updated(small, withLabel("team", "a")), small) {
		q.MoveAllToActiveOrBackoffQueue(e, small, updated(small, withLabel("team", "a")), nil)
	}
	q.MoveAllToActiveOrBackoffQueue(fwk.EventNodeAdd, nil, hintNode("tiny", withCPU("1")), nil)
	if got := len(q.UnschedulablePods()); got != 1 {
		t.Fatalf("after unrelated events, %d pods wait, want 1", got)
	}
	q.MoveAllToActiveOrBackoffQueue(fwk.EventNodeAdd, nil, hintNode("big", withCPU("8")), nil)
	if got := podNames(q.PodsInActiveQ()); len(got) != 1 {
		t.Fatalf("after a node with room was added, active %v, want the pod", got)
	}
}

// TestHintsReadTheirListers: the hints read the listers their plugins'
// EventsToRegister were given, so a pod asking for a DRA-backed extended
// resource moves when a node without it is added.
func TestHintsReadTheirListers(t *testing.T) {
	t.Parallel()
	class := &resourceapi.DeviceClass{ObjectMeta: metav1.ObjectMeta{Name: "gpu"}, Spec: resourceapi.DeviceClassSpec{ExtendedResourceName: ptrTo("example.com/gpu")}}
	listers, err := fwk.NewListers(class)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		opts  []Option
		stuck int
	}{
		{name: "with the class in the listers the pod moves", opts: []Option{WithPluginEvents(defaultPluginEvents(feature.Default(), listers))}, stuck: 0},
		{name: "without listers the pod waits", stuck: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			q, clock := newTestQueue(t, tc.opts...)
			mustAdd(t, q, hintPod("gpu", requesting("example.com/gpu", "1")))
			pi := fail(t, q, names.NodeResourcesFit)
			clock.Step(time.Minute)
			q.MoveAllToActiveOrBackoffQueue(fwk.EventNodeAdd, nil, hintNode("plain"), nil)
			if got := len(q.UnschedulablePods()); got != tc.stuck {
				t.Errorf("%d pods wait, want %d (pod %s)", got, tc.stuck, pi.Pod.Name)
			}
		})
	}
}
