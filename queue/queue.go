package queue

import (
	"container/list"
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/utils/clock"

	"github.com/kubesched/kubesched/feature"
	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/internal/podaffinity"
	"github.com/kubesched/kubesched/names"
	"github.com/kubesched/kubesched/nodeinfo"
)

// Defaults of kube-scheduler, the same in every supported release.
const (
	DefaultPodInitialBackoffDuration         = 1 * time.Second
	DefaultPodMaxBackoffDuration             = 10 * time.Second
	DefaultPodMaxInUnschedulablePodsDuration = 5 * time.Minute
)

// Backoff expirations are rounded down to whole windows, so that pods
// whose backoff ends in the same window leave it in priority order; the
// backoff queue is flushed once per window.
const backoffWindow = time.Second

// unschedulableFlushPeriod is how often [PriorityQueue.Run] looks for pods left in
// the unschedulable pool too long.
const unschedulableFlushPeriod = 30 * time.Second

// ErrClosed is returned by Pop once the queue is closed and empty.
var ErrClosed = errors.New("queue: closed")

// QueuedPodInfo is a pending pod with its scheduling history.
type QueuedPodInfo struct {
	// PodInfo is the pod, with its requests computed once.
	*nodeinfo.PodInfo
	// Timestamp is when the pod was added, or last failed to schedule;
	// pods of equal priority pop oldest first.
	Timestamp time.Time
	// InitialAttemptTimestamp is when the pod first entered the active
	// queue.
	InitialAttemptTimestamp *time.Time
	// Attempts counts the times the pod was popped.
	Attempts int
	// UnschedulableCount counts failed attempts that plugins rejected, and
	// ConsecutiveErrorsCount attempts in a row that failed with an error;
	// they set the backoff.
	UnschedulableCount, ConsecutiveErrorsCount int
	// UnschedulablePlugins are the plugins that rejected the pod in its
	// last attempt (Diagnosis.UnschedulablePlugins). The caller sets them
	// before [PriorityQueue.AddUnschedulableIfNotPresent]; empty means the
	// attempt failed with an error. Only events these plugins registered
	// for move the pod.
	UnschedulablePlugins sets.Set[string]
	// GatingPlugin is the PreEnqueue plugin holding the pod back, or "".
	GatingPlugin string

	key               string
	backoffExpiration time.Time
	gatingEvents      []fwk.ClusterEvent
}

func (pi *QueuedPodInfo) gated() bool { return pi.GatingPlugin != "" }

func (pi *QueuedPodInfo) setPod(pod *v1.Pod) { pi.PodInfo = nodeinfo.NewPodInfo(pod) }

// Option configures a PriorityQueue.
type Option func(*PriorityQueue) error

// WithClock sets the clock that timestamps pods, measures backoffs and
// the unschedulable pool's timeout, and wakes [PriorityQueue.Run]
// (default: the system's, clock.RealClock). Tests pass
// k8s.io/utils/clock/testing's FakeClock, which moves only when stepped.
func WithClock(c clock.Clock) Option {
	return func(q *PriorityQueue) error {
		if c == nil {
			return errors.New("queue: WithClock: nil clock")
		}
		q.clock = c
		return nil
	}
}

// WithPodInitialBackoffDuration sets the first backoff (default 1s); each
// further failure doubles it up to the maximum.
func WithPodInitialBackoffDuration(d time.Duration) Option {
	return func(q *PriorityQueue) error {
		if d < 0 {
			return fmt.Errorf("queue: negative initial backoff %v", d)
		}
		q.initialBackoff = d
		return nil
	}
}

// WithPodMaxBackoffDuration sets the longest backoff (default 10s); 0
// disables backoff.
func WithPodMaxBackoffDuration(d time.Duration) Option {
	return func(q *PriorityQueue) error {
		if d < 0 {
			return fmt.Errorf("queue: negative maximum backoff %v", d)
		}
		q.maxBackoff = d
		return nil
	}
}

// WithPodMaxInUnschedulablePodsDuration sets how long a pod may wait in
// the unschedulable pool for an event before it is retried anyway
// (default 5 minutes).
func WithPodMaxInUnschedulablePodsDuration(d time.Duration) Option {
	return func(q *PriorityQueue) error {
		if d <= 0 {
			return fmt.Errorf("queue: maximum stay in the unschedulable pool must be positive, not %v", d)
		}
		q.maxInUnschedulable = d
		return nil
	}
}

