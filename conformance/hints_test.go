package conformance

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	kfwk "github.com/kubesched/kubesched/fwk"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	schedframework "k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/utils/ptr"

	"github.com/kubesched/kubesched/queue"
)

var numHintScenarios = flag.Int("hint-scenarios", envInt("KUBESCHED_HINT_SCENARIOS", 40),
	"scenarios whose objects TestQueueingHints mutates into events")

// TestQueueingHints checks the tested release's PluginEvents (its
// default plugins' EventsToRegister) against the EventsToRegister of
// upstream's default plugins: the same
// events per plugin, in the same order, with a hint where upstream has
// one; then, for events made from generated scenarios (nodes, pods,
// storage and DRA objects added, deleted, and updated into one another),
// that kubesched's hints and upstream's give the same verdict for the
// scenario's pods, an error counting as Queue on both sides, as the
// queues read it.
func TestQueueingHints(t *testing.T) {
	linkedOnly(t)
	o, err := NewOracle()
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	ctx := context.Background()

	upstream := map[string][]fwk.ClusterEventWithHint{}
	for _, ext := range o.fw.EnqueueExtensions() {
		events, err := ext.EventsToRegister(ctx)
		if err != nil {
			t.Fatalf("%s: EventsToRegister: %v", ext.Name(), err)
		}
		upstream[ext.Name()] = events
	}
	ourEvents := ours.PluginEvents(kfwk.Listers{})
	if got, want := sortedKeys(ourEvents), sortedKeys(upstream); !slices.Equal(got, want) {
		t.Fatalf("plugins with events: kubesched %v, upstream %v", got, want)
	}
	for plugin, events := range upstream {
		if got, want := describeOurs(ourEvents[plugin]), describeUpstream(events); !slices.Equal(got, want) {
			t.Errorf("%s registers\n  %v\nupstream\n  %v", plugin, got, want)
		}
	}
	if t.Failed() {
		return
	}

	// Counts by plugin and by registration.
	stats := map[string]*hintStats{}
	byRegistration := map[string][]*hintStats{}
	for plugin, events := range upstream {
		stats[plugin] = &hintStats{}
		for _, e := range describeUpstream(events) {
			st := &hintStats{}
			stats[plugin+" "+e] = st
			byRegistration[plugin] = append(byRegistration[plugin], st)
		}
	}
	for i := range *numHintScenarios {
		seed := uint64(i + 1)
		s := Generate(seed)
		if err := o.install(ctx, s.Objects); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		listers, err := kfwk.NewListers(schedulingObjects(s.Objects)...)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		ourEvents := ours.PluginEvents(listers)
		events := hintEvents(rand.New(rand.NewPCG(seed, 17)), s)
		for _, target := range hintTargets(s) {
			for _, ev := range events {
				for plugin, registered := range upstream {
					for j, reg := range registered {
						if reg.QueueingHintFn == nil || !ev.asks(ourEvents[plugin][j].Event) {
							continue
						}
						want := upstreamVerdict(reg.QueueingHintFn, target, ev.oldObj, ev.newObj)
						got, err := ourEvents[plugin][j].Hint(target, ev.oldObj, ev.newObj)
						if err != nil {
							got = kfwk.Queue
						}
						st := stats[plugin]
						for _, st := range [...]*hintStats{st, byRegistration[plugin][j]} {
							st.cases++
							if want == kfwk.Queue {
								st.queued++
							}
						}
						if got != want && st.failures < 5 {
							st.failures++
							t.Errorf("seed %d, %s, %s for pod %s: kubesched %s, upstream %s (kubesched's error: %v)\nold: %s\nnew: %s",
								seed, plugin, ev.label(), target.Name, hintName(got), hintName(want), err, brief(ev.oldObj), brief(ev.newObj))
						}
					}
				}
			}
		}
	}
	for _, plugin := range sortedKeys(stats) {
		st := stats[plugin]
		t.Logf("%-22s %6d cases compared, %6d Queue, %6d QueueSkip", plugin, st.cases, st.queued, st.cases-st.queued)
		if strings.HasSuffix(plugin, "hint=true") && (st.queued == 0 || st.queued == st.cases) && !constantHints.Has(plugin) {
			t.Errorf("%s: upstream's hint gave one verdict only in %d cases", plugin, st.cases)
		}
	}
}

