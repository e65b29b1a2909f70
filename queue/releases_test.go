package queue

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/names"
)

// What the queue does differently for the supported releases: the tests
// here name the release they exercise.

// describeRegistrations spells registrations as "Resource/Action|Action",
// with " hint" when there is one; "Update" stands for every update kind.
func describeRegistrations(events []fwk.ClusterEventWithHint) []string {
	var out []string
	for _, e := range events {
		var actions []string
		a := e.Event.ActionType
		for bit := fwk.ActionType(1); bit&fwk.All != 0; bit <<= 1 {
			switch {
			case a&bit == 0:
			case a&fwk.Update == fwk.Update && bit&fwk.Update != 0:
				if bit == fwk.UpdateNodeAllocatable {
					actions = append(actions, "Update")
				}
			default:
				actions = append(actions, bit.String())
			}
		}
		s := fmt.Sprintf("%s/%s", e.Event.Resource, strings.Join(actions, "|"))
		if e.Hint != nil {
			s += " hint"
		}
		out = append(out, s)
	}
	return out
}

// TestPluginEventsForEachRelease lists each release's registrations, as
// that release's EventsToRegister of the default plugins do (the
// conformance module checks the newest release's against upstream's).
func TestPluginEventsForEachRelease(t *testing.T) {
	t.Parallel()
	same := map[string][]string{
		names.NodeName:     {"Node/Add"},
		names.NodeAffinity: {"Node/Add|UpdateNodeLabel hint"},
		names.VolumeBinding: {
			"storage.k8s.io/StorageClass/Add|Update hint", "PersistentVolumeClaim/Add|Update hint", "PersistentVolume/Add|Update",
			"Node/Add|UpdateNodeLabel", "storage.k8s.io/CSINode/Add|Update hint", "storage.k8s.io/CSIDriver/Update hint",
			"storage.k8s.io/CSIStorageCapacity/Add|Update hint",
		},
		names.VolumeZone: {
			"storage.k8s.io/StorageClass/Add hint", "Node/Add|UpdateNodeLabel", "PersistentVolumeClaim/Add|Update hint",
			"PersistentVolume/Add|Update hint",
		},
	}
	for _, tc := range []struct {
		name    string
		release string
		want    map[string][]string // besides same
	}{
		{name: "v1.37 registers pod events by role", release: "1.37", want: map[string][]string{
			names.SchedulingGates:   {"TargetPod/UpdatePodSchedulingGatesEliminated hint"},
			names.NodeUnschedulable: {"Node/Add|UpdateNodeTaint hint", "TargetPod/UpdatePodToleration hint"},
			names.TaintToleration:   {"Node/Add|UpdateNodeTaint hint", "TargetPod/UpdatePodToleration hint"},
			names.NodePorts:         {"AssignedPod/Delete hint", "Node/Add"},
			names.NodeResourcesFit: {
				"AssignedPod/Delete hint", "Node/Add|UpdateNodeAllocatable hint", "resource.k8s.io/DeviceClass/Add|Update hint",
				"AssignedPod/UpdatePodScaleDown hint", "TargetPod/UpdatePodScaleDown hint",
			},
			names.VolumeRestrictions: {"AssignedPod/Delete hint", "Node/Add", "PersistentVolumeClaim/Add hint"},
			names.NodeVolumeLimits: {
				"storage.k8s.io/CSINode/Add", "storage.k8s.io/CSINode/Update hint", "AssignedPod/Delete hint",
				"PersistentVolumeClaim/Add hint", "storage.k8s.io/VolumeAttachment/Delete hint",
			},
			names.PodTopologySpread: {
				"AssignedPod/Add|Delete|UpdatePodLabel hint", "TargetPod/UpdatePodLabel|UpdatePodToleration hint",
				"Node/Add|Delete|UpdateNodeLabel|UpdateNodeTaint hint",
			},
			names.InterPodAffinity: {
				"AssignedPod/Add|Delete|UpdatePodLabel hint", "TargetPod/UpdatePodLabel hint", "Node/Add|UpdateNodeLabel hint",
			},
			names.DynamicResources: {
				"Node/Add|UpdateNodeAllocatable|UpdateNodeLabel", "resource.k8s.io/ResourceClaim/Add|Delete|Update hint",
				"TargetPod/UpdatePodGeneratedResourceClaim hint", "resource.k8s.io/DeviceClass/Add|Update",
				"resource.k8s.io/ResourceSlice/Add|Update",
			},
			names.NodeDeclaredFeatures: {"Node/Add|UpdateNodeDeclaredFeature hint", "TargetPod/Update hint"},
			names.DefaultPreemption:    {"AssignedPod/Delete hint"},
		}},
		{name: "v1.36 registers Pod events for every role", release: "1.36", want: map[string][]string{
			names.SchedulingGates:   {"Pod/UpdatePodSchedulingGatesEliminated hint"},
			names.NodeUnschedulable: {"Node/Add|UpdateNodeTaint hint", "Pod/UpdatePodToleration hint"},
			names.TaintToleration:   {"Node/Add|UpdateNodeTaint hint", "Pod/UpdatePodToleration hint"},
			names.NodePorts:         {"Pod/Delete hint", "Node/Add"},
			names.NodeResourcesFit: {
				"Pod/Delete|UpdatePodScaleDown hint", "Node/Add|UpdateNodeAllocatable hint", "resource.k8s.io/DeviceClass/Add|Update hint",
			},
			names.VolumeRestrictions: {"Pod/Delete hint", "Node/Add", "PersistentVolumeClaim/Add hint"},
			names.NodeVolumeLimits: {
				"storage.k8s.io/CSINode/Add", "storage.k8s.io/CSINode/Update hint", "Pod/Delete hint",
				"PersistentVolumeClaim/Add hint", "storage.k8s.io/VolumeAttachment/Delete hint",
			},
			names.PodTopologySpread: {
				"Pod/Add|Delete|UpdatePodLabel|UpdatePodToleration hint", "Node/Add|Delete|UpdateNodeLabel|UpdateNodeTaint hint",
			},
			names.InterPodAffinity: {"Pod/Add|Delete|UpdatePodLabel hint", "Node/Add|UpdateNodeLabel hint"},
			names.DynamicResources: {
				"Node/Add|UpdateNodeAllocatable|UpdateNodeLabel", "resource.k8s.io/ResourceClaim/Add|Update hint",
				"Pod/UpdatePodGeneratedResourceClaim hint", "resource.k8s.io/DeviceClass/Add|Update",
				"resource.k8s.io/ResourceSlice/Add|Update",
			},
			names.NodeDeclaredFeatures: {"Node/Add|UpdateNodeDeclaredFeature hint", "Pod/Update hint"},
			names.DefaultPreemption:    {"Pod/Delete hint"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := defaultPluginEvents(releaseFeatures(t, tc.release), fwk.Listers{})
			want := map[string][]string{}
			for _, m := range []map[string][]string{same, tc.want} {
				for plugin, events := range m {
					want[plugin] = events
				}
			}
			if g, w := sets.List(sets.KeySet(got)), sets.List(sets.KeySet(want)); !slices.Equal(g, w) {
				t.Fatalf("plugins %v, want %v", g, w)
			}
			for plugin, events := range want {
				if g := describeRegistrations(got[plugin]); !slices.Equal(g, events) {
					t.Errorf("%s registers\n  %v\nwant\n  %v", plugin, g, events)
				}
			}
		})
	}
}

// TestHintsByRelease asks a release's registrations and hints about one
// event, as its queue would for a pod the plugin rejected. A pod update
// without an event is classified by the release, as the queue's Update
// (target) or another pod's informer update does.
func TestHintsByRelease(t *testing.T) {
	t.Parallel()
	twoAntiTerms := func(p *v1.Pod) {
		p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{
			{TopologyKey: v1.LabelHostname, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}},
			{TopologyKey: v1.LabelTopologyZone, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "cache"}}},
		}}}
	}
	honouringTaints := func(p *v1.Pod) {
		honor := v1.NodeInclusionPolicyHonor
		p.Spec.TopologySpreadConstraints[0].NodeTaintsPolicy = &honor
	}
	spread := hintPod("spread", spreading(v1.LabelTopologyZone, map[string]string{"app": "web"}), honouringTaints)
	nominated := func(p *v1.Pod) { p.Status.NominatedNodeName = "n" }
	for _, tc := range []struct {
		name           string
		plugin         string
		pod            *v1.Pod
		event          fwk.ClusterEvent // zero: the release's events of a pod update
		target         bool
		oldObj, newObj any
		want136        fwk.QueueingHint
		want137        fwk.QueueingHint
	}{
		{name: "a bound pod deleted matching one of two anti-affinity terms helps from v1.37",
			plugin: names.InterPodAffinity, pod: hintPod("p", twoAntiTerms), event: fwk.EventAssignedPodDelete,
			oldObj: hintPod("db", onNode("n"), labelled("app", "db")), want136: fwk.QueueSkip, want137: fwk.Queue},
		{name: "a bound pod deleted matching both anti-affinity terms helps in both releases",
			plugin: names.InterPodAffinity, pod: hintPod("p", twoAntiTerms), event: fwk.EventAssignedPodDelete,
			oldObj: hintPod("db", onNode("n"), labelled("app", "db"), labelled("tier", "cache")), want136: fwk.Queue, want137: fwk.Queue},
		{name: "a bound pod relabelled away from one of two anti-affinity terms helps from v1.37",
			plugin: names.InterPodAffinity, pod: hintPod("p", twoAntiTerms), event: fwk.ClusterEvent{Resource: fwk.AssignedPod, ActionType: fwk.UpdatePodLabel},
			oldObj: hintPod("x", onNode("n"), labelled("app", "db")), newObj: hintPod("x", onNode("n")), want136: fwk.QueueSkip, want137: fwk.Queue},
		{name: "the pod's own relabelling helps it in both releases",
			plugin: names.InterPodAffinity, pod: hintPod("p", twoAntiTerms), target: true,
			oldObj: hintPod("p", twoAntiTerms), newObj: hintPod("p", twoAntiTerms, labelled("app", "other")), want136: fwk.Queue, want137: fwk.Queue},
		{name: "the nominated pod's own relabelling seen as a bound pod's helps only in v1.36",
			plugin: names.InterPodAffinity, pod: hintPod("p", twoAntiTerms, nominated), event: fwk.ClusterEvent{Resource: fwk.AssignedPod, ActionType: fwk.UpdatePodLabel},
			oldObj: hintPod("p", twoAntiTerms, nominated), newObj: hintPod("p", twoAntiTerms, nominated, labelled("x", "y")), want136: fwk.Queue, want137: fwk.QueueSkip},
		{name: "another pending pod's relabelling helps neither release",
			plugin: names.InterPodAffinity, pod: hintPod("p", twoAntiTerms),
			oldObj: hintPod("q"), newObj: hintPod("q", labelled("app", "db")), want136: fwk.QueueSkip, want137: fwk.QueueSkip},
		{name: "another pod's new toleration, seen as the target's in flight, helps a pod TaintToleration rejected from v1.37",
			plugin: names.TaintToleration, pod: hintPod("p"), event: fwk.ClusterEvent{Resource: fwk.TargetPod, ActionType: fwk.UpdatePodToleration},
			oldObj: hintPod("q"), newObj: hintPod("q", tolerating("dedicated")), want136: fwk.QueueSkip, want137: fwk.Queue},
		{name: "the pod's own new toleration helps it in both releases",
			plugin: names.TaintToleration, pod: hintPod("p"), target: true,
			oldObj: hintPod("p"), newObj: hintPod("p", tolerating("dedicated")), want136: fwk.Queue, want137: fwk.Queue},
		{name: "another pending pod's new toleration helps neither release",
			plugin: names.TaintToleration, pod: hintPod("p"),
			oldObj: hintPod("q"), newObj: hintPod("q", tolerating("dedicated")), want136: fwk.QueueSkip, want137: fwk.QueueSkip},
		{name: "the pod scaling itself down helps it in both releases",
			plugin: names.NodeResourcesFit, pod: hintPod("p", requesting(v1.ResourceCPU, "1")), target: true,
			oldObj: hintPod("p", requesting(v1.ResourceCPU, "2")), newObj: hintPod("p", requesting(v1.ResourceCPU, "1")), want136: fwk.Queue, want137: fwk.Queue},
		{name: "a bound pod scaling down cpu the pod wants helps in both releases",
			plugin: names.NodeResourcesFit, pod: hintPod("p", requesting(v1.ResourceCPU, "1")),
			oldObj: hintPod("b", onNode("n"), requesting(v1.ResourceCPU, "2")), newObj: hintPod("b", onNode("n"), requesting(v1.ResourceCPU, "1")),
			want136: fwk.Queue, want137: fwk.Queue},
		{name: "the pod's own new toleration helps spreading that honours taints in both releases",
			plugin: names.PodTopologySpread, pod: spread, target: true,
			oldObj: spread, newObj: updatedPod(spread, tolerating("dedicated")), want136: fwk.Queue, want137: fwk.Queue},
		{name: "a bound pod's new toleration does not help spreading",
			plugin: names.PodTopologySpread, pod: spread,
			oldObj: hintPod("web", onNode("n"), labelled("app", "web")), newObj: hintPod("web", onNode("n"), labelled("app", "web"), tolerating("dedicated")),
			want136: fwk.QueueSkip, want137: fwk.QueueSkip},
		{name: "an allocated claim deleted helps a pod DynamicResources rejected from v1.37",
			plugin: names.DynamicResources, pod: hintPod("p", withResourceClaim("gpu-claim")), event: fwk.ClusterEvent{Resource: fwk.ResourceClaim, ActionType: fwk.Delete},
			oldObj: resourceClaim("other", true), want136: fwk.QueueSkip, want137: fwk.Queue},
		{name: "an unallocated claim deleted helps neither release",
			plugin: names.DynamicResources, pod: hintPod("p", withResourceClaim("gpu-claim")), event: fwk.ClusterEvent{Resource: fwk.ResourceClaim, ActionType: fwk.Delete},
			oldObj: resourceClaim("other", false), want136: fwk.QueueSkip, want137: fwk.QueueSkip},
		{name: "another pod's gates removed, seen as the target's, releases a gated pod from v1.37",
			plugin: names.SchedulingGates, pod: hintPod("p"), event: fwk.ClusterEvent{Resource: fwk.TargetPod, ActionType: fwk.UpdatePodSchedulingGatesEliminated},
			oldObj: hintPod("q"), newObj: hintPod("q"), want136: fwk.QueueSkip, want137: fwk.Queue},
	} {
		for _, release := range []struct {
			version string
			want    fwk.QueueingHint
		}{{"1.36", tc.want136}, {"1.37", tc.want137}} {
			t.Run(release.version+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				fs := releaseFeatures(t, release.version)
				events := []fwk.ClusterEvent{tc.event}
				if tc.event == (fwk.ClusterEvent{}) {
					events = PodUpdateEvents(fs, tc.newObj.(*v1.Pod), tc.oldObj.(*v1.Pod), tc.target)
				}
				got := fwk.QueueSkip
				for _, e := range events {
					// No registration matching is QueueSkip: the pod stays.
					if hint, _ := askHints(defaultPluginEvents(fs, fwk.Listers{}), tc.plugin, e, tc.pod, tc.oldObj, tc.newObj); hint == fwk.Queue {
						got = fwk.Queue
					}
				}
				if got != release.want {
					t.Errorf("events %v: got %v, want %v", labels(events), got, release.want)
				}
			})
		}
	}
}

