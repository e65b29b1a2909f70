package queue

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8slabels "k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/kubesched/kubesched/feature"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/names"
)

var epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// newTestQueue returns a queue of the newest release with the default
// plugins' registrations and PreEnqueue plugins, on a fake clock, then
// opts.
func newTestQueue(t *testing.T, opts ...Option) (*PriorityQueue, *testingclock.FakeClock) {
	t.Helper()
	clock := testingclock.NewFakeClock(epoch)
	all := append(defaultOptions(feature.Default(), fwk.Listers{}), WithClock(clock))
	q, err := New(append(all, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return q, clock
}

func pendingPod(name string, priority int32) *v1.Pod {
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID(name), Labels: map[string]string{"app": name}},
		Spec:       v1.PodSpec{Priority: &priority, Containers: []v1.Container{{Name: "c"}}},
	}
}

func podNames(pods []*v1.Pod) []string {
	out := make([]string, len(pods))
	for i, p := range pods {
		out[i] = p.Name
	}
	slices.Sort(out)
	return out
}

func mustAdd(t *testing.T, q *PriorityQueue, pods ...*v1.Pod) {
	t.Helper()
	for _, p := range pods {
		if err := q.Add(p); err != nil {
			t.Fatal(err)
		}
	}
}

func pop(t *testing.T, q *PriorityQueue) *QueuedPodInfo {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	pi, err := q.Pop(ctx)
	if err != nil {
		t.Fatalf("Pop: %v", err)
	}
	return pi
}

// fail pops the next pod and hands it back as rejected by plugins (an
// error if none).
func fail(t *testing.T, q *PriorityQueue, plugins ...string) *QueuedPodInfo {
	t.Helper()
	pi := pop(t, q)
	pi.UnschedulablePlugins = sets.New(plugins...)
	if err := q.AddUnschedulableIfNotPresent(pi); err != nil {
		t.Fatal(err)
	}
	return pi
}

// where reports which part of the queue holds pod name.
func where(q *PriorityQueue, name string) string {
	for part, pods := range map[string][]*v1.Pod{"active": q.PodsInActiveQ(), "backoff": q.PodsInBackoffQ(), "unschedulable": q.UnschedulablePods()} {
		if slices.Contains(podNames(pods), name) {
			return part
		}
	}
	return "nowhere"
}

func TestPopTakesHighestPriorityThenOldest(t *testing.T) {
	t.Parallel()
	q, clock := newTestQueue(t)
	for _, p := range []*v1.Pod{pendingPod("low", 0), pendingPod("high-old", 10), pendingPod("mid", 5), pendingPod("high-new", 10)} {
		mustAdd(t, q, p)
		clock.Step(time.Millisecond)
	}
	var got []string
	for range 4 {
		got = append(got, pop(t, q).Pod.Name)
	}
	if want := []string{"high-old", "high-new", "mid", "low"}; !slices.Equal(got, want) {
		t.Errorf("pop order %v, want %v", got, want)
	}
}

func TestPopWaitsForAPodAndStopsWithItsContextOrClose(t *testing.T) {
	t.Parallel()
	q, _ := newTestQueue(t)
	got := make(chan string)
	go func() {
		pi, err := q.Pop(context.Background())
		if err != nil {
			got <- err.Error()
			return
		}
		got <- pi.Pod.Name
	}()
	mustAdd(t, q, pendingPod("p", 0))
	if name := <-got; name != "p" {
		t.Errorf("Pop returned %q, want p", name)
	}

	ctx, cancel := context.WithCancel(context.Background())
	errs := make(chan error)
	go func() { _, err := q.Pop(ctx); errs <- err }()
	cancel()
	if err := <-errs; !errors.Is(err, context.Canceled) {
		t.Errorf("Pop after cancel = %v, want context.Canceled", err)
	}

	go func() { _, err := q.Pop(context.Background()); errs <- err }()
	q.Close()
	q.Close()
	if err := <-errs; !errors.Is(err, ErrClosed) {
		t.Errorf("Pop after Close = %v, want ErrClosed", err)
	}
}