// constantHints are the registrations whose upstream hint gives one
// verdict whatever the event: DefaultPreemption's never helps, and the
// TargetPod hints that any such update of the pod itself helps.
var constantHints = sets.New(
	"DefaultPreemption AssignedPod/Delete hint=true",
	"SchedulingGates TargetPod/UpdatePodSchedulingGatesEliminated hint=true",
	"TaintToleration TargetPod/UpdatePodToleration hint=true",
	"InterPodAffinity TargetPod/UpdatePodLabel hint=true",
	"NodeResourcesFit TargetPod/UpdatePodScaleDown hint=true",
)

// TestUpdateEvents checks queue.NodeUpdateEvents and queue.PodUpdateEvents
// for the tested release against upstream's NodeSchedulingPropertiesChange
// and PodSchedulingPropertiesChange: the same events, in the same order,
// for the generated scenarios' nodes and pods updated as in
// TestQueueingHints, each pod update both as the target pod's and as
// another pod's.
func TestUpdateEvents(t *testing.T) {
	linkedOnly(t)
	compared := 0
	for i := range *numHintScenarios {
		seed := uint64(i + 1)
		s := Generate(seed)
		r := rand.New(rand.NewPCG(seed, 17))
		for _, n := range s.Nodes {
			for _, updated := range nodeUpdates(r, n, s.Nodes[r.IntN(len(s.Nodes))]) {
				got := eventLabels(queue.NodeUpdateEvents(tested.Features, updated, n), kfwk.ClusterEvent.Label)
				want := eventLabels(schedframework.NodeSchedulingPropertiesChange(updated, n), fwk.ClusterEvent.Label)
				compared++
				if !slices.Equal(got, want) {
					t.Errorf("seed %d, node %s updated: kubesched %v, upstream %v\nold: %s\nnew: %s", seed, n.Name, got, want, brief(n), brief(updated))
				}
			}
		}
		all := append(slices.Clone(s.Pods), s.Pod)
		for _, p := range all {
			for _, updated := range podUpdates(r, p, all[r.IntN(len(all))]) {
				for _, target := range []bool{true, false} {
					got := eventLabels(queue.PodUpdateEvents(tested.Features, updated, p, target), kfwk.ClusterEvent.Label)
					want := eventLabels(schedframework.PodSchedulingPropertiesChange(updated, p, target), fwk.ClusterEvent.Label)
					compared++
					if !slices.Equal(got, want) {
						t.Errorf("seed %d, pod %s updated (target %v): kubesched %v, upstream %v\nold: %s\nnew: %s", seed, p.Name, target, got, want, brief(p), brief(updated))
					}
				}
			}
		}
	}
	t.Logf("%d updates compared", compared)
}

func eventLabels[E any](events []E, label func(E) string) []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = label(e)
	}
	return out
}

type hintStats struct{ cases, queued, failures int }

// upstreamVerdict calls an upstream hint, reading an error as Queue as
// upstream's queue does.
func upstreamVerdict(fn fwk.QueueingHintFn, pod *v1.Pod, oldObj, newObj any) kfwk.QueueingHint {
	hint, err := fn(klog.Background(), pod, oldObj, newObj)
	if err != nil || hint == fwk.Queue {
		return kfwk.Queue
	}
	return kfwk.QueueSkip
}

func hintName(h kfwk.QueueingHint) string {
	if h == kfwk.Queue {
		return "Queue"
	}
	return "QueueSkip"
}