// WithFeatures makes the queue behave as the kube-scheduler release of fs
// (default: [feature.Default], the newest): how it tells pod events
// apart ([PodUpdateEvents]), whether a node addition's registration also
// asks for taint updates, and when it records a nomination. Give it the
// features of the release the framework reproduces, such as
// kubesched.Release.Features, and the plugins' registrations for the same
// release ([WithPluginEvents]).
func WithFeatures(fs feature.Features) Option {
	return func(q *PriorityQueue) error {
		q.features = fs
		return nil
	}
}

// WithPluginEvents sets which events move the pods each plugin rejected,
// and the hints that decide: what the plugins' EventsToRegister return
// ([fwk.PluginEventsOf], kubesched.Release.PluginEvents for the
// default plugins). Without it, or with a nil or empty pe, no plugin is
// registered, and every event moves every pod a plugin rejected, as
// kube-scheduler does for plugins that register nothing.
func WithPluginEvents(pe fwk.PluginEvents) Option {
	return func(q *PriorityQueue) error {
		q.pluginEvents = pe
		return nil
	}
}

// WithPreEnqueuePlugins sets the PreEnqueue plugins (default: none);
// kube-scheduler's are SchedulingGates then DynamicResources
// (kubesched.Release.QueueOptions sets them). Register the events that
// release the pods they gate with [WithPluginEvents].
func WithPreEnqueuePlugins(plugins ...fwk.PreEnqueuePlugin) Option {
	return func(q *PriorityQueue) error {
		for _, pl := range plugins {
			if pl == nil {
				return errors.New("queue: WithPreEnqueuePlugins: nil plugin")
			}
		}
		q.preEnqueue = plugins
		return nil
	}
}

// WithListers gives the queue the cluster objects its PreEnqueue plugins
// read (DynamicResources looks the pod's ResourceClaims up), and lets
// [PriorityQueue.AssignedPodAdded] match the namespaceSelector of pending
// pods' affinity terms through l.Namespaces. Pass the framework's, which
// the hints of [WithPluginEvents] should read too.
func WithListers(l fwk.Listers) Option {
	return func(q *PriorityQueue) error {
		q.listers = l
		return nil
	}
}

// PriorityQueue is kube-scheduler's scheduling queue: it holds the pods waiting
// to be scheduled and decides which goes next.
//
//   - The active queue holds the pods ready to be tried, highest priority
//     first, then oldest first. [PriorityQueue.Pop] takes from it.
//   - The backoff queue holds pods that failed recently, each until its
//     backoff ends: 1s after the first failure, doubling per failure up to
//     10s. [PriorityQueue.FlushBackoffQCompleted] (run every second by [PriorityQueue.Run])
//     moves those whose backoff ended to the active queue. When the
//     active queue is empty, Pop takes from the backoff queue rather than
//     wait, as kube-scheduler does (SchedulerPopFromBackoffQ).
//   - The unschedulable pool holds pods that plugins rejected, until an
//     event that one of those plugins registered for ([fwk.PluginEvents])
//     moves them to the active or backoff queue
//     ([PriorityQueue.MoveAllToActiveOrBackoffQueue]), or until they have waited
//     5 minutes ([PriorityQueue.FlushUnschedulablePodsLeftover]). Pods gated by a
//     [fwk.PreEnqueuePlugin] (scheduling gates) wait there too.
//
// A popped pod is "in flight" until [PriorityQueue.AddUnschedulableIfNotPresent]
// or [PriorityQueue.Done]; events arriving meanwhile are remembered, so a pod
// that fails right after the event that would have helped it is not
// parked in the pool (kube-scheduler's queueing hints).
//
// The queue also keeps the pods' nominations ([PriorityQueue.Nominations]): a
// pending pod's status.nominatedNodeName is recorded when it is added
// or updated, and dropped when it is deleted.
//
// Pods are identified by namespace and name. All methods are safe for
// concurrent use; the queue never modifies the pods given to it.
type PriorityQueue struct {
	mu   sync.Mutex
	cond *sync.Cond

	clock                                          clock.Clock
	initialBackoff, maxBackoff, maxInUnschedulable time.Duration
	features                                       feature.Features
	pluginEvents                                   fwk.PluginEvents
	hints                                          hintTable
	preEnqueue                                     []fwk.PreEnqueuePlugin
	listers                                        fwk.Listers
	nominations                                    *framework.Nominations

	active        *podHeap
	backoff       *podHeap // pods rejected by plugins
	errorBackoff  *podHeap // pods whose attempt failed with an error
	unschedulable map[string]*QueuedPodInfo

	// inFlight maps the keys of popped pods to their entries in flow, a
	// list of pod markers and the events that came after them.
	inFlight map[string]*inFlightPod
	flow     *list.List

	closed bool
	done   chan struct{}
}

