package cache

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/kubesched/kubesched/nodeinfo"
)

const propertyTTL = time.Minute

// world is what the cache should hold after a sequence of events: the
// nodes and the pods (bound or assumed) as last handed over.
type world struct {
	r        *rand.Rand
	nodes    map[string]*v1.Node
	pods     map[types.UID]*v1.Pod
	assumed  map[types.UID]bool
	deadline map[types.UID]time.Time
	clock    *testingclock.FakeClock
	nextUID  int
}

// checked is a snapshot with the nodeinfo.Build result it must keep equal.
type checked struct {
	snap *Snapshot
	want map[string]*nodeinfo.NodeInfo
}

// TestSnapshotEqualsBuildAfterAnyEvents is the cache's property test: for
// random sequences of node, pod and assume events, every snapshot equals
// nodeinfo.Build on the nodes and pods the events leave, and still does
// after later events.
func TestSnapshotEqualsBuildAfterAnyEvents(t *testing.T) {
	t.Parallel()
	const sequences, events = 200, 150
	snapshots := 0
	for seed := range uint64(sequences) {
		snapshots += runSequence(t, seed, events, copies)
		if t.Failed() {
			return
		}
	}
	t.Logf("%d sequences of %d events, %d snapshots compared with nodeinfo.Build", sequences, events, snapshots)
}

// TestUpdatedSnapshotEqualsBuildAfterAnyEvents is the same with one
// snapshot brought up to date in place (Cache.UpdateSnapshot) each time.
func TestUpdatedSnapshotEqualsBuildAfterAnyEvents(t *testing.T) {
	t.Parallel()
	const sequences, events = 200, 150
	for seed := range uint64(sequences) {
		runSequence(t, seed, events, inPlace)
		if t.Failed() {
			return
		}
	}
}

// TestSnapshotsStayAsTakenBesideOneUpdatedInPlace mixes the two: new
// snapshots, which must never change, and one snapshot updated in place,
// which shares NodeInfos and affinity lists with them until it changes.
func TestSnapshotsStayAsTakenBesideOneUpdatedInPlace(t *testing.T) {
	t.Parallel()
	const sequences, events = 200, 150
	for seed := range uint64(sequences) {
		runSequence(t, seed, events, mixed)
		if t.Failed() {
			return
		}
	}
}

// How runSequence takes its snapshots.
const (
	copies  = iota // new snapshots only (Cache.Snapshot)
	inPlace        // one snapshot updated in place (Cache.UpdateSnapshot)
	mixed          // both, at random
)

// version is a snapshot's generation and its nodes' generations then.
type version struct {
	generation int64
	gens       []int64
}

// runSequence applies random events to a cache and compares snapshots
// taken now and then with nodeinfo.Build. In mode inPlace one snapshot
// is updated in place each time, and earlier ones are not kept; each
// update also checks ChangedSince against every earlier version of the
// snapshot.
func runSequence(t *testing.T, seed uint64, events int, mode int) int {
	t.Helper()
	clock := testingclock.NewFakeClock(time.Unix(1_700_000_000, 0))
	// Build counts images fresh; the conformance module holds the default
	// mode to kube-scheduler's own cache.
	c := newCache(t, WithClock(clock), WithAssumedPodTTL(propertyTTL), WithFreshImageStates())
	w := &world{
		r: rand.New(rand.NewPCG(seed, 7)), clock: clock,
		nodes: map[string]*v1.Node{}, pods: map[types.UID]*v1.Pod{},
		assumed: map[types.UID]bool{}, deadline: map[types.UID]time.Time{},
	}
	var taken []checked
	var live *Snapshot
	var versions []version // live's, since its node list was made
	for i := range events {
		if err := w.step(c); err != nil {
			t.Fatalf("seed %d, event %d: %v", seed, i, err)
		}
		if w.r.IntN(8) == 0 || i == events-1 {
			var snap *Snapshot
			updated := mode == inPlace || mode == mixed && w.r.IntN(2) == 0
			if updated {
				before := live
				live = c.UpdateSnapshot(live)
				snap = live
				if live != before {
					versions = nil
				}
				if err := checkChanges(live, versions); err != nil {
					t.Fatalf("seed %d, snapshot after event %d: %v", seed, i, err)
				}
				versions = append(versions, version{live.Generation(), slices.Clone(live.Generations())})
			} else {
				snap = c.Snapshot()
			}
			w.expire()
			want := w.build(snap)
			if err := compare(snap, want); err != nil {
				t.Fatalf("seed %d, snapshot after event %d: %v", seed, i, err)
			}
			if !updated {
				taken = append(taken, checked{snap, want})
			}
		}
	}
	for i, ck := range taken {
		if err := compare(ck.snap, ck.want); err != nil {
			t.Fatalf("seed %d: snapshot %d changed after later events: %v", seed, i, err)
		}
	}
	return len(taken)
}