func TestBackoffDoublesUpToTheMaximum(t *testing.T) {
	t.Parallel()
	q, _ := newTestQueue(t)
	var got []time.Duration
	for failures := 1; failures <= 6; failures++ {
		got = append(got, q.backoffDuration(failures))
	}
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 10 * time.Second, 10 * time.Second}
	if !slices.Equal(got, want) {
		t.Errorf("backoffs %v, want %v", got, want)
	}
	q2, _ := newTestQueue(t, WithPodInitialBackoffDuration(3*time.Second), WithPodMaxBackoffDuration(5*time.Second))
	if d := q2.backoffDuration(100); d != 5*time.Second {
		t.Errorf("backoff after 100 failures = %v, want the 5s maximum", d)
	}
}

func TestFailedPodsWaitWhereKubeSchedulerPutsThem(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		plugins  []string
		duringFn func(q *PriorityQueue)
		want     string
	}{
		{name: "a rejected pod waits in the unschedulable pool", plugins: []string{names.NodeAffinity}, want: "unschedulable"},
		{name: "a pod that failed with an error backs off", want: "backoff"},
		{
			name:    "an event its plugin cares about, arriving while it was in flight, sends it to backoff",
			plugins: []string{names.NodeAffinity},
			duringFn: func(q *PriorityQueue) {
				q.MoveAllToActiveOrBackoffQueue(fwk.EventNodeAdd, nil, &v1.Node{}, nil)
			},
			want: "backoff",
		},
		{
			name:    "an event only other plugins care about does not",
			plugins: []string{names.NodeAffinity},
			duringFn: func(q *PriorityQueue) {
				q.MoveAllToActiveOrBackoffQueue(fwk.EventAssignedPodDelete, &v1.Pod{}, nil, nil)
			},
			want: "unschedulable",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			q, _ := newTestQueue(t)
			mustAdd(t, q, pendingPod("p", 0))
			pi := pop(t, q)
			if tc.duringFn != nil {
				tc.duringFn(q)
			}
			pi.UnschedulablePlugins = sets.New(tc.plugins...)
			if err := q.AddUnschedulableIfNotPresent(pi); err != nil {
				t.Fatal(err)
			}
			if got := where(q, "p"); got != tc.want {
				t.Errorf("pod is in %s, want %s", got, tc.want)
			}
			if err := q.AddUnschedulableIfNotPresent(pi); err == nil {
				t.Error("adding the pod again succeeded")
			}
		})
	}
}