type inFlightPod struct {
	marker *list.Element
	// latest is the pod's latest state from Update, nil if none came.
	latest  *v1.Pod
	deleted bool
}

type inFlightEvent struct {
	event          fwk.ClusterEvent
	oldObj, newObj any
}

// New returns an empty queue. It returns an error for a bad option.
func New(opts ...Option) (*PriorityQueue, error) {
	q := &PriorityQueue{
		clock:              clock.RealClock{},
		features:           feature.Default(),
		initialBackoff:     DefaultPodInitialBackoffDuration,
		maxBackoff:         DefaultPodMaxBackoffDuration,
		maxInUnschedulable: DefaultPodMaxInUnschedulablePodsDuration,
		nominations:        framework.NewNominations(),
		unschedulable:      map[string]*QueuedPodInfo{},
		inFlight:           map[string]*inFlightPod{},
		flow:               list.New(),
		done:               make(chan struct{}),
	}
	q.cond = sync.NewCond(&q.mu)
	for _, o := range opts {
		if err := o(q); err != nil {
			return nil, err
		}
	}
	// Built once every option is in: the table reads the features,
	// whichever option came last.
	q.hints = newHintTable(q.pluginEvents, q.features)
	q.active = newPodHeap(activeLess)
	q.backoff = newPodHeap(func(a, b *QueuedPodInfo) bool {
		ta, tb := q.backoffTime(a), q.backoffTime(b)
		if !ta.Equal(tb) {
			return ta.Before(tb)
		}
		return activeLess(a, b)
	})
	q.errorBackoff = newPodHeap(func(a, b *QueuedPodInfo) bool { return q.backoffTime(a).Before(q.backoffTime(b)) })
	return q, nil
}

// activeLess is kube-scheduler's PrioritySort: higher priority first,
// then the earlier timestamp.
func activeLess(a, b *QueuedPodInfo) bool {
	pa, pb := corev1helpers.PodPriority(a.Pod), corev1helpers.PodPriority(b.Pod)
	return pa > pb || pa == pb && a.Timestamp.Before(b.Timestamp)
}

// Nominations returns the nominations the queue keeps, for
// framework.WithNominator. Callers add the nominations preemption makes,
// and delete a pod's once it is assumed.
func (q *PriorityQueue) Nominations() *framework.Nominations { return q.nominations }

func podKey(pod *v1.Pod) string { return pod.Namespace + "/" + pod.Name }

