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
	"github.com/kubesched/kubesched/framework"
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
		event          framework.ClusterEvent
		oldObj, newObj any
		objects        []runtime.Object // the listers'
		want           framework.QueueingHint
	}{
		{name: "a pod rejected for cpu is not retried when an unrelated node label changes",
			plugin: names.NodeResourcesFit, pod: cpuHungry, event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.UpdateNodeAllocatable},
			oldObj: small, newObj: updated(small, withLabel("team", "a"), withAllocatable(v1.ResourceMemory, "8Gi")), want: framework.QueueSkip},
		{name: "a pod rejected for cpu is retried when a node's allocatable grows enough",
			plugin: names.NodeResourcesFit, pod: cpuHungry, event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.UpdateNodeAllocatable},
			oldObj: small, newObj: updated(small, withCPU("4")), want: framework.Queue},
		{name: "a pod rejected for cpu is not retried when a node grows too little",
			plugin: names.NodeResourcesFit, pod: cpuHungry, event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.UpdateNodeAllocatable},
			oldObj: small, newObj: updated(small, withCPU("2500m")), want: framework.QueueSkip},
		{name: "a pod asking for cpu only is not retried when a node it already fitted gains memory",
			plugin: names.NodeResourcesFit, pod: hintPod("modest", requesting(v1.ResourceCPU, "1")), event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.UpdateNodeAllocatable},
			oldObj: small, newObj: updated(small, withAllocatable(v1.ResourceMemory, "8Gi")), want: framework.QueueSkip},
		{name: "a pod is retried when a node it fits gains pod slots",
			plugin: names.NodeResourcesFit, pod: hintPod("modest", requesting(v1.ResourceCPU, "1")), event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.UpdateNodeAllocatable},
			oldObj: small, newObj: updated(small, withAllocatable(v1.ResourcePods, "111")), want: framework.Queue},
		{name: "a pod rejected for cpu is retried when a node with room is added",
			plugin: names.NodeResourcesFit, pod: cpuHungry, event: framework.EventNodeAdd, newObj: hintNode("big", withCPU("8")), want: framework.Queue},
		{name: "a pod rejected for cpu is not retried when a node without room is added",
			plugin: names.NodeResourcesFit, pod: cpuHungry, event: framework.EventNodeAdd, newObj: hintNode("other"), want: framework.QueueSkip},
		{name: "a pod rejected for cpu is retried when a bound pod is deleted",
			plugin: names.NodeResourcesFit, pod: cpuHungry, event: framework.EventAssignedPodDelete, oldObj: hintPod("bound", onNode("small")), want: framework.Queue},
		{name: "a pod rejected for cpu is not retried when a pending pod that held no place is deleted",
			plugin: names.NodeResourcesFit, pod: cpuHungry, event: framework.EventAssignedPodDelete, oldObj: hintPod("pending"), want: framework.QueueSkip},
		{name: "a pod rejected for cpu is retried when a bound pod gives up cpu",
			plugin: names.NodeResourcesFit, pod: cpuHungry, event: framework.ClusterEvent{Resource: framework.AssignedPod, ActionType: framework.UpdatePodScaleDown},
			oldObj: hintPod("bound", onNode("small"), requesting(v1.ResourceCPU, "1")), newObj: hintPod("bound", onNode("small"), requesting(v1.ResourceCPU, "500m")), want: framework.Queue},
		{name: "a pod rejected for cpu is not retried when a bound pod gives up memory only",
			plugin: names.NodeResourcesFit, pod: cpuHungry, event: framework.ClusterEvent{Resource: framework.AssignedPod, ActionType: framework.UpdatePodScaleDown},
			oldObj: hintPod("bound", onNode("small"), requesting(v1.ResourceMemory, "1Gi")), newObj: hintPod("bound", onNode("small"), requesting(v1.ResourceMemory, "512Mi")), want: framework.QueueSkip},
		{name: "a pod asking for an extended resource is retried when a node without it is added once a DeviceClass provides it",
			plugin: names.NodeResourcesFit, pod: gpuPod, event: framework.EventNodeAdd, newObj: hintNode("plain"), objects: []runtime.Object{gpuClass}, want: framework.Queue},
		{name: "a pod asking for an extended resource is not retried when a node without it is added and no DeviceClass provides it",
			plugin: names.NodeResourcesFit, pod: gpuPod, event: framework.EventNodeAdd, newObj: hintNode("plain"), want: framework.QueueSkip},
		{name: "a pod asking for an extended resource is retried when a DeviceClass providing it is added",
			plugin: names.NodeResourcesFit, pod: gpuPod, event: framework.ClusterEvent{Resource: framework.DeviceClass, ActionType: framework.Add}, newObj: gpuClass, want: framework.Queue},
		{name: "a pod rejected by NodeAffinity is retried when a node gains the label it needs",
			plugin: names.NodeAffinity, pod: zoned, event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.UpdateNodeLabel},
			oldObj: small, newObj: updated(small, withLabel(v1.LabelTopologyZone, "a")), want: framework.Queue},
		{name: "a pod rejected by NodeAffinity is not retried when a node gains another label",
			plugin: names.NodeAffinity, pod: zoned, event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.UpdateNodeLabel},
			oldObj: small, newObj: updated(small, withLabel(v1.LabelTopologyZone, "b")), want: framework.QueueSkip},
		{name: "a pod rejected by NodeAffinity is not retried when a node that already matched changes another label",
			plugin: names.NodeAffinity, pod: zoned, event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.UpdateNodeLabel},
			oldObj: hintNode("a", withLabel(v1.LabelTopologyZone, "a")), newObj: hintNode("a", withLabel(v1.LabelTopologyZone, "a"), withLabel("x", "y")), want: framework.QueueSkip},
		{name: "a pod rejected by TaintToleration is retried when the taint is removed",
			plugin: names.TaintToleration, pod: hintPod("p"), event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.UpdateNodeTaint},
			oldObj: hintNode("t", withTaint("dedicated")), newObj: hintNode("t"), want: framework.Queue},
		{name: "a pod rejected by TaintToleration is not retried when another untolerated taint remains",
			plugin: names.TaintToleration, pod: hintPod("p"), event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.UpdateNodeTaint},
			oldObj: hintNode("t", withTaint("dedicated"), withTaint("gpu")), newObj: hintNode("t", withTaint("gpu")), want: framework.QueueSkip},
		{name: "a pod rejected by TaintToleration is retried when it gains a toleration itself",
			plugin: names.TaintToleration, pod: hintPod("p"), event: framework.ClusterEvent{Resource: framework.TargetPod, ActionType: framework.UpdatePodToleration},
			oldObj: hintPod("p"), newObj: hintPod("p", tolerating("dedicated")), want: framework.Queue},
		{name: "a pod rejected by NodeUnschedulable is retried when the node is uncordoned",
			plugin: names.NodeUnschedulable, pod: hintPod("p"), event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.UpdateNodeTaint},
			oldObj: hintNode("c", cordoned), newObj: hintNode("c"), want: framework.Queue},
		{name: "a pod rejected by NodeUnschedulable is not retried when a cordoned node is added",
			plugin: names.NodeUnschedulable, pod: hintPod("p"), event: framework.EventNodeAdd, newObj: hintNode("c", cordoned), want: framework.QueueSkip},
		{name: "a pod rejected by NodeUnschedulable is not retried when it gains an unrelated toleration",
			plugin: names.NodeUnschedulable, pod: hintPod("p"), event: framework.ClusterEvent{Resource: framework.TargetPod, ActionType: framework.UpdatePodToleration},
			oldObj: hintPod("p"), newObj: hintPod("p", tolerating("dedicated")), want: framework.QueueSkip},
		{name: "a pod rejected by NodePorts is retried when a bound pod holding its port is deleted",
			plugin: names.NodePorts, pod: hintPod("p", hostPort(80)), event: framework.EventAssignedPodDelete, oldObj: hintPod("web", onNode("n"), hostPort(80)), want: framework.Queue},
		{name: "a pod rejected by NodePorts is not retried when a bound pod holding another port is deleted",
			plugin: names.NodePorts, pod: hintPod("p", hostPort(80)), event: framework.EventAssignedPodDelete, oldObj: hintPod("web", onNode("n"), hostPort(443)), want: framework.QueueSkip},
		{name: "a pod rejected by InterPodAffinity is retried when a pod it wants is bound",
			plugin: names.InterPodAffinity, pod: affine, event: framework.EventAssignedPodAdd, newObj: hintPod("db", onNode("n"), labelled("app", "db")), want: framework.Queue},
		{name: "a pod rejected by InterPodAffinity is not retried when an unrelated pod is bound",
			plugin: names.InterPodAffinity, pod: affine, event: framework.EventAssignedPodAdd, newObj: hintPod("web", onNode("n")), want: framework.QueueSkip},
		{name: "a pod avoiding others is retried when a node is added",
			plugin: names.InterPodAffinity, pod: hintPod("p", avoiding(v1.LabelHostname, map[string]string{"app": "db"})), event: framework.EventNodeAdd, newObj: hintNode("n"), want: framework.Queue},
		{name: "a pod rejected by InterPodAffinity is not retried when a node without the topology key is added",
			plugin: names.InterPodAffinity, pod: affine, event: framework.EventNodeAdd, newObj: hintNode("n"), want: framework.QueueSkip},
		{name: "a pod rejected by PodTopologySpread is retried when a matching pod of its namespace is deleted",
			plugin: names.PodTopologySpread, pod: spread, event: framework.EventAssignedPodDelete, oldObj: hintPod("web", onNode("n"), labelled("app", "web")), want: framework.Queue},
		{name: "a pod rejected by PodTopologySpread is not retried when a matching pod of another namespace is deleted",
			plugin: names.PodTopologySpread, pod: spread, event: framework.EventAssignedPodDelete,
			oldObj: hintPod("web", onNode("n"), labelled("app", "web"), func(p *v1.Pod) { p.Namespace = "other" }), want: framework.QueueSkip},
		{name: "a pod rejected by PodTopologySpread is not retried when a node without its topology key is added",
			plugin: names.PodTopologySpread, pod: spread, event: framework.EventNodeAdd, newObj: hintNode("n"), want: framework.QueueSkip},
		{name: "a pod rejected by VolumeBinding is retried when its claim is added",
			plugin: names.VolumeBinding, pod: hintPod("p", withClaimVolume("data")), event: framework.ClusterEvent{Resource: framework.PersistentVolumeClaim, ActionType: framework.Add},
			newObj: &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "default"}}, want: framework.Queue},
		{name: "a pod rejected by VolumeBinding is not retried when a claim of another namespace is added",
			plugin: names.VolumeBinding, pod: hintPod("p", withClaimVolume("data")), event: framework.ClusterEvent{Resource: framework.PersistentVolumeClaim, ActionType: framework.Add},
			newObj: &v1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "other"}}, want: framework.QueueSkip},
		{name: "a pod rejected by VolumeZone is retried when a WaitForFirstConsumer class is added",
			plugin: names.VolumeZone, pod: hintPod("p"), event: framework.ClusterEvent{Resource: framework.StorageClass, ActionType: framework.Add},
			newObj: &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "late"}, VolumeBindingMode: &waitForConsumer}, want: framework.Queue},
		{name: "a pod rejected by VolumeZone is not retried when a PersistentVolume's zone labels are rewritten unchanged",
			plugin: names.VolumeZone, pod: hintPod("p"), event: framework.ClusterEvent{Resource: framework.PersistentVolume, ActionType: framework.Update},
			oldObj: &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv", Labels: map[string]string{v1.LabelTopologyZone: "a__b"}}},
			newObj: &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv", Labels: map[string]string{v1.LabelTopologyZone: "b__a", "x": "y"}}}, want: framework.QueueSkip},
		{name: "a pod rejected by NodeVolumeLimits is retried when a CSINode's limit goes up",
			plugin: names.NodeVolumeLimits, pod: hintPod("p"), event: framework.ClusterEvent{Resource: framework.CSINode, ActionType: framework.Update},
			oldObj: csiNode(2), newObj: csiNode(3), want: framework.Queue},
		{name: "a pod rejected by NodeVolumeLimits is not retried when a CSINode's limit goes down",
			plugin: names.NodeVolumeLimits, pod: hintPod("p"), event: framework.ClusterEvent{Resource: framework.CSINode, ActionType: framework.Update},
			oldObj: csiNode(3), newObj: csiNode(2), want: framework.QueueSkip},
		{name: "a pod rejected by DynamicResources is retried when its claim is deallocated",
			plugin: names.DynamicResources, pod: claimed, event: framework.ClusterEvent{Resource: framework.ResourceClaim, ActionType: framework.Update},
			oldObj: resourceClaim("gpu-claim", true), newObj: resourceClaim("gpu-claim", false), objects: []runtime.Object{resourceClaim("gpu-claim", false)}, want: framework.Queue},
		{name: "a pod rejected by DynamicResources is not retried when another claim's labels change",
			plugin: names.DynamicResources, pod: claimed, event: framework.ClusterEvent{Resource: framework.ResourceClaim, ActionType: framework.Update},
			oldObj: resourceClaim("other", false), newObj: resourceClaim("other", false), objects: []runtime.Object{resourceClaim("gpu-claim", false), resourceClaim("other", false)}, want: framework.QueueSkip},
		{name: "a pod rejected by DynamicResources is not retried by any claim while one of its claims is missing",
			plugin: names.DynamicResources, pod: claimed, event: framework.ClusterEvent{Resource: framework.ResourceClaim, ActionType: framework.Update},
			oldObj: resourceClaim("other", true), newObj: resourceClaim("other", false), want: framework.QueueSkip},
		{name: "a gated pod is retried when its own gates are removed",
			plugin: names.SchedulingGates, pod: hintPod("p"), event: framework.ClusterEvent{Resource: framework.TargetPod, ActionType: framework.UpdatePodSchedulingGatesEliminated},
			oldObj: hintPod("p"), newObj: hintPod("p"), want: framework.Queue},
		{name: "a pod rejected by NodeDeclaredFeatures is not retried when a node's features stay the same",
			plugin: names.NodeDeclaredFeatures, pod: hintPod("p"), event: framework.ClusterEvent{Resource: framework.Node, ActionType: framework.UpdateNodeDeclaredFeature},
			oldObj: small, newObj: updated(small, withLabel("x", "y")), want: framework.QueueSkip},
		{name: "a hint that gets an object of the wrong type retries the pod",
			plugin: names.NodeAffinity, pod: zoned, event: framework.EventNodeAdd, newObj: hintPod("not-a-node"), want: framework.Queue},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			listers, err := framework.NewListers(tc.objects...)
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
func askHints(pe framework.PluginEvents, plugin string, event framework.ClusterEvent, pod *v1.Pod, oldObj, newObj any) (hint framework.QueueingHint, matched bool) {
	hint = framework.QueueSkip
	for _, eh := range pe[plugin] {
		if !eh.Event.Match(event) {
			continue
		}
		matched = true
		h := framework.Queue
		if eh.Hint != nil {
			var err error
			if h, err = eh.Hint(pod, oldObj, newObj); err != nil {
				h = framework.Queue
			}
		}
		if h == framework.Queue {
			hint = framework.Queue
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
	q.MoveAllToActiveOrBackoffQueue(framework.EventNodeAdd, nil, hintNode("tiny", withCPU("1")), nil)
	if got := len(q.UnschedulablePods()); got != 1 {
		t.Fatalf("after unrelated events, %d pods wait, want 1", got)
	}
	q.MoveAllToActiveOrBackoffQueue(framework.EventNodeAdd, nil, hintNode("big", withCPU("8")), nil)
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
	listers, err := framework.NewListers(class)
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
			q.MoveAllToActiveOrBackoffQueue(framework.EventNodeAdd, nil, hintNode("plain"), nil)
			if got := len(q.UnschedulablePods()); got != tc.stuck {
				t.Errorf("%d pods wait, want %d (pod %s)", got, tc.stuck, pi.Pod.Name)
			}
		})
	}
}