// TestQueueByRelease follows pods through a queue of each release where
// the releases part ways.
func TestQueueByRelease(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		// run drives q and returns where pod "p" ends: "active",
		// "backoff" or "unschedulable".
		run              func(t *testing.T, q *PriorityQueue, clock *testingclock.FakeClock) string
		want136, want137 string
	}{
		{name: "a node losing a taint retries a pod NodeName rejected only in v1.36",
			run: func(t *testing.T, q *PriorityQueue, clock *testingclock.FakeClock) string {
				mustAdd(t, q, pendingPod("p", 0))
				fail(t, q, names.NodeName)
				clock.Step(time.Minute)
				tainted := hintNode("n", withTaint("dedicated"))
				for _, e := range NodeUpdateEvents(q.features, hintNode("n"), tainted) {
					q.MoveAllToActiveOrBackoffQueue(e, tainted, hintNode("n"), nil)
				}
				return where(q, "p")
			},
			want136: "active", want137: "unschedulable"},
		{name: "another in-flight pod gaining a toleration retries a pod TaintToleration rejected only from v1.37",
			run: func(t *testing.T, q *PriorityQueue, clock *testingclock.FakeClock) string {
				mustAdd(t, q, pendingPod("p", 1), pendingPod("q", 0))
				p, other := pop(t, q), pop(t, q)
				tolerant := other.Pod.DeepCopy()
				tolerant.Spec.Tolerations = []v1.Toleration{{Key: "dedicated", Operator: v1.TolerationOpExists}}
				if err := q.Update(other.Pod, tolerant); err != nil {
					t.Fatal(err)
				}
				p.UnschedulablePlugins = sets.New(names.TaintToleration)
				if err := q.AddUnschedulableIfNotPresent(p); err != nil {
					t.Fatal(err)
				}
				return where(q, "p")
			},
			want136: "unschedulable", want137: "backoff"},
		{name: "the pod's own relabelling retries a pod InterPodAffinity rejected in both releases",
			run: func(t *testing.T, q *PriorityQueue, clock *testingclock.FakeClock) string {
				mustAdd(t, q, pendingPod("p", 0))
				pi := fail(t, q, names.InterPodAffinity)
				clock.Step(time.Minute)
				relabelled := pi.Pod.DeepCopy()
				relabelled.Labels["app"] = "other"
				if err := q.Update(pi.Pod, relabelled); err != nil {
					t.Fatal(err)
				}
				return where(q, "p")
			},
			want136: "active", want137: "active"},
		{name: "a bound pod scaling up leaves a pod NodeDeclaredFeatures rejected waiting in both releases",
			run: func(t *testing.T, q *PriorityQueue, clock *testingclock.FakeClock) string {
				mustAdd(t, q, pendingPod("p", 0))
				fail(t, q, names.NodeDeclaredFeatures)
				clock.Step(time.Minute)
				bound := hintPod("b", onNode("n"), requesting(v1.ResourceCPU, "1"))
				grown := hintPod("b", onNode("n"), requesting(v1.ResourceCPU, "2"))
				for _, e := range PodUpdateEvents(q.features, grown, bound, false) {
					q.MoveAllToActiveOrBackoffQueue(e, bound, grown, nil)
				}
				return where(q, "p")
			},
			want136: "unschedulable", want137: "unschedulable"},
	} {
		for _, release := range []struct{ version, want string }{{"1.36", tc.want136}, {"1.37", tc.want137}} {
			t.Run(release.version+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				q, clock := newTestQueue(t, defaultOptions(releaseFeatures(t, release.version), fwk.Listers{})...)
				if got := tc.run(t, q, clock); got != release.want {
					t.Errorf("pod is in %s, want %s", got, release.want)
				}
			})
		}
	}
}