func brief(obj any) string {
	if obj == nil {
		return "<nil>"
	}
	s := fmt.Sprintf("%+v", obj)
	if len(s) > 1500 {
		s = s[:1500] + "..."
	}
	return s
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// actionNames spells out an action type bit by bit, so that the two
// definitions are compared by name, not by value.
func actionNames[A ~int64](a A, name func(A) string) string {
	var out []string
	for bit := range 63 {
		if b := A(1) << bit; a&b != 0 {
			out = append(out, name(b))
		}
	}
	return strings.Join(out, "|")
}

func describeOurs(events []kfwk.ClusterEventWithHint) []string {
	var out []string
	for _, e := range events {
		out = append(out, fmt.Sprintf("%s/%s hint=%v", e.Event.Resource, actionNames(e.Event.ActionType, kfwk.ActionType.String), e.Hint != nil))
	}
	return out
}

func describeUpstream(events []fwk.ClusterEventWithHint) []string {
	var out []string
	for _, e := range events {
		out = append(out, fmt.Sprintf("%s/%s hint=%v", e.Event.Resource, actionNames(e.Event.ActionType, fwk.ActionType.String), e.QueueingHintFn != nil))
	}
	return out
}

// hintTargets are the pods whose hints are asked: the scenario's
// incoming pod and a few of its bound pods, taken as pending.
func hintTargets(s *Scenario) []*v1.Pod {
	targets := []*v1.Pod{s.Pod}
	for i, p := range s.Pods {
		if i%4 != 0 {
			continue
		}
		pending := p.DeepCopy()
		pending.Spec.NodeName = ""
		targets = append(targets, pending)
	}
	// The incoming pod with a CSI inline volume of each driver.
	var inline *v1.Pod
	for _, obj := range s.Objects {
		if d, ok := obj.(*storagev1.CSIDriver); ok {
			if inline == nil {
				inline = s.Pod.DeepCopy()
				inline.UID += "-inline"
			}
			inline.Spec.Volumes = append(inline.Spec.Volumes, v1.Volume{Name: "inline-" + d.Name, VolumeSource: v1.VolumeSource{CSI: &v1.CSIVolumeSource{Driver: d.Name}}})
		}
	}
	if inline != nil {
		targets = append(targets, inline)
	}
	return targets
}

// hintEvent is a change of an object: an addition (no old object), a
// deletion (no new one) or an update.
type hintEvent struct {
	resource       kfwk.EventResource
	oldObj, newObj any
}

// action is the event's kind: Add, Delete or Update.
func (e hintEvent) action() kfwk.ActionType {
	switch {
	case e.oldObj == nil:
		return kfwk.Add
	case e.newObj == nil:
		return kfwk.Delete
	}
	return kfwk.Update
}

// label names the event for messages.
func (e hintEvent) label() string {
	return string(e.resource) + map[kfwk.ActionType]string{kfwk.Add: "Add", kfwk.Delete: "Delete", kfwk.Update: "Update"}[e.action()]
}

// asks reports whether a plugin registered for reg has its hint asked
// about e. Any update asks every hint registered for some kind of update,
// whatever changed, and a pod event every hint registered for pods,
// whatever the pod's role (AssignedPod, TargetPod, ...): hints see more
// than the queue would show them, and must agree on all of it. (A pod in
// flight does see TargetPod events of other pods in flight.)
func (e hintEvent) asks(reg kfwk.ClusterEvent) bool {
	resource := reg.Resource == e.resource ||
		e.resource == kfwk.Pod && slices.Contains([]kfwk.EventResource{kfwk.AssignedPod, kfwk.UnscheduledPod, kfwk.TargetPod}, reg.Resource)
	return resource && reg.ActionType&e.action() != 0
}

// hintEvents makes events out of s's objects: each object added and
// deleted, updated to the state of another of its kind (keeping its
// identity), and updated in single fields.
func hintEvents(r *rand.Rand, s *Scenario) []hintEvent {
	var out []hintEvent
	add := func(resource kfwk.EventResource, oldObj, newObj any) {
		out = append(out, hintEvent{resource, oldObj, newObj})
	}
	for _, n := range s.Nodes {
		add(kfwk.Node, nil, n)
		add(kfwk.Node, n, nil)
		for _, updated := range nodeUpdates(r, n, s.Nodes[r.IntN(len(s.Nodes))]) {
			add(kfwk.Node, n, updated)
			add(kfwk.Node, updated, n)
		}
	}
	// Pods: added and deleted (bound, nominated or pending), and updated,
	// the incoming pod too.
	all := append(slices.Clone(s.Pods), s.Pod)
	for _, p := range all {
		add(kfwk.Pod, nil, p)
		add(kfwk.Pod, p, nil)
		for _, updated := range podUpdates(r, p, all[r.IntN(len(all))]) {
			add(kfwk.Pod, p, updated)
		}
	}
	byKind := map[string][]runtime.Object{}
	for _, obj := range s.Objects {
		kind := fmt.Sprintf("%T", obj)
		byKind[kind] = append(byKind[kind], obj)
	}
	for _, kind := range sortedKeys(byKind) {
		objs := byKind[kind]
		resource, ok := eventResourceOf(objs[0])
		if !ok {
			continue
		}
		for _, obj := range objs {
			add(resource, nil, obj)
			add(resource, obj, nil)
			for _, changed := range objectUpdates(r, obj, objs[r.IntN(len(objs))]) {
				add(resource, changed, obj)
				add(resource, obj, changed)
			}
		}
	}
	return out
}

func eventResourceOf(obj runtime.Object) (kfwk.EventResource, bool) {
	switch obj.(type) {
	case *v1.PersistentVolumeClaim:
		return kfwk.PersistentVolumeClaim, true
	case *v1.PersistentVolume:
		return kfwk.PersistentVolume, true
	case *storagev1.StorageClass:
		return kfwk.StorageClass, true
	case *storagev1.CSINode:
		return kfwk.CSINode, true
	case *storagev1.CSIDriver:
		return kfwk.CSIDriver, true
	case *storagev1.CSIStorageCapacity:
		return kfwk.CSIStorageCapacity, true
	case *storagev1.VolumeAttachment:
		return kfwk.VolumeAttachment, true
	case *resourceapi.ResourceClaim:
		return kfwk.ResourceClaim, true
	case *resourceapi.ResourceSlice:
		return kfwk.ResourceSlice, true
	case *resourceapi.DeviceClass:
		return kfwk.DeviceClass, true
	}
	return "", false
}

// nodeUpdates returns n changed in one field each (the pod preemption
// policy among them), and n with other's
// labels, taints, allocatable and declared features at once.
func nodeUpdates(r *rand.Rand, n, other *v1.Node) []*v1.Node {
	var out []*v1.Node
	change := func(f func(c *v1.Node)) {
		c := n.DeepCopy()
		f(c)
		out = append(out, c)
	}
	change(func(c *v1.Node) { c.Labels = other.Labels })
	change(func(c *v1.Node) {
		for k := range c.Labels {
			if r.IntN(3) == 0 && k != v1.LabelHostname {
				delete(c.Labels, k)
			}
		}
	})
	change(func(c *v1.Node) { c.Spec.Taints = other.Spec.Taints })
	change(func(c *v1.Node) { c.Spec.Taints = nil })
	change(func(c *v1.Node) { c.Spec.Unschedulable = !c.Spec.Unschedulable })
	change(func(c *v1.Node) { c.Status.Allocatable = other.Status.Allocatable })
	change(func(c *v1.Node) {
		c.Status.Allocatable = c.Status.Allocatable.DeepCopy()
		if c.Status.Allocatable == nil {
			c.Status.Allocatable = v1.ResourceList{}
		}
		for _, name := range []v1.ResourceName{v1.ResourceCPU, v1.ResourceMemory, v1.ResourcePods, v1.ResourceEphemeralStorage, gpu, hugepages} {
			if r.IntN(2) == 0 {
				q := c.Status.Allocatable[name]
				q.Add(*resource.NewQuantity(int64(r.IntN(3)), q.Format))
				if q.Format == "" {
					q = *resource.NewQuantity(q.Value(), resource.DecimalSI)
				}
				c.Status.Allocatable[name] = q
			}
		}
	})
	change(func(c *v1.Node) { c.Status.DeclaredFeatures = other.Status.DeclaredFeatures })
	change(func(c *v1.Node) {
		c.Spec.PodPreemptionPolicy = &v1.NodePodPreemptionPolicy{DisableResizePreemption: []string{"example.com/autoscaler"}}
	})
	change(func(c *v1.Node) {
		c.Status.Conditions = []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionFalse}}
	})
	change(func(c *v1.Node) {
		c.Labels = other.Labels
		c.Spec.Taints = other.Spec.Taints
		c.Status.Allocatable = other.Status.Allocatable
		c.Status.DeclaredFeatures = other.Status.DeclaredFeatures
	})
	return out
}

