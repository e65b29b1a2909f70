package dra

import (
	"context"
	"fmt"
	"reflect"
	"runtime"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	kruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubesched/kubesched/feature"
	"github.com/kubesched/kubesched/nodeinfo"
)

// memoWorld is a cluster for the memo's tests: three nodes with two GPUs
// each, and a rack pool of two slices, one for all nodes and one for the
// nodes of zone b, from which a pod's claim wants three devices of any
// kind.
type memoWorld struct {
	nodes []*v1.Node
	objs  map[string]kruntime.Object
}

func newMemoWorld() memoWorld {
	w := memoWorld{objs: map[string]kruntime.Object{}}
	for _, n := range []string{"n1", "n2", "n3"} {
		w.nodes = append(w.nodes, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: n, Labels: map[string]string{"zone": "a"}}})
		w.objs["slice/"+n] = gpuSlice(n, "gpu-0", "gpu-1")
	}
	w.nodes[2].Labels["zone"] = "b"
	w.objs["slice/rack-a"] = rackSlice("rack-a", 1, "r0")
	w.objs["slice/rack-b"] = rackSlice("rack-b", 1, "r1")
	w.objs["class/any"] = &resourceapi.DeviceClass{
		ObjectMeta: metav1.ObjectMeta{Name: "any"},
		Spec: resourceapi.DeviceClassSpec{Selectors: []resourceapi.DeviceSelector{{
			CEL: &resourceapi.CELDeviceSelector{Expression: `true`},
		}}},
	}
	c := gpuClaim("pending", "default")
	c.Spec.Devices.Requests[0].Exactly.DeviceClassName = "any"
	c.Spec.Devices.Requests[0].Exactly.Count = 3
	w.objs["claim/pending"] = c
	w.objs["claim/holder"] = withResults(gpuClaim("holder", "default"), result("gpu-0"))
	return w
}

// rackSlice is one of the two slices of the network-attached pool
// "rack": rack-a reaches every node, rack-b the nodes of zone b.
func rackSlice(name string, generation int64, devices ...string) *resourceapi.ResourceSlice {
	s := &resourceapi.ResourceSlice{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: resourceapi.ResourceSliceSpec{
			Driver: "rack.example.com",
			Pool:   resourceapi.ResourcePool{Name: "rack", Generation: generation, ResourceSliceCount: 2},
		},
	}
	if name == "rack-a" {
		s.Spec.AllNodes = new(true)
	} else {
		s.Spec.NodeSelector = &v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{{MatchExpressions: []v1.NodeSelectorRequirement{
			{Key: "zone", Operator: v1.NodeSelectorOpIn, Values: []string{"b"}},
		}}}}
	}
	for _, d := range devices {
		s.Spec.Devices = append(s.Spec.Devices, resourceapi.Device{Name: d})
	}
	return s
}

// clone returns a world sharing w's objects, so that a change replaces
// only what it touches, as an informer's cache does.
func (w memoWorld) clone() memoWorld {
	c := memoWorld{nodes: slices.Clone(w.nodes), objs: map[string]kruntime.Object{}}
	for k, o := range w.objs {
		c.objs[k] = o
	}
	return c
}

// decide runs PreFilter and every node's Filter, and returns each node's
// status and allocation, and the cycle's state.
// decideAsAFreshPlugin has warm, which decided before in another world,
// decide in w, and requires its decisions to be a fresh plugin's, with
// hits nodes answered from warm's memory. It returns warm's state.
func (w memoWorld) decideAsAFreshPlugin(t *testing.T, warm *Plugin, before map[string]string, hits int) *State {
	t.Helper()
	hits0, _ := warm.memo.counts()
	got, s := w.decide(t, warm)
	hits1, _ := warm.memo.counts()
	want, _ := w.decide(t, New(Args{}))
	if !reflect.DeepEqual(got, want) {
		t.Errorf("after the change the remembering plugin decides\n%v\nwant, as a fresh one,\n%v\n(before: %v)", got, want, before)
	}
	if hits1-hits0 != hits {
		t.Errorf("%d nodes answered from memory, want %d", hits1-hits0, hits)
	}
	return s
}

func (w memoWorld) decide(t *testing.T, p *Plugin) (map[string]string, *State) {
	t.Helper()
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range w.objs {
			if !yield(k) {
				return
			}
		}
	})
	objs := make([]kruntime.Object, 0, len(keys))
	for _, k := range keys {
		objs = append(objs, w.objs[k])
	}
	pod := podUsing("default", "pending")
	s, st := p.PreFilter(context.Background(), cycle(listers(t, objs...)), pod, feature.Default())
	if st != nil {
		t.Fatalf("PreFilter: %v", st)
	}
	out := map[string]string{}
	for _, n := range w.nodes {
		st := p.Filter(context.Background(), s, pod, nodeinfo.New(n))
		var devices []string
		for _, a := range s.allocations[n.Name].results {
			for _, r := range a.Devices.Results {
				devices = append(devices, r.Pool+"/"+r.Device)
			}
		}
		out[n.Name] = fmt.Sprintf("%v %v", st, devices)
	}
	return out, s
}

