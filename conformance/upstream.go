package conformance

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/events"
	"k8s.io/klog/v2"
	"k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/backend/cache"
	schedframework "k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
)

// pluginMetricsSamplePercent is the share of scheduling cycles, in percent,
// for which kube-scheduler v1.36 records every plugin's execution time
// (pkg/scheduler's constant of the same name). Sampled cycles cost more, so
// Schedule samples as often.
const pluginMetricsSamplePercent = 10

// Upstream is kube-scheduler's own scheduler, built by
// scheduler.New with the default v1 profile, whose
// scheduling algorithm, (*scheduler.Scheduler).SchedulePod, places pods in
// a cluster installed straight into its cache, with the cluster's other
// objects in its fake API server. Unlike [Oracle], which
// drives upstream's framework one extension point at a time, it runs
// upstream's own code between them too: the adaptive
// percentageOfNodesToScore, the early stop once enough feasible nodes are
// found, the rotating start node, the PreFilterResult lookup by node name,
// and the scheduler's own snapshot, and the DRA manager scheduler.New
// builds. It is meant for timing, and for checking the oracle's own DRA
// manager against scheduler.New's. [Upstream.Place] and
// [Upstream.FirstFit] commit their placements ([Upstream.Bind]) and
// [Upstream.Unbind] takes them back, for timing simulations, where each
// pod sees those placed before it.
//
// Create it with [NewUpstream] and stop it with [Upstream.Close]. Its
// methods are safe for concurrent use but serialised: SchedulePod keeps
// state between calls (where the next search starts) without locking.
type Upstream struct {
	mu       sync.Mutex
	sched    *scheduler.Scheduler
	fw       schedframework.Framework
	snapshot *cache.Snapshot
	logger   klog.Logger
	// signPods is whether the scheduling queue would sign pods for
	// opportunistic batching, so whether Schedule has to as well.
	signPods bool
	// nodes and pods are what SetCluster put in the cache, so that the
	// next call can take them out again.
	nodes []*v1.Node
	pods  []*v1.Pod
	// bound are the pods Bind added since, oldest first, for Unbind (or
	// SetCluster) to take out again.
	bound []*v1.Pod
	// objects are what SetObjects put in the fake API server.
	objects *clusterObjects
	stop    context.CancelFunc
}

// NewUpstream builds kube-scheduler's scheduler over a fake clientset.
// Nodes and pods go straight into the scheduler's cache
// ([Upstream.SetCluster]), as the fake API server's watchers give up past
// 100 queued events; the objects plugins list from informers (Services
// and controllers for default spreading, storage and DRA objects) are
// written to the fake API server ([Upstream.SetObjects]), where
// scheduler.New's informers, and the DRA manager it builds over them,
// pick them up.
//
// percentageOfNodesToScore is the profile's setting: nil leaves
// kube-scheduler's default, the adaptive percentage (50% less 1% per 125
// nodes, at least 5%, and at least 100 nodes); 100 filters and scores
// every node, as [Oracle] does. The scheduler's queue and binding are
// built but never run; its event handlers see only SetObjects' objects.
// Call [Upstream.Close] to stop the goroutines NewUpstream and
// scheduler.New start.
func NewUpstream(percentageOfNodesToScore *int32) (*Upstream, error) {
	return newUpstream(percentageOfNodesToScore)
}

// newUpstream is [NewUpstream] with more of scheduler.New's options, such
// as scheduler.WithExtenders.
func newUpstream(percentageOfNodesToScore *int32, opts ...scheduler.Option) (*Upstream, error) {
	// Plugins and the framework record into registered metric vectors.
	metrics.Register()

	profile, err := defaultProfile(percentageOfNodesToScore)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	logger := klog.Background()
	ctx = klog.NewContext(ctx, logger)
	client := fake.NewSimpleClientset()
	// The pods' informer as kube-scheduler builds it; no pod is ever
	// written to the fake API server.
	informerFactory := schedulerInformerFactory(client)
	objects, err := newClusterObjects(client, informerFactory)
	if err != nil {
		cancel()
		return nil, err
	}
	// Events are only recorded for pods the scheduler fails or binds,
	// which Schedule never does.
	recorders := func(string) events.EventRecorderLogger { return &events.FakeRecorder{} }
	sched, err := scheduler.New(ctx, client, informerFactory, nil, recorders, append([]scheduler.Option{scheduler.WithProfiles(*profile)}, opts...)...)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("building upstream's scheduler: %w", err)
	}
	fw, ok := sched.Profiles[profile.SchedulerName]
	if !ok {
		cancel()
		return nil, fmt.Errorf("upstream's scheduler has no profile %q", profile.SchedulerName)
	}
	// scheduler.New hands the snapshot it schedules from (its unexported
	// nodeInfoSnapshot) to every profile's framework as its shared lister;
	// it is the only way to reach it from outside.
	snapshot, ok := fw.SnapshotSharedLister().(*cache.Snapshot)
	if !ok {
		cancel()
		return nil, fmt.Errorf("upstream's framework lists from a %T, not the scheduler's *cache.Snapshot", fw.SnapshotSharedLister())
	}
	dra := fw.SharedDRAManager()
	objects.lagging = func(want map[objectKey]runtime.Object) string {
		if lag := slicesLagging(dra, want); lag != "" {
			return lag
		}
		if lag := claimsLagging(dra, want); lag != "" {
			return lag
		}
		return resolverLagging(dra.DeviceClassResolver(), want)
	}
	// As kube-scheduler starts them, once scheduler.New has asked for
	// every informer its plugins and event handlers use.
	informerFactory.Start(ctx.Done())
	for informerType, synced := range informerFactory.WaitForCacheSync(ctx.Done()) {
		if !synced {
			cancel()
			return nil, fmt.Errorf("informer for %v did not sync", informerType)
		}
	}
	return &Upstream{
		sched:    sched,
		fw:       fw,
		snapshot: snapshot,
		logger:   logger,
		signPods: utilfeature.DefaultFeatureGate.Enabled(features.OpportunisticBatching),
		objects:  objects,
		stop:     cancel,
	}, nil
}