// podUpdates returns p changed as pods change: labels (another pod's),
// requests scaled down or up, tolerations added, scheduling gates removed,
// generated claims recorded, or another pod's spec under p's identity.
func podUpdates(r *rand.Rand, p, other *v1.Pod) []*v1.Pod {
	var out []*v1.Pod
	change := func(f func(c *v1.Pod)) {
		c := p.DeepCopy()
		f(c)
		out = append(out, c)
	}
	change(func(c *v1.Pod) { c.Labels = other.Labels })
	change(func(c *v1.Pod) {
		for k := range c.Labels {
			if r.IntN(2) == 0 {
				delete(c.Labels, k)
			}
		}
	})
	change(func(c *v1.Pod) {
		for i := range c.Spec.Containers {
			for name, q := range c.Spec.Containers[i].Resources.Requests {
				if r.IntN(2) == 0 {
					c.Spec.Containers[i].Resources.Requests[name] = *resource.NewMilliQuantity(q.MilliValue()/2, q.Format)
				}
			}
		}
	})
	change(func(c *v1.Pod) {
		for i := range c.Spec.Containers {
			for name, q := range c.Spec.Containers[i].Resources.Requests {
				if r.IntN(2) == 0 {
					c.Spec.Containers[i].Resources.Requests[name] = *resource.NewMilliQuantity(q.MilliValue()*2+1000, q.Format)
				}
			}
		}
	})
	change(func(c *v1.Pod) {
		c.Spec.Tolerations = append(c.Spec.Tolerations, other.Spec.Tolerations...)
		if r.IntN(2) == 0 {
			c.Spec.Tolerations = append(c.Spec.Tolerations, v1.Toleration{Key: v1.TaintNodeUnschedulable, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule})
		} else {
			c.Spec.Tolerations = append(c.Spec.Tolerations, v1.Toleration{Key: "dedicated", Operator: v1.TolerationOpExists})
		}
	})
	change(func(c *v1.Pod) {
		c.Spec.SchedulingGates = []v1.PodSchedulingGate{{Name: "example.com/gate"}}
	})
	change(func(c *v1.Pod) {
		for _, pc := range c.Spec.ResourceClaims {
			c.Status.ResourceClaimStatuses = append(c.Status.ResourceClaimStatuses, v1.PodResourceClaimStatus{Name: pc.Name, ResourceClaimName: ptr.To(c.Name + "-" + pc.Name)})
		}
		if len(c.Status.ResourceClaimStatuses) == 0 {
			c.Status.ResourceClaimStatuses = []v1.PodResourceClaimStatus{{Name: "none"}}
		}
	})
	change(func(c *v1.Pod) {
		c.Spec = *other.Spec.DeepCopy()
		c.Spec.NodeName = p.Spec.NodeName
	})
	change(func(c *v1.Pod) {
		c.Spec.Affinity = other.Spec.Affinity
		c.Spec.TopologySpreadConstraints = other.Spec.TopologySpreadConstraints
	})
	return out
}