func TestEventsMoveOnlyPodsTheirPluginsRejected(t *testing.T) {
	t.Parallel()
	nodeLabelled := fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.UpdateNodeLabel}
	for _, tc := range []struct {
		name     string
		rejector string
		event    fwk.ClusterEvent
		preCheck PreEnqueueCheck
		moves    bool
	}{
		{name: "a new node helps a pod NodeAffinity rejected", rejector: names.NodeAffinity, event: fwk.EventNodeAdd, moves: true},
		{name: "a node's new labels help it too", rejector: names.NodeAffinity, event: nodeLabelled, moves: true},
		{name: "a deleted pod does not", rejector: names.NodeAffinity, event: fwk.EventAssignedPodDelete},
		{name: "a deleted pod helps one NodeResourcesFit rejected", rejector: names.NodeResourcesFit, event: fwk.EventAssignedPodDelete, moves: true},
		{name: "a node losing a taint does not help a plugin waiting for new nodes", rejector: names.NodeName, event: fwk.ClusterEvent{Resource: fwk.Node, ActionType: fwk.UpdateNodeTaint}},
		{name: "a plugin the queue does not know is helped by any event", rejector: "Custom", event: fwk.ClusterEvent{Resource: fwk.StorageClass, ActionType: fwk.Add}, moves: true},
		{name: "the wildcard event helps every pod", rejector: names.NodeAffinity, event: fwk.ClusterEvent{Resource: fwk.WildCard, ActionType: fwk.All}, moves: true},
		{name: "a pre-check can hold pods back", rejector: names.NodeAffinity, event: fwk.EventNodeAdd, preCheck: func(*v1.Pod) bool { return false }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			q, clock := newTestQueue(t)
			mustAdd(t, q, pendingPod("p", 0))
			fail(t, q, tc.rejector)
			clock.Step(10 * time.Second) // past the backoff
			q.MoveAllToActiveOrBackoffQueue(tc.event, nil, nil, tc.preCheck)
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

func TestBackoffEndsOnTheClock(t *testing.T) {
	t.Parallel()
	q, clock := newTestQueue(t)
	mustAdd(t, q, pendingPod("p", 0))
	fail(t, q) // an error: 1s backoff
	q.FlushBackoffQCompleted()
	if got := where(q, "p"); got != "backoff" {
		t.Fatalf("pod is in %s right after failing, want backoff", got)
	}
	// Expirations are rounded down to whole seconds, and a pod leaves in
	// the window after its expiration's, as in kube-scheduler.
	clock.Step(time.Second)
	q.FlushBackoffQCompleted()
	if got := where(q, "p"); got != "backoff" {
		t.Fatalf("pod is in %s in its expiration's window, want backoff", got)
	}
	clock.Step(time.Second)
	q.FlushBackoffQCompleted()
	if got := where(q, "p"); got != "active" {
		t.Fatalf("pod is in %s once its backoff ended, want active", got)
	}
	fail(t, q) // a second error in a row: 2s
	clock.Step(time.Second)
	q.FlushBackoffQCompleted()
	if got := where(q, "p"); got != "backoff" {
		t.Errorf("pod is in %s 1s into a 2s backoff, want backoff", got)
	}
}

func TestPopTakesFromBackoffWhenNothingIsActive(t *testing.T) {
	t.Parallel()
	q, _ := newTestQueue(t)
	mustAdd(t, q, pendingPod("rejected", 0))
	pi := pop(t, q)
	q.MoveAllToActiveOrBackoffQueue(fwk.EventNodeAdd, nil, nil, nil)
	pi.UnschedulablePlugins = sets.New(names.NodeAffinity)
	if err := q.AddUnschedulableIfNotPresent(pi); err != nil {
		t.Fatal(err)
	}
	if got := pop(t, q).Pod.Name; got != "rejected" {
		t.Errorf("Pop = %s, want the backing-off pod", got)
	}

	// Pods backing off after an error wait their turn, as in kube-scheduler.
	mustAdd(t, q, pendingPod("errored", 0))
	fail(t, q)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if pi, err := q.Pop(ctx); err == nil {
		t.Errorf("Pop = %s, want to wait for the error backoff", pi.Pod.Name)
	}
}

func TestPodsLeftInThePoolAreRetriedAfterTheMaximumStay(t *testing.T) {
	t.Parallel()
	q, clock := newTestQueue(t, WithPodMaxInUnschedulablePodsDuration(time.Minute))
	mustAdd(t, q, pendingPod("p", 0))
	fail(t, q, names.NodeAffinity)
	clock.Step(time.Minute)
	q.FlushUnschedulablePodsLeftover()
	if got := where(q, "p"); got != "unschedulable" {
		t.Fatalf("pod is in %s at the maximum stay, want unschedulable", got)
	}
	clock.Step(time.Second)
	q.FlushUnschedulablePodsLeftover()
	if got := where(q, "p"); got != "active" {
		t.Errorf("pod is in %s after the maximum stay, want active", got)
	}
}

func TestSchedulingGatesHoldPodsUntilRemoved(t *testing.T) {
	t.Parallel()
	q, _ := newTestQueue(t)
	gated := pendingPod("p", 0)
	gated.Spec.SchedulingGates = []v1.PodSchedulingGate{{Name: "example.com/wait"}}
	mustAdd(t, q, gated)
	if got := where(q, "p"); got != "unschedulable" {
		t.Fatalf("gated pod is in %s, want unschedulable", got)
	}
	q.MoveAllToActiveOrBackoffQueue(fwk.EventNodeAdd, nil, nil, nil)
	if got := where(q, "p"); got != "unschedulable" {
		t.Fatalf("gated pod is in %s after a node event, want unschedulable", got)
	}
	other := pendingPod("other", 0)
	q.MoveAllToActiveOrBackoffQueue(fwk.ClusterEvent{Resource: fwk.UnscheduledPod, ActionType: fwk.UpdatePodSchedulingGatesEliminated}, other, other, nil)
	if got := where(q, "p"); got != "unschedulable" {
		t.Fatalf("gated pod is in %s after another pod's gates went, want unschedulable", got)
	}
	ungated := gated.DeepCopy()
	ungated.Spec.SchedulingGates = nil
	if err := q.Update(gated, ungated); err != nil {
		t.Fatal(err)
	}
	if got := where(q, "p"); got != "active" {
		t.Errorf("pod is in %s once its gates were removed, want active", got)
	}
}

func TestUpdatesAndDeletesReachPodsWhereverTheyAre(t *testing.T) {
	t.Parallel()
	q, _ := newTestQueue(t)
	old := pendingPod("p", 0)
	mustAdd(t, q, old)
	updated := old.DeepCopy()
	updated.Labels["v"] = "2"
	if err := q.Update(old, updated); err != nil {
		t.Fatal(err)
	}
	pi := pop(t, q)
	if pi.Pod != updated {
		t.Error("the active queue kept the old pod")
	}

	// Updated while in flight: it comes back in its latest state.
	latest := updated.DeepCopy()
	latest.Labels["v"] = "3"
	if err := q.Update(updated, latest); err != nil {
		t.Fatal(err)
	}
	pi.UnschedulablePlugins = sets.New(names.NodeAffinity)
	if err := q.AddUnschedulableIfNotPresent(pi); err != nil {
		t.Fatal(err)
	}
	if got := q.UnschedulablePods(); len(got) != 1 || got[0] != latest {
		t.Errorf("pool holds %v, want the latest pod", got)
	}

	// Deleted while in flight: it does not come back.
	q.Delete(latest)
	mustAdd(t, q, latest)
	pi = pop(t, q)
	q.Delete(latest)
	if err := q.AddUnschedulableIfNotPresent(pi); err != nil {
		t.Fatal(err)
	}
	if got := where(q, "p"); got != "nowhere" {
		t.Errorf("a pod deleted in flight came back to %s", got)
	}

	// An update of a pod not queued adds it.
	if err := q.Update(latest, latest); err != nil {
		t.Fatal(err)
	}
	if got := where(q, "p"); got != "active" {
		t.Errorf("an updated unknown pod is in %s, want active", got)
	}
}

func TestQueueKeepsNominations(t *testing.T) {
	t.Parallel()
	q, _ := newTestQueue(t)
	p := pendingPod("p", 0)
	p.Status.NominatedNodeName = "n1"
	mustAdd(t, q, p)
	if got := q.Nominations().NominatedNodeName(p); got != "n1" {
		t.Errorf("nominated to %q, want n1", got)
	}
	q.Delete(p)
	if got := q.Nominations().NominatedPods(); len(got) != 0 {
		t.Errorf("nominations after Delete: %v", got)
	}
}

func TestAssignedPodAddedMovesThePodsItCouldHelp(t *testing.T) {
	t.Parallel()
	q, clock := newTestQueue(t)
	affine := pendingPod("affine", 0)
	affine.Spec.Affinity = &v1.Affinity{PodAffinity: &v1.PodAffinity{RequiredDuringSchedulingIgnoredDuringExecution: []v1.PodAffinityTerm{
		{LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}, TopologyKey: v1.LabelHostname},
	}}}
	spread, elsewhere, other := pendingPod("spread", 0), pendingPod("elsewhere", 0), pendingPod("other", 0)
	elsewhere.Namespace = "other-ns"
	for _, p := range []*v1.Pod{spread, elsewhere} {
		p.Spec.TopologySpreadConstraints = []v1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: v1.LabelHostname,
			WhenUnsatisfiable: v1.DoNotSchedule, LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}}}
	}
	for _, tc := range []struct {
		pod     *v1.Pod
		plugins []string
	}{
		{affine, []string{names.InterPodAffinity}},
		{spread, []string{names.PodTopologySpread}},
		{elsewhere, []string{names.PodTopologySpread}},
		{other, []string{names.NodeAffinity}},
	} {
		mustAdd(t, q, tc.pod)
		fail(t, q, tc.plugins...)
	}
	clock.Step(time.Minute)
	db := pendingPod("db", 0)
	db.Spec.NodeName = "n1"
	q.AssignedPodAdded(db)
	if got, want := podNames(q.PodsInActiveQ()), []string{"affine", "spread"}; !slices.Equal(got, want) {
		t.Errorf("moved %v, want %v", got, want)
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		opt  Option
	}{
		{name: "a nil clock", opt: WithClock(nil)},
		{name: "a negative initial backoff", opt: WithPodInitialBackoffDuration(-1)},
		{name: "a negative maximum backoff", opt: WithPodMaxBackoffDuration(-1)},
		{name: "no stay in the pool", opt: WithPodMaxInUnschedulablePodsDuration(0)},
		{name: "a nil PreEnqueue plugin", opt: WithPreEnqueuePlugins(nil)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if _, err := New(tc.opt); err == nil {
				t.Error("New succeeded")
			}
		})
	}
}