// build is nodeinfo.Build on the world, keyed by node name. It also
// checks that the snapshot lists exactly the world's nodes.
func (w *world) build(snap *Snapshot) map[string]*nodeinfo.NodeInfo {
	nodes := make([]*v1.Node, 0, len(w.nodes))
	for _, name := range names(snap.Nodes()) {
		if n, ok := w.nodes[name]; ok {
			nodes = append(nodes, n)
		}
	}
	for name, n := range w.nodes {
		if _, ok := snap.Get(name); !ok {
			nodes = append(nodes, n) // compare reports it missing
		}
	}
	pods := make([]*v1.Pod, 0, len(w.pods))
	for _, p := range w.pods {
		pods = append(pods, p)
	}
	want := map[string]*nodeinfo.NodeInfo{}
	for _, ni := range nodeinfo.Build(nodes, pods) {
		want[ni.Name()] = ni
	}
	return want
}

func compare(snap *Snapshot, want map[string]*nodeinfo.NodeInfo) error {
	if snap.Len() != len(want) {
		return fmt.Errorf("snapshot has nodes %v, want %d nodes", names(snap.Nodes()), len(want))
	}
	for name, w := range want {
		got, ok := snap.Get(name)
		if !ok {
			return fmt.Errorf("node %s missing from the snapshot", name)
		}
		if d := diffNodeInfo(got, w); d != "" {
			return fmt.Errorf("node %s: %s", name, d)
		}
	}
	// The generations kept beside the nodes must be theirs.
	if len(snap.Generations()) != snap.Len() {
		return fmt.Errorf("%d generations for %d nodes", len(snap.Generations()), snap.Len())
	}
	for i, ni := range snap.Nodes() {
		if g := snap.Generations()[i]; g != ni.Generation() {
			return fmt.Errorf("node %s has generation %d, the snapshot says %d", ni.Name(), ni.Generation(), g)
		}
	}
	// The affinity lists, kept from snapshot to snapshot, must be what a
	// pass over the nodes finds, the very NodeInfos in the same order.
	var withAffinity, withAnti []*nodeinfo.NodeInfo
	for _, ni := range snap.Nodes() {
		if len(ni.PodsWithAffinity()) > 0 {
			withAffinity = append(withAffinity, ni)
		}
		if len(ni.PodsWithRequiredAntiAffinity()) > 0 {
			withAnti = append(withAnti, ni)
		}
	}
	if !slices.Equal(snap.NodesWithPodAffinity(), withAffinity) {
		return fmt.Errorf("nodes with pod affinity %v, want %v", names(snap.NodesWithPodAffinity()), names(withAffinity))
	}
	if !slices.Equal(snap.NodesWithRequiredPodAntiAffinity(), withAnti) {
		return fmt.Errorf("nodes with required anti-affinity %v, want %v", names(snap.NodesWithRequiredPodAntiAffinity()), names(withAnti))
	}
	return nil
}

// expire drops the assumed pods the cache has expired by now.
func (w *world) expire() {
	now := w.clock.Now()
	for uid, d := range w.deadline {
		if now.After(d) {
			delete(w.pods, uid)
			delete(w.assumed, uid)
			delete(w.deadline, uid)
		}
	}
}