func TestGatedPodNominationByRelease(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, release, want string
	}{
		{name: "v1.37 records a gated pod's nomination when it is added", release: "1.37", want: "n"},
		{name: "v1.36 records it only once the pod enters the active queue", release: "1.36", want: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			q, _ := newTestQueue(t, defaultOptions(releaseFeatures(t, tc.release), fwk.Listers{})...)
			gated := pendingPod("p", 0)
			gated.Spec.SchedulingGates = []v1.PodSchedulingGate{{Name: "example.com/wait"}}
			gated.Status.NominatedNodeName = "n"
			mustAdd(t, q, gated)
			if got := where(q, "p"); got != "unschedulable" {
				t.Fatalf("gated pod is in %s, want unschedulable", got)
			}
			if got := q.Nominations().NominatedNodeName(gated); got != tc.want {
				t.Errorf("nominated to %q, want %q", got, tc.want)
			}
			ungated := gated.DeepCopy()
			ungated.Spec.SchedulingGates = nil
			if err := q.Update(gated, ungated); err != nil {
				t.Fatal(err)
			}
			if got := q.Nominations().NominatedNodeName(ungated); got != "n" {
				t.Errorf("once ungated, nominated to %q, want n", got)
			}
		})
	}
}

// TestWithPluginEventsFollowsTheQueueRelease: a table given with
// WithPluginEvents is indexed for the queue's release, whichever option
// comes first.
func TestWithPluginEventsFollowsTheQueueRelease(t *testing.T) {
	t.Parallel()
	custom := fwk.PluginEvents{"Custom": {{Event: fwk.EventNodeAdd}}}
	for _, tc := range []struct {
		name  string
		opts  []Option
		moves bool
	}{
		{name: "v1.36 adds taint updates to a node addition's registration", opts: []Option{WithPluginEvents(custom), WithFeatures(releaseFeatures(t, "1.36"))}, moves: true},
		{name: "v1.37 does not", opts: []Option{WithFeatures(releaseFeatures(t, "1.37")), WithPluginEvents(custom)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			q, clock := newTestQueue(t, tc.opts...)
			mustAdd(t, q, pendingPod("p", 0))
			fail(t, q, "Custom")
			clock.Step(time.Minute)
			q.MoveAllToActiveOrBackoffQueue(fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.UpdateNodeTaint}, nil, nil, nil)
			want := "unschedulable"
			if tc.moves {
				want = "active"
			}
			if got := where(q, "p"); got != want {
				t.Errorf("pod is in %s, want %s", got, want)
			}
		})
	}
}