func TestBadInputIsAnErrorNotAPanic(t *testing.T) {
	t.Parallel()
	q, _ := newTestQueue(t)
	if q.Add(nil) == nil || q.Update(nil, pendingPod("p", 0)) == nil || q.AddUnschedulableIfNotPresent(nil) == nil ||
		q.AddUnschedulableIfNotPresent(&QueuedPodInfo{}) == nil {
		t.Error("nil input was accepted")
	}
	q.Delete(nil)
	q.Done(nil)
	q.AssignedPodAdded(nil)
	q.AssignedPodUpdated(nil, nil, fwk.EventAssignedPodUpdate)
}

// waitFor spins until cond holds; the deadline only guards against a
// hang, it never decides the outcome.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		runtime.Gosched()
	}
}

func TestRunFlushesOnTheQueueClock(t *testing.T) {
	t.Parallel()
	q, clock := newTestQueue(t, WithPodMaxInUnschedulablePodsDuration(time.Minute))
	mustAdd(t, q, pendingPod("errored", 0), pendingPod("rejected", 0))
	fail(t, q)
	fail(t, q, names.NodeAffinity)
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() { q.Run(ctx); close(stopped) }()
	for step := range 100 {
		waitFor(t, fmt.Sprintf("Run to wait on the clock (step %d)", step), func() bool { return clock.Waiters() > 0 })
		clock.Step(time.Second)
		if len(q.PodsInActiveQ()) == 2 {
			break
		}
	}
	waitFor(t, "both pods to reach the active queue", func() bool { return len(q.PodsInActiveQ()) == 2 })
	cancel()
	<-stopped
}