func TestRememberedAllocationsAreTheAllocatorsAfterEveryChange(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change func(w memoWorld)
		// hits is how many nodes the warm plugin answers from memory.
		hits int
	}{
		{"nothing changes", func(memoWorld) {}, 3},
		{"another claim takes a device of n2", func(w memoWorld) {
			w.objs["claim/other"] = withResults(gpuClaim("other", "default"), resourceapi.DeviceRequestAllocationResult{Request: "gpu", Driver: driver, Pool: "n2", Device: "gpu-1"})
		}, 2},
		{"n1's device is given back", func(w memoWorld) { delete(w.objs, "claim/holder") }, 2},
		{"a device of the rack pool, which every node reaches, is taken", func(w memoWorld) {
			w.objs["claim/other"] = withResults(gpuClaim("other", "default"), resourceapi.DeviceRequestAllocationResult{Request: "gpu", Driver: "rack.example.com", Pool: "rack", Device: "r0"})
		}, 0},
		{"n3's slice is replaced with one of a single device", func(w memoWorld) { w.objs["slice/n3"] = gpuSlice("n3", "gpu-0") }, 2},
		{"n3's slice is replaced by an equal copy", func(w memoWorld) { w.objs["slice/n3"] = gpuSlice("n3", "gpu-0", "gpu-1") }, 2},
		{"n2 moves to zone b, where rack-b reaches it", func(w memoWorld) {
			n := w.nodes[1].DeepCopy()
			n.Labels["zone"] = "b"
			w.nodes[1] = n
		}, 2},
		{"rack-b moves to a newer generation, leaving the pool incomplete or obsolete", func(w memoWorld) {
			w.objs["slice/rack-b"] = rackSlice("rack-b", 2, "r1")
		}, 0},
		{"rack-b goes away", func(w memoWorld) { delete(w.objs, "slice/rack-b") }, 0},
		{"the class narrows to the GPUs", func(w memoWorld) {
			c := w.objs["class/any"].(*resourceapi.DeviceClass).DeepCopy()
			c.Spec.Selectors[0].CEL.Expression = `device.driver == "gpu.example.com"`
			w.objs["class/any"] = c
		}, 0},
		{"the claim asks for two devices", func(w memoWorld) {
			c := w.objs["claim/pending"].(*resourceapi.ResourceClaim).DeepCopy()
			c.Spec.Devices.Requests[0].Exactly.Count = 2
			w.objs["claim/pending"] = c
		}, 0},
		{"the claim is renamed in place, its spec unchanged", func(w memoWorld) {
			c := w.objs["claim/pending"].(*resourceapi.ResourceClaim).DeepCopy()
			c.UID = "uid-claim-pending-2"
			w.objs["claim/pending"] = c
		}, 3},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			base := newMemoWorld()
			warm := New(Args{})
			before, _ := base.decide(t, warm)
			changed := base.clone()
			tc.change(changed)
			s := changed.decideAsAFreshPlugin(t, warm, before, tc.hits)
			if built := s.allocator.a != nil; built != (tc.hits < len(changed.nodes)) {
				t.Errorf("allocator built: %v, want it built exactly when some node is not answered from memory", built)
			}
			runtime.KeepAlive(base)
		})
	}
}

func TestTheMemoForgetsNodesBeyondItsBound(t *testing.T) {
	t.Parallel()
	var m memo
	w := &world{common: &common{}, index: &sliceIndex{}}
	for i := range memoShards*memoShardNodes + 1 {
		m.remember(w, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprint("n", i)}}, nil)
	}
	total := 0
	for i := range m.shards {
		total += len(m.shards[i].byNode)
	}
	if total > memoShards*memoShardNodes {
		t.Errorf("memo holds %d nodes, want at most %d", total, memoShards*memoShardNodes)
	}
}

func TestAnswersWithShareIDsAreNotRemembered(t *testing.T) {
	t.Parallel()
	var m memo
	w := &world{common: &common{}, index: &sliceIndex{}}
	n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}
	id := types.UID("share")
	m.remember(w, n, []resourceapi.AllocationResult{{Devices: resourceapi.DeviceAllocationResult{Results: []resourceapi.DeviceRequestAllocationResult{{Device: "d", ShareID: &id}}}}})
	if _, ok := m.lookup(w, n); ok {
		t.Error("an allocation with a share ID was remembered; its share ID is random")
	}
	m.remember(w, n, nil)
	if _, ok := m.lookup(w, n); !ok {
		t.Error("a node where the claims cannot be allocated was not remembered")
	}
	if _, ok := m.lookup(w, n.DeepCopy()); ok {
		t.Error("a copy of the node matched; nodes are keyed by identity")
	}
}