// objectUpdates returns obj with other's content under obj's identity,
// and obj changed in the fields the hints read.
func objectUpdates(r *rand.Rand, obj, other runtime.Object) []runtime.Object {
	meta := func(dst, src metav1.Object) {
		dst.SetName(src.GetName())
		dst.SetNamespace(src.GetNamespace())
		dst.SetUID(src.GetUID())
	}
	like := other.DeepCopyObject()
	meta(like.(metav1.Object), obj.(metav1.Object))
	out := []runtime.Object{like}
	switch o := obj.(type) {
	case *v1.PersistentVolume:
		c := o.DeepCopy()
		c.Labels = map[string]string{v1.LabelTopologyZone: pick(&generator{r}, zones) + "__" + pick(&generator{r}, zones)}
		out = append(out, c)
		c = o.DeepCopy()
		c.Labels = nil
		out = append(out, c)
	case *storagev1.StorageClass:
		c := o.DeepCopy()
		c.AllowedTopologies = nil
		out = append(out, c)
		c = o.DeepCopy()
		c.VolumeBindingMode = ptr.To(storagev1.VolumeBindingImmediate)
		out = append(out, c)
	case *storagev1.CSINode:
		c := o.DeepCopy()
		for i := range c.Spec.Drivers {
			c.Spec.Drivers[i].Allocatable = &storagev1.VolumeNodeResources{Count: ptr.To(int32(r.IntN(4)))}
		}
		out = append(out, c)
		c = o.DeepCopy()
		c.Annotations = map[string]string{v1.MigratedPluginsAnnotationKey: "kubernetes.io/aws-ebs"}
		out = append(out, c)
	case *storagev1.CSIDriver:
		c := o.DeepCopy()
		c.Spec.StorageCapacity = ptr.To(!ptr.Deref(c.Spec.StorageCapacity, false))
		out = append(out, c)
	case *storagev1.CSIStorageCapacity:
		c := o.DeepCopy()
		c.Capacity = resource.NewQuantity(int64(r.IntN(200))<<30, resource.BinarySI)
		if r.IntN(2) == 0 {
			c.MaximumVolumeSize = nil
		}
		out = append(out, c)
	case *resourceapi.ResourceClaim:
		c := o.DeepCopy()
		c.Status = resourceapi.ResourceClaimStatus{}
		out = append(out, c)
		c = o.DeepCopy()
		c.Status.ReservedFor = append(c.Status.ReservedFor, resourceapi.ResourceClaimConsumerReference{Resource: "pods", Name: "x", UID: types.UID("x")})
		out = append(out, c)
		c = o.DeepCopy()
		c.Labels = map[string]string{"changed": "yes"}
		out = append(out, c)
	case *resourceapi.DeviceClass:
		c := o.DeepCopy()
		c.Spec.ExtendedResourceName = nil
		out = append(out, c)
		c = o.DeepCopy()
		c.Spec.ExtendedResourceName = ptr.To(string(gpu))
		out = append(out, c)
	}
	return out
}