var (
	nodeNames  = []string{"n0", "n1", "n2", "n3", "n4", "n5"}
	zoneNames  = []string{"", "zone-a", "zone-b", "zone-c"}
	imagePool  = []string{"img-0", "img-1", "img-2", "img-3"}
	claimNames = []string{"data", "logs"}
)

// step applies one random event to c and w. It returns an error when the
// cache rejects an event it should take or takes one it should reject.
func (w *world) step(c *Cache) error {
	switch w.r.IntN(13) {
	case 0, 1:
		n := w.node(pickFrom(w.r, nodeNames))
		if _, err := c.AddNode(n); err != nil {
			return err
		}
		w.nodes[n.Name] = n
	case 2:
		name := pickFrom(w.r, nodeNames)
		n := w.node(name)
		if _, err := c.UpdateNode(n); err != nil {
			return err
		}
		w.nodes[name] = n
	case 3:
		name := pickFrom(w.r, nodeNames)
		// A tombstone may carry a stale node: only the name matters.
		var obj any = DeletedFinalStateUnknown{Key: name, Obj: w.node(name)}
		if w.r.IntN(2) == 0 {
			obj = w.node(name)
		}
		err := c.RemoveNode(obj)
		if _, ok := w.nodes[name]; ok != (err == nil) {
			return fmt.Errorf("RemoveNode(%s) = %v with the node cached: %v", name, err, ok)
		}
		delete(w.nodes, name)
	case 4, 5:
		p := w.pod(pickFrom(w.r, nodeNames))
		if err := c.AddPod(p); err != nil {
			return err
		}
		w.pods[p.UID] = p
	case 6:
		uid, ok := w.some(false)
		if !ok {
			return nil
		}
		p := w.pod(w.pods[uid].Spec.NodeName)
		p.UID, p.Name = uid, w.pods[uid].Name
		if err := c.UpdatePod(p); err != nil {
			return err
		}
		w.pods[uid] = p
	case 7:
		uid, ok := w.some(w.r.IntN(2) == 0)
		if !ok {
			return nil
		}
		stale := w.pods[uid].DeepCopy()
		stale.Spec.NodeName = ""
		var obj any = pickFrom(w.r, []any{w.pods[uid], DeletedFinalStateUnknown{Obj: stale}, &DeletedFinalStateUnknown{Obj: w.pods[uid]}})
		if err := c.RemovePod(obj); err != nil {
			return err
		}
		w.forget(uid)
	case 8, 9:
		p := w.pod(pickFrom(w.r, nodeNames))
		if err := c.AssumePod(p); err != nil {
			return err
		}
		w.pods[p.UID] = p
		w.assumed[p.UID] = true
	case 10:
		uid, ok := w.some(true)
		if !ok {
			return nil
		}
		if err := c.FinishBinding(w.pods[uid]); err != nil {
			return err
		}
		w.deadline[uid] = w.clock.Now().Add(propertyTTL)
	case 11:
		uid, ok := w.some(true)
		if !ok {
			return nil
		}
		if w.r.IntN(2) == 0 {
			if err := c.ForgetPod(w.pods[uid]); err != nil {
				return err
			}
			w.forget(uid)
			return nil
		}
		// Confirmation, occasionally on another node than assumed.
		p := w.pods[uid].DeepCopy()
		if w.r.IntN(4) == 0 {
			p.Spec.NodeName = pickFrom(w.r, nodeNames)
		}
		if err := c.AddPod(p); err != nil {
			return err
		}
		w.forget(uid)
		w.pods[uid] = p
	case 12:
		w.clock.Step(time.Duration(w.r.IntN(40)) * time.Second)
		if uid, ok := w.some(false); ok {
			if err := c.AddPod(w.pods[uid]); err == nil {
				return fmt.Errorf("AddPod of pod %s added before succeeded", uid)
			}
		}
	}
	return nil
}

func (w *world) forget(uid types.UID) {
	delete(w.pods, uid)
	delete(w.assumed, uid)
	delete(w.deadline, uid)
}