// claimStore is a ResourceClaim lister a test adds claims to.
type claimStore struct{ claims []*resourceapi.ResourceClaim }

func (s *claimStore) List(k8slabels.Selector) ([]*resourceapi.ResourceClaim, error) {
	return s.claims, nil
}

func TestPodsWithMissingClaimsWaitForTheClaim(t *testing.T) {
	t.Parallel()
	store := &claimStore{}
	q, _ := newTestQueue(t, defaultOptions(feature.Default(), fwk.Listers{ResourceClaims: store})...)
	pod := pendingPod("p", 0)
	name := "gpu"
	pod.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpu", ResourceClaimName: &name}}
	mustAdd(t, q, pod)
	if got := where(q, "p"); got != "unschedulable" {
		t.Fatalf("pod whose claim does not exist is in %s, want unschedulable (gated)", got)
	}
	q.MoveAllToActiveOrBackoffQueue(fwk.EventNodeAdd, nil, nil, nil)
	if got := where(q, "p"); got != "unschedulable" {
		t.Fatalf("pod whose claim does not exist is in %s after a node event, want unschedulable", got)
	}
	claim := &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Name: "gpu", Namespace: "default"}}
	store.claims = append(store.claims, claim)
	q.MoveAllToActiveOrBackoffQueue(fwk.ClusterEvent{Resource: fwk.ResourceClaim, ActionType: fwk.Add}, nil, claim, nil)
	if got := where(q, "p"); got != "active" {
		t.Errorf("pod is in %s once its claim exists, want active", got)
	}
}