// Add adds a pending pod (created, or seen for the first time) to the
// active queue, or to the unschedulable pool if a PreEnqueue plugin gates
// it, replacing any entry of the same pod. It returns an error for a nil
// pod.
func (q *PriorityQueue) Add(pod *v1.Pod) error {
	if pod == nil {
		return errors.New("queue: Add: nil pod")
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.add(pod, fwk.EventUnscheduledPodAdd)
	return nil
}

// add queues a pod the queue does not hold, as event: in the active queue,
// or in the pool if gated. With NominationRecordedOnAdd its nomination is
// recorded here, gated or not; before, moveToActive records it.
func (q *PriorityQueue) add(pod *v1.Pod, event fwk.ClusterEvent) {
	if q.features.NominationRecordedOnAdd {
		q.nominations.Add(pod, "")
	}
	if q.moveToActive(q.newQueuedPodInfo(pod), event.Label(), false) {
		q.cond.Broadcast()
	}
}

// Update records a pending pod's new state. A pod in the active or
// backoff queue is updated in place; one in the unschedulable pool moves
// if the change is an event its rejecting plugins registered for (say,
// its scheduling gates were removed); a popped pod is updated when it
// comes back; a pod not in the queue is added. The events are
// [PodUpdateEvents] of the pod as the target: TargetPod ones, with the
// queue's PodEventsByRole. It returns an error for a nil pod.
func (q *PriorityQueue) Update(oldPod, newPod *v1.Pod) error {
	if oldPod == nil || newPod == nil {
		return errors.New("queue: Update: nil pod")
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	events := PodUpdateEvents(q.features, newPod, oldPod, true)
	key := podKey(newPod)
	if f, ok := q.inFlight[key]; ok {
		f.latest = newPod
		for _, e := range events {
			q.flow.PushBack(&inFlightEvent{event: e, oldObj: oldPod, newObj: newPod})
		}
		return nil
	}
	for _, h := range []*podHeap{q.active, q.backoff, q.errorBackoff} {
		if pi, ok := h.get(key); ok {
			pi.setPod(newPod)
			h.addOrUpdate(pi)
			q.nominations.Update(oldPod, newPod)
			return nil
		}
	}
	if pi, ok := q.unschedulable[key]; ok {
		pi.setPod(newPod)
		q.nominations.Update(oldPod, newPod)
		for _, e := range events {
			switch q.requeue(pi, q.worthRequeuing(pi, e, oldPod, newPod), e.Label()) {
			case "active", "backoff":
				q.cond.Broadcast()
				return nil
			}
		}
		return nil
	}
	q.add(newPod, fwk.EventUnscheduledPodUpdate)
	return nil
}

// Delete removes a pending pod, wherever it is, and its nomination. A
// pod in flight is not added back. Nil and unknown pods are ignored.
func (q *PriorityQueue) Delete(pod *v1.Pod) {
	if pod == nil {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.nominations.Delete(pod)
	key := podKey(pod)
	if f, ok := q.inFlight[key]; ok {
		f.deleted = true
	}
	q.remove(key)
}

func (q *PriorityQueue) remove(key string) {
	_ = q.active.remove(key) || q.backoff.remove(key) || q.errorBackoff.remove(key)
	delete(q.unschedulable, key)
}

// Pop removes and returns the next pod to schedule: the active queue's
// first, or, when the active queue is empty, the backoff queue's first.
// It blocks until there is one, ctx is done (returning ctx's error) or
// the queue is closed and empty ([ErrClosed]). The pod is in flight until
// [PriorityQueue.AddUnschedulableIfNotPresent] or [PriorityQueue.Done].
func (q *PriorityQueue) Pop(ctx context.Context) (*QueuedPodInfo, error) {
	stop := context.AfterFunc(ctx, func() {
		q.mu.Lock()
		defer q.mu.Unlock()
		q.cond.Broadcast()
	})
	defer stop()
	q.mu.Lock()
	defer q.mu.Unlock()
	for {
		for q.active.Len() == 0 && q.backoff.Len() == 0 {
			if q.closed {
				return nil, ErrClosed
			}
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			q.cond.Wait()
		}
		pi, ok := q.active.pop()
		if !ok {
			pi, _ = q.backoff.pop()
		}
		if _, dup := q.inFlight[pi.key]; dup {
			continue // already being scheduled: drop this copy
		}
		pi.Attempts++
		q.inFlight[pi.key] = &inFlightPod{marker: q.flow.PushBack(pi.key)}
		return pi, nil
	}
}

// Done ends a popped pod's flight after it was scheduled (or given up),
// so that the queue stops remembering events for it. Pods given to
// AddUnschedulableIfNotPresent need no Done.
func (q *PriorityQueue) Done(pod *v1.Pod) {
	if pod == nil {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.land(podKey(pod))
}

// land forgets an in-flight pod and the events no in-flight pod needs.
func (q *PriorityQueue) land(key string) {
	f, ok := q.inFlight[key]
	if !ok {
		return
	}
	delete(q.inFlight, key)
	q.flow.Remove(f.marker)
	for e := q.flow.Front(); e != nil; e = q.flow.Front() {
		if _, isEvent := e.Value.(*inFlightEvent); !isEvent {
			break
		}
		q.flow.Remove(e)
	}
}

// AddUnschedulableIfNotPresent takes back a popped pod that failed to
// schedule. Set pi.UnschedulablePlugins to the plugins that rejected it
// (a FitError's Diagnosis.UnschedulablePlugins), or leave it empty when
// the attempt failed with an error. If an event that one of those plugins
// registered for came while the pod was in flight, the pod goes to the
// backoff queue (or the active queue if its backoff is over); otherwise
// it waits in the unschedulable pool. A pod updated while in flight comes
// back in its latest state; one deleted meanwhile does not come back.
//
// It returns an error for a nil pod or one already queued.
func (q *PriorityQueue) AddUnschedulableIfNotPresent(pi *QueuedPodInfo) error {
	if pi == nil || pi.PodInfo == nil || pi.Pod == nil {
		return errors.New("queue: AddUnschedulableIfNotPresent: nil pod")
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	pi.key = podKey(pi.Pod)
	defer q.land(pi.key)
	if f, ok := q.inFlight[pi.key]; ok {
		if f.deleted {
			return nil
		}
		if f.latest != nil {
			pi.setPod(f.latest)
		}
	}
	_, inActive := q.active.get(pi.key)
	_, inBackoff := q.backoff.get(pi.key)
	_, inErrorBackoff := q.errorBackoff.get(pi.key)
	switch {
	case q.unschedulable[pi.key] != nil:
		return fmt.Errorf("queue: pod %s is already in the unschedulable pool", pi.key)
	case inActive:
		return fmt.Errorf("queue: pod %s is already in the active queue", pi.key)
	case inBackoff || inErrorBackoff:
		return fmt.Errorf("queue: pod %s is already in the backoff queue", pi.key)
	}
	if pi.UnschedulablePlugins.Len() == 0 {
		pi.ConsecutiveErrorsCount++
	} else {
		pi.UnschedulableCount++
		pi.ConsecutiveErrorsCount = 0
	}
	pi.Timestamp = q.clock.Now()
	pi.backoffExpiration = time.Time{}
	switch q.requeue(pi, q.hintForInFlight(pi), reasonScheduleAttemptFailure) {
	case "active", "backoff":
		q.cond.Broadcast()
	}
	return nil
}

// PreEnqueueCheck decides, for [PriorityQueue.MoveAllToActiveOrBackoffQueue],
// whether an event could make pod schedulable; pods it turns down stay
// where they are.
type PreEnqueueCheck func(pod *v1.Pod) bool

// MoveAllToActiveOrBackoffQueue is how the cluster's events reach the
// queue: it moves the pods in the unschedulable pool that the event may
// help, per the plugins that rejected them, to the backoff queue, or the
// active queue if their backoff is over. oldObj and newObj are the
// event's object before and after (nil for an addition or deletion), for
// queueing hints. preCheck, if not nil, holds back the pods it turns down
// (see [github.com/kubesched/kubesched/filter.PreCheckForNode]). The event is also remembered for pods in
// flight.
func (q *PriorityQueue) MoveAllToActiveOrBackoffQueue(event fwk.ClusterEvent, oldObj, newObj any, preCheck PreEnqueueCheck) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.moveAll(event, oldObj, newObj, preCheck)
}

func (q *PriorityQueue) moveAll(event fwk.ClusterEvent, oldObj, newObj any, preCheck PreEnqueueCheck) {
	pods := make([]*QueuedPodInfo, 0, len(q.unschedulable))
	for _, pi := range q.unschedulable {
		if preCheck == nil || preCheck(pi.Pod) {
			pods = append(pods, pi)
		}
	}
	q.movePods(pods, event, oldObj, newObj)
}

// AssignedPodAdded moves the pods in the unschedulable pool that a pod
// newly bound to a node may help: those PodTopologySpread rejected in its
// namespace, and those with a required pod affinity term it matches.
// kube-scheduler sends the event to
// [PriorityQueue.MoveAllToActiveOrBackoffQueue] instead (EventAssignedPodAdd),
// leaving the choice to the plugins' queueing hints; this narrower move
// is the one releases before v1.37 made without them. The hints still
// decide which of these pods move. A nil pod moves nothing.
func (q *PriorityQueue) AssignedPodAdded(pod *v1.Pod) {
	if pod == nil {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.movePods(q.crossTopology(pod), fwk.EventAssignedPodAdd, nil, pod)
}

// AssignedPodUpdated is [PriorityQueue.AssignedPodAdded] for an update of a bound
// pod, with event from [PodSchedulingPropertiesChange]; a pod that
// released resources (UpdatePodScaleDown) may help any pod, so that
// event goes to every pod in the pool.
func (q *PriorityQueue) AssignedPodUpdated(oldPod, newPod *v1.Pod, event fwk.ClusterEvent) {
	if newPod == nil {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if (fwk.ClusterEvent{Resource: fwk.Pod, ActionType: fwk.UpdatePodScaleDown}).Match(event) {
		q.moveAll(event, oldPod, newPod, nil)
		return
	}
	q.movePods(q.crossTopology(newPod), event, oldPod, newPod)
}

// crossTopology returns the pods in the pool that pod, now bound, may
// help through spreading or required affinity.
func (q *PriorityQueue) crossTopology(pod *v1.Pod) []*QueuedPodInfo {
	var nsLabels map[string]string
	if q.listers.Namespaces != nil {
		nsLabels = podaffinity.NamespaceLabels(q.listers.Namespaces, pod.Namespace)
	}
	var out []*QueuedPodInfo
	for _, pi := range q.unschedulable {
		if pi.UnschedulablePlugins.Has(names.PodTopologySpread) && pi.Pod.Namespace == pod.Namespace {
			out = append(out, pi)
			continue
		}
		terms := pi.PodInfo.AffinityTerms().RequiredAffinity
		for i := range terms {
			if terms[i].Matches(pod, nsLabels) {
				out = append(out, pi)
				break
			}
		}
	}
	return out
}

// FlushBackoffQCompleted moves the pods whose backoff has ended to the
// active queue. [PriorityQueue.Run] calls it every second.
func (q *PriorityQueue) FlushBackoffQCompleted() {
	q.mu.Lock()
	defer q.mu.Unlock()
	moved := false
	for _, h := range []*podHeap{q.backoff, q.errorBackoff} {
		for {
			pi, ok := h.peek()
			if !ok || q.backingOff(pi) {
				break
			}
			h.pop()
			moved = q.moveToActive(pi, reasonBackoffComplete, true) || moved
		}
	}
	if moved {
		q.cond.Broadcast()
	}
}

// FlushUnschedulablePodsLeftover retries the pods that have waited in the
// unschedulable pool longer than the maximum stay (5 minutes by
// default), as an UnschedulableTimeout event. [PriorityQueue.Run] calls it every
// 30 seconds.
func (q *PriorityQueue) FlushUnschedulablePodsLeftover() {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.clock.Now()
	var stale []*QueuedPodInfo
	for _, pi := range q.unschedulable {
		if now.Sub(pi.Timestamp) > q.maxInUnschedulable {
			stale = append(stale, pi)
		}
	}
	if len(stale) > 0 {
		q.movePods(stale, fwk.EventUnschedulableTimeout, nil, nil)
	}
}

// Run flushes the backoff queue every second (at whole seconds of the
// queue's clock) and the unschedulable pool every 30 seconds, until ctx
// is done or the queue is closed.
func (q *PriorityQueue) Run(ctx context.Context) {
	lastLeftover := q.clock.Now()
	for {
		now := q.clock.Now()
		select {
		case <-ctx.Done():
			return
		case <-q.done:
			return
		case now = <-q.clock.After(now.Truncate(backoffWindow).Add(backoffWindow).Sub(now)):
		}
		q.FlushBackoffQCompleted()
		if now.Sub(lastLeftover) >= unschedulableFlushPeriod {
			q.FlushUnschedulablePodsLeftover()
			lastLeftover = now
		}
	}
}

// Close wakes every Pop, which then returns ErrClosed once the queue is
// empty, and stops Run. Closing twice is harmless.
func (q *PriorityQueue) Close() {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return
	}
	q.closed = true
	close(q.done)
	q.cond.Broadcast()
}

// PodsInActiveQ returns the pods in the active queue, in no order.
func (q *PriorityQueue) PodsInActiveQ() []*v1.Pod {
	q.mu.Lock()
	defer q.mu.Unlock()
	return podsOf(q.active.items)
}

// PodsInBackoffQ returns the pods in the backoff queue, in no order.
func (q *PriorityQueue) PodsInBackoffQ() []*v1.Pod {
	q.mu.Lock()
	defer q.mu.Unlock()
	return append(podsOf(q.backoff.items), podsOf(q.errorBackoff.items)...)
}

// UnschedulablePods returns the pods in the unschedulable pool, gated
// ones included, in no order.
func (q *PriorityQueue) UnschedulablePods() []*v1.Pod {
	q.mu.Lock()
	defer q.mu.Unlock()
	pods := make([]*v1.Pod, 0, len(q.unschedulable))
	for _, pi := range q.unschedulable {
		pods = append(pods, pi.Pod)
	}
	return pods
}

func podsOf(items []*QueuedPodInfo) []*v1.Pod {
	pods := make([]*v1.Pod, len(items))
	for i, pi := range items {
		pods[i] = pi.Pod
	}
	return pods
}

func (q *PriorityQueue) newQueuedPodInfo(pod *v1.Pod) *QueuedPodInfo {
	return &QueuedPodInfo{
		PodInfo:              nodeinfo.NewPodInfo(pod),
		Timestamp:            q.clock.Now(),
		UnschedulablePlugins: sets.New[string](),
		key:                  podKey(pod),
	}
}

// moveToActive puts pi in the active queue unless a PreEnqueue plugin
// gates it (then it goes to the pool). fromBackoff skips the PreEnqueue
// plugins, which admitted the pod on its way into the backoff queue. It
// reports whether the pod is now in the active queue.
func (q *PriorityQueue) moveToActive(pi *QueuedPodInfo, event string, fromBackoff bool) bool {
	if !fromBackoff {
		q.runPreEnqueue(pi)
	}
	if pi.gated() {
		_, active := q.active.get(pi.key)
		if !active && !q.inBackoff(pi.key) {
			q.unschedulable[pi.key] = pi
		}
		return false
	}
	if pi.InitialAttemptTimestamp == nil {
		now := q.clock.Now()
		pi.InitialAttemptTimestamp = &now
	}
	delete(q.unschedulable, pi.key)
	q.backoff.remove(pi.key)
	q.errorBackoff.remove(pi.key)
	q.active.addOrUpdate(pi)
	if !q.features.NominationRecordedOnAdd && (event == fwk.EventUnscheduledPodAdd.Label() || event == fwk.EventUnscheduledPodUpdate.Label()) {
		q.nominations.Add(pi.Pod, "")
	}
	return true
}

// moveToBackoff puts pi in the backoff queue unless a PreEnqueue plugin
// gates it, and reports whether it did.
func (q *PriorityQueue) moveToBackoff(pi *QueuedPodInfo) bool {
	q.runPreEnqueue(pi)
	if pi.gated() {
		q.unschedulable[pi.key] = pi
		return false
	}
	delete(q.unschedulable, pi.key)
	to, other := q.backoff, q.errorBackoff
	if pi.UnschedulablePlugins.Len() == 0 {
		to, other = other, to
	}
	other.remove(pi.key)
	to.addOrUpdate(pi)
	return true
}

func (q *PriorityQueue) inBackoff(key string) bool {
	_, a := q.backoff.get(key)
	_, b := q.errorBackoff.get(key)
	return a || b
}

// runPreEnqueue asks the PreEnqueue plugins, the one gating pi first, and
// records the first that gates it.
func (q *PriorityQueue) runPreEnqueue(pi *QueuedPodInfo) {
	gating := pi.GatingPlugin
	for _, pl := range q.preEnqueue {
		if gating != "" && pl.Name() == gating && !q.admits(pl, pi) {
			return
		}
	}
	for _, pl := range q.preEnqueue {
		if pl.Name() != gating && !q.admits(pl, pi) {
			return
		}
	}
	pi.GatingPlugin, pi.gatingEvents = "", nil
}

func (q *PriorityQueue) admits(pl fwk.PreEnqueuePlugin, pi *QueuedPodInfo) bool {
	if pl.PreEnqueue(context.Background(), q.listers, pi.Pod).IsSuccess() {
		return true
	}
	if pi.UnschedulablePlugins == nil {
		pi.UnschedulablePlugins = sets.New[string]()
	}
	pi.UnschedulablePlugins.Insert(pl.Name())
	pi.GatingPlugin, pi.gatingEvents = pl.Name(), q.hints.byPlugin[pl.Name()]
	return false
}

// strategy is where an event sends a pod.
type strategy int

const (
	stay strategy = iota
	afterBackoff
)

// worthRequeuing decides whether event may make pi schedulable, asking
// the hints of the plugins that rejected it.
func (q *PriorityQueue) worthRequeuing(pi *QueuedPodInfo, event fwk.ClusterEvent, oldObj, newObj any) strategy {
	rejectors := pi.UnschedulablePlugins
	if rejectors.Len() == 0 {
		return afterBackoff
	}
	if event.IsWildCard() {
		// A wildcard event about another pod does not concern this one.
		if newObj != nil {
			if p, ok := newObj.(*v1.Pod); !ok || p.UID != pi.Pod.UID {
				return stay
			}
		}
		return afterBackoff
	}
	for plugin := range rejectors {
		if !q.hints.registered.Has(plugin) {
			return afterBackoff // registered for nothing: any event may help
		}
	}
	for _, eh := range q.hints.events {
		if !eh.event.Match(event) {
			continue
		}
		for _, h := range eh.hints {
			if !rejectors.Has(h.plugin) {
				continue
			}
			hint := fwk.Queue
			if h.fn != nil {
				var err error
				if hint, err = h.fn(pi.Pod, oldObj, newObj); err != nil {
					hint = fwk.Queue
				}
			}
			if hint == fwk.Queue {
				return afterBackoff
			}
		}
	}
	return stay
}

// hintForInFlight looks at the events that came while pi was in flight.
func (q *PriorityQueue) hintForInFlight(pi *QueuedPodInfo) strategy {
	if pi.UnschedulablePlugins.Len() == 0 {
		return afterBackoff
	}
	f, ok := q.inFlight[pi.key]
	if !ok {
		return afterBackoff
	}
	for e := f.marker.Next(); e != nil; e = e.Next() {
		ev, ok := e.Value.(*inFlightEvent)
		if ok && q.worthRequeuing(pi, ev.event, ev.oldObj, ev.newObj) == afterBackoff {
			return afterBackoff
		}
	}
	return stay
}

// requeue puts pi where s says and returns where it went: "active",
// "backoff" or "unschedulable".
func (q *PriorityQueue) requeue(pi *QueuedPodInfo, s strategy, event string) string {
	switch {
	case s == stay:
		q.unschedulable[pi.key] = pi
	case q.backingOff(pi):
		if q.moveToBackoff(pi) {
			return "backoff"
		}
	case q.moveToActive(pi, event, false):
		return "active"
	}
	return "unschedulable"
}

// movePods moves the pods event may help out of the pool, and remembers
// the event for the pods in flight.
func (q *PriorityQueue) movePods(pods []*QueuedPodInfo, event fwk.ClusterEvent, oldObj, newObj any) {
	moved := false
	for _, pi := range pods {
		if pi.gated() && !matchesAny(pi.gatingEvents, event) {
			continue
		}
		s := q.worthRequeuing(pi, event, oldObj, newObj)
		if s == stay {
			continue
		}
		delete(q.unschedulable, pi.key)
		if where := q.requeue(pi, s, event.Label()); where != "unschedulable" {
			moved = true
		}
	}
	if len(q.inFlight) > 0 {
		q.flow.PushBack(&inFlightEvent{event: event, oldObj: oldObj, newObj: newObj})
	}
	if moved {
		q.cond.Broadcast()
	}
}

func matchesAny(registered []fwk.ClusterEvent, event fwk.ClusterEvent) bool {
	for _, r := range registered {
		if r.Match(event) {
			return true
		}
	}
	return false
}

// backoffTime returns when pi's backoff ends, rounded down to the window.
func (q *PriorityQueue) backoffTime(pi *QueuedPodInfo) time.Time {
	if q.maxBackoff == 0 {
		return time.Time{}
	}
	count := pi.UnschedulableCount
	if pi.ConsecutiveErrorsCount > 0 {
		count = pi.ConsecutiveErrorsCount
	}
	if count == 0 {
		return time.Time{}
	}
	if pi.backoffExpiration.IsZero() {
		pi.backoffExpiration = pi.Timestamp.Add(q.backoffDuration(count)).Truncate(backoffWindow)
	}
	return pi.backoffExpiration
}

// backoffDuration doubles the initial backoff per failure after the
// first, up to the maximum.
func (q *PriorityQueue) backoffDuration(failures int) time.Duration {
	shift := failures - 1
	if shift >= 62 || q.initialBackoff > q.maxBackoff>>shift {
		return q.maxBackoff
	}
	return q.initialBackoff << shift
}

func (q *PriorityQueue) backingOff(pi *QueuedPodInfo) bool {
	return !q.backoffTime(pi).Before(q.clock.Now().Truncate(backoffWindow))
}