// some picks a pod in the world, assumed or added, in a stable order.
func (w *world) some(assumed bool) (types.UID, bool) {
	var uids []types.UID
	for uid := range w.pods {
		if w.assumed[uid] == assumed {
			uids = append(uids, uid)
		}
	}
	if len(uids) == 0 {
		return "", false
	}
	slices.Sort(uids)
	return pickFrom(w.r, uids), true
}

func (w *world) node(name string) *v1.Node {
	n := node(name, pickFrom(w.r, zoneNames))
	n.Status.Allocatable[v1.ResourceCPU] = *resource.NewMilliQuantity(int64(1000+w.r.IntN(4)*1000), resource.DecimalSI)
	if w.r.IntN(2) == 0 {
		n.Status.Allocatable["example.com/gpu"] = *resource.NewQuantity(int64(w.r.IntN(3)), resource.DecimalSI)
	}
	for _, img := range imagePool {
		if w.r.IntN(2) == 0 {
			// Sizes differ between nodes: each node keeps its own.
			n.Status.Images = append(n.Status.Images, v1.ContainerImage{Names: []string{img, img + ":alias"}, SizeBytes: int64(1+w.r.IntN(3)) << 20})
		}
	}
	if w.r.IntN(4) == 0 {
		n.Spec.Taints = []v1.Taint{{Key: "dedicated", Effect: v1.TaintEffectNoSchedule}}
	}
	n.Spec.Unschedulable = w.r.IntN(8) == 0
	return n
}

func (w *world) pod(nodeName string) *v1.Pod {
	w.nextUID++
	p := pod(fmt.Sprintf("uid-%d", w.nextUID), nodeName, fmt.Sprintf("%dm", w.r.IntN(4)*100))
	p.Labels = map[string]string{"app": pickFrom(w.r, []string{"web", "db"})}
	c := &p.Spec.Containers[0]
	if w.r.IntN(3) == 0 {
		c.Resources.Requests[v1.ResourceMemory] = resource.MustParse("256Mi")
		c.Resources.Requests["example.com/gpu"] = resource.MustParse("1")
	}
	if w.r.IntN(3) == 0 {
		// Host ports are a set per node, in kube-scheduler as here: two pods
		// on one node holding the same port (which its filters and the
		// kubelet prevent) would free it when the first leaves.
		c.Ports = []v1.ContainerPort{{HostPort: int32(1000 + w.nextUID), ContainerPort: 80}}
	}
	if w.r.IntN(3) == 0 {
		p.Spec.Volumes = []v1.Volume{{Name: "v", VolumeSource: v1.VolumeSource{
			PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: pickFrom(w.r, claimNames)},
		}}}
	}
	term := v1.PodAffinityTerm{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}, TopologyKey: v1.LabelHostname}
	switch w.r.IntN(4) {
	case 0:
		p.Spec.Affinity = &v1.Affinity{PodAffinity: &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{term}}}
	case 1:
		p.Spec.Affinity = &v1.Affinity{PodAntiAffinity: &v1.PodAntiAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{term}}}
	}
	return p
}

func pickFrom[T any](r *rand.Rand, from []T) T { return from[r.IntN(len(from))] }

// checkChanges checks that ChangedSince names, for each earlier version
// of snap it can tell about, every node whose generation changed since,
// and that it can tell about the latest one.
func checkChanges(snap *Snapshot, versions []version) error {
	for k, v := range versions {
		changed, ok := snap.ChangedSince(v.generation)
		if !ok {
			if u := snap.d.Updates; k == len(versions)-1 && len(u) > 0 && u[len(u)-1].From == v.generation {
				return fmt.Errorf("ChangedSince(%d), the version before the last update, cannot tell", v.generation)
			}
			continue
		}
		named := map[int32]bool{}
		for _, p := range changed {
			named[p] = true
		}
		for p, g := range snap.Generations() {
			if g != v.gens[p] && !named[int32(p)] {
				return fmt.Errorf("node %s changed since generation %d (version %d of %d) but ChangedSince does not name it", snap.Nodes()[p].Name(), v.generation, k, len(versions))
			}
		}
	}
	return nil
}