// Close stops the scheduler's informers, cache expiry, metric recorder
// and signal handler.
func (u *Upstream) Close() {
	u.stop()
}

// SetCluster replaces the scheduler's cluster with nodes and the pods bound
// to them (by spec.nodeName), written into its cache as its informers'
// event handlers would, then brings its snapshot up to date. Pods bound to
// no node in nodes are left out, as [Oracle.Run] leaves them out; pods
// [Upstream.Bind] added to the cluster it replaces go with it. It
// returns an error when the cache refuses a node or pod, for example two
// pods with one UID.
func (u *Upstream) SetCluster(nodes []*v1.Node, pods []*v1.Pod) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	// Pods first: the cache keeps a removed node's entry while it still
	// holds pods.
	if err := u.unbind(); err != nil {
		return err
	}
	for _, p := range u.pods {
		if err := u.sched.Cache.RemovePod(u.logger, p); err != nil {
			return fmt.Errorf("removing pod %s from upstream's cache: %w", p.Name, err)
		}
	}
	for _, n := range u.nodes {
		if err := u.sched.Cache.RemoveNode(u.logger, n); err != nil {
			return fmt.Errorf("removing node %s from upstream's cache: %w", n.Name, err)
		}
	}
	u.nodes, u.pods = nil, nil
	for _, n := range nodes {
		u.sched.Cache.AddNode(u.logger, n)
		u.nodes = append(u.nodes, n)
	}
	for _, p := range boundPods(nodes, pods) {
		if err := u.sched.Cache.AddPod(u.logger, p); err != nil {
			return fmt.Errorf("adding pod %s to upstream's cache: %w", p.Name, err)
		}
		u.pods = append(u.pods, p)
	}
	return u.sched.Cache.UpdateSnapshot(u.logger, u.snapshot)
}

// SetObjects makes objs (of [objectKinds]) the fake API server's only
// cluster objects, as [Oracle.RunScenario] does, and waits until the
// scheduler's informers and its DRA manager's claim cache hold them. One
// thing is left as a running scheduler would have it: the extended
// resources DeviceClasses back are tracked by event, so after classes
// naming the same extended resource were replaced, the mapping may differ
// from a scheduler that started with the new classes. It returns an error
// for objects of other kinds, two objects with one name, or informers
// that do not catch up within a few seconds.
func (u *Upstream) SetObjects(ctx context.Context, objs []runtime.Object) error {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.objects.install(ctx, objs)
}

// Schedule places pod in the installed cluster with upstream's
// SchedulePod, after doing what kube-scheduler does for every pod before
// it: the scheduling queue's PodInfo and, with OpportunisticBatching on
// (the default), the pod's signature; scheduleOnePod's cycle state, with
// plugin metrics sampled as often; and schedulingCycle's snapshot update,
// which finds nothing to update. The pod is neither assumed nor bound, so
// every call sees the same cluster, and pod.Spec.SchedulerName is not
// consulted (the API server would have defaulted it to the one profile's
// name).
//
// It returns upstream's *framework.FitError when no node fits, without
// running PostFilter: no preemption is attempted, so its message has no
// preemption suffix, as [OracleResult.FitErrorMessage]. It also returns
// scheduler.ErrNoNodesAvailable for an empty cluster.
func (u *Upstream) Schedule(ctx context.Context, pod *v1.Pod) (scheduler.ScheduleResult, error) {
	if pod == nil {
		return scheduler.ScheduleResult{}, errors.New("no pod to schedule")
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	_, res, err := u.cycle(ctx, pod)
	return res, err
}

// cycle is [Upstream.Schedule]'s work, returning the cycle's state too,
// for PostFilter to go on with. The caller holds u.mu.
func (u *Upstream) cycle(ctx context.Context, pod *v1.Pod) (*schedframework.CycleState, scheduler.ScheduleResult, error) {
	// What the scheduling queue builds when the pod arrives. NewPodInfo's
	// error is ignored upstream too: the pod is queued with the terms
	// that did parse.
	podInfo, _ := schedframework.NewPodInfo(pod)
	queued := &schedframework.QueuedPodInfo{PodInfo: podInfo}
	if u.signPods {
		queued.PodSignature = u.fw.SignPod(ctx, pod)
	}

	// What scheduleOnePod sets up for the cycle (the caller cancels ctx).
	logger := klog.LoggerWithValues(u.logger, "pod", klog.KObj(pod))
	ctx = klog.NewContext(ctx, logger)
	state := schedframework.NewCycleState()
	state.SetRecordPluginMetrics(rand.IntN(100) < pluginMetricsSamplePercent)
	state.Write(schedframework.PodsToActivateKey, schedframework.NewPodsToActivate())

	// schedulingCycle refreshes the snapshot before every pod; with the
	// cache unchanged since SetCluster it finds no node to copy.
	if err := u.sched.Cache.UpdateSnapshot(logger, u.snapshot); err != nil {
		return nil, scheduler.ScheduleResult{}, err
	}
	res, err := u.sched.SchedulePod(ctx, u.fw, state, queued)
	return state, res, err
}
