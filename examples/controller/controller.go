package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/strategicpatch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/events"
	"k8s.io/client-go/util/retry"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"
	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched"
	"github.com/kubesched/kubesched/cache"
	"github.com/kubesched/kubesched/filter"
	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/names"
	"github.com/kubesched/kubesched/queue"
)

// Config configures a Controller. Set exactly one of SchedulerName and
// SchedulerConfig: the first serves one scheduler name with
// kube-scheduler's default profile, the second every profile of a
// configuration.
type Config struct {
	// SchedulerName is the spec.schedulerName of the pods to schedule,
	// which the controller schedules with kube-scheduler's default
	// profile.
	SchedulerName string
	// SchedulerConfig is a KubeSchedulerConfiguration as
	// kubesched.LoadConfig returns it (defaulted and valid). The
	// controller schedules the pods whose spec.schedulerName is one of
	// its profiles' schedulerName, each with its own profile, waits
	// between attempts as its podInitialBackoffSeconds and
	// podMaxBackoffSeconds say, and for a pod's volumes to be bound as
	// its profile's VolumeBindingArgs bindTimeoutSeconds says (600
	// seconds without).
	SchedulerConfig *configv1.KubeSchedulerConfiguration
	// QueueOptions configure the scheduling queue (for example a fake
	// clock in tests). They come after those SchedulerConfig sets.
	QueueOptions []queue.Option
	// Logger receives what the controller does; nil discards it.
	Logger *slog.Logger
	// EventClient receives the scheduler's Events (events.k8s.io/v1):
	// Scheduled when a pod is bound, FailedScheduling when it fits
	// nowhere, each reported by the pod's scheduler name, as
	// kube-scheduler's. kube-scheduler sends them through a client of
	// their own, so that they do not take from the rate the scheduling
	// requests have; nil sends them through the controller's client.
	EventClient kubernetes.Interface
}

// Controller is a scheduler: informers feed a kubesched cache and
// scheduling queue, a loop pops pods, schedules them with the profile
// their spec.schedulerName names on a cache snapshot, and binds them
// through the API. When no node fits, it acts on what the profile's
// PostFilter plugins decided (preemption, ResourceClaims to release) as
// kube-scheduler does. The event handling follows kube-scheduler
// v1.37.2's.
type Controller struct {
	client  kubernetes.Interface
	log     *slog.Logger
	factory informers.SharedInformerFactory
	cache   *cache.Cache
	queue   *queue.PriorityQueue
	// profiles are the frameworks the controller schedules with, keyed
	// by the schedulerName of the pods they schedule. All share the
	// queue and its nominations, as kube-scheduler's profiles do.
	profiles map[string]*framework.Framework
	// handlers are the event handlers' registrations, which report when
	// the informers' initial lists have reached the cache and the queue.
	handlers []toolscache.ResourceEventHandlerRegistration
	// volumes binds the PersistentVolumes and claims placements need,
	// and bindTimeouts is how long each profile that binds volumes
	// waits for them, by scheduler name.
	volumes      *volumeBinder
	bindTimeouts map[string]time.Duration
	// async tracks the bindings and preemptions in progress.
	async sync.WaitGroup
	// events sends the Events of recorders, one per scheduler name.
	events    events.EventBroadcasterAdapter
	recorders map[string]events.EventRecorderLogger
	// synced is set once the informers' initial lists are handled.
	synced atomic.Bool
	// metrics count the scheduling attempts.
	metrics metrics
}

// Synced reports whether Run has the cluster's state and is scheduling.
func (c *Controller) Synced() bool { return c.synced.Load() }

// cachedPods lists, node by node, the pods the cache holds (bound and
// assumed), as namespace/name sorted: what /debug/cache serves, to
// compare with the API server.
func (c *Controller) cachedPods() map[string][]string {
	out := map[string][]string{}
	for _, ni := range c.cache.Snapshot().Nodes() {
		pods := []string{}
		for _, pi := range ni.Pods() {
			pods = append(pods, key(pi.Pod))
		}
		slices.Sort(pods)
		out[ni.Name()] = pods
	}
	return out
}

// pending counts the pods in each of the queue's sub-queues.
func (c *Controller) pending() map[string]int {
	return map[string]int{
		"active":        len(c.queue.PodsInActiveQ()),
		"backoff":       len(c.queue.PodsInBackoffQ()),
		"unschedulable": len(c.queue.UnschedulablePods()),
	}
}

// New builds a controller on client. Call Run to start it. It returns an
// error when cfg sets neither or both of SchedulerName and
// SchedulerConfig, and kubesched's error when a profile cannot be built.
func New(client kubernetes.Interface, cfg Config) (*Controller, error) {
	if err := cfg.check(); err != nil {
		return nil, err
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	factory := informers.NewSharedInformerFactory(client, 0)
	c, err := cache.New()
	if err != nil {
		return nil, err
	}
	volumes := newVolumeBinder(client, factory, logger)
	listers := newListers(factory, c, volumes)
	// The default profile's registrations, hints and PreEnqueue plugins.
	qopts := append(kubesched.QueueOptions(listers), backoffOptions(cfg.SchedulerConfig)...)
	q, err := queue.New(append(qopts, cfg.QueueOptions...)...)
	if err != nil {
		return nil, err
	}
	profiles, err := cfg.frameworks(
		framework.WithListers(listers),
		// Pods that preemption nominated keep their room. The queue's
		// Nominations is a NominationUpdater: the framework records the
		// nominations a preemption makes and clears there itself.
		framework.WithNominator(q.Nominations()),
	)
	if err != nil {
		return nil, err
	}
	eventClient := cfg.EventClient
	if eventClient == nil {
		eventClient = client
	}
	broadcaster := events.NewEventBroadcasterAdapter(eventClient)
	recorders := make(map[string]events.EventRecorderLogger, len(profiles))
	for name := range profiles {
		recorders[name] = broadcaster.NewRecorder(name)
	}
	ctrl := &Controller{
		client: client, log: logger, factory: factory, cache: c, queue: q, profiles: profiles,
		volumes: volumes, bindTimeouts: bindTimeouts(profiles, cfg.SchedulerConfig),
		events: broadcaster, recorders: recorders,
	}
	if err := ctrl.addEventHandlers(); err != nil {
		return nil, err
	}
	return ctrl, nil
}

// check reports a Config that names no scheduler, or names them twice.
func (cfg Config) check() error {
	switch {
	case cfg.SchedulerName == "" && cfg.SchedulerConfig == nil:
		return errors.New("controller: no scheduler name: set Config.SchedulerName, or Config.SchedulerConfig to serve its profiles")
	case cfg.SchedulerName != "" && cfg.SchedulerConfig != nil:
		return fmt.Errorf("controller: Config.SchedulerName %q and Config.SchedulerConfig both name schedulers: "+
			"leave SchedulerName empty, the configuration's profiles name them", cfg.SchedulerName)
	}
	return nil
}

// frameworks builds the profiles cfg asks for, with opts: its
// configuration's, or the default profile named SchedulerName.
func (cfg Config) frameworks(opts ...framework.Option) (map[string]*framework.Framework, error) {
	if cfg.SchedulerConfig != nil {
		profiles, err := kubesched.FrameworksFromConfig(cfg.SchedulerConfig, opts...)
		if err != nil {
			return nil, fmt.Errorf("controller: %w", err)
		}
		return profiles, nil
	}
	fw, err := kubesched.DefaultFramework(opts...)
	if err != nil {
		return nil, err
	}
	return map[string]*framework.Framework{cfg.SchedulerName: fw}, nil
}

// backoffOptions are the queue options sc's podInitialBackoffSeconds and
// podMaxBackoffSeconds give, none for a nil sc or unset fields.
func backoffOptions(sc *configv1.KubeSchedulerConfiguration) []queue.Option {
	if sc == nil {
		return nil
	}
	var opts []queue.Option
	if s := sc.PodInitialBackoffSeconds; s != nil {
		opts = append(opts, queue.WithPodInitialBackoffDuration(time.Duration(*s)*time.Second))
	}
	if s := sc.PodMaxBackoffSeconds; s != nil {
		opts = append(opts, queue.WithPodMaxBackoffDuration(time.Duration(*s)*time.Second))
	}
	return opts
}

// newListers returns the listers of factory's informers that the queue
// and the plugins read.
func newListers(factory informers.SharedInformerFactory, c *cache.Cache, volumes *volumeBinder) fwk.Listers {
	storage := factory.Storage().V1()
	return fwk.Listers{
		// DynamicResources: claims as the cache holds them (with those of
		// assumed pods), slices, classes and taint rules as the informers
		// have them.
		ResourceClaims:         c.ResourceClaims(),
		ResourceSlices:         factory.Resource().V1().ResourceSlices().Lister(),
		DeviceClasses:          factory.Resource().V1().DeviceClasses().Lister(),
		DeviceTaintRules:       factory.Resource().V1().DeviceTaintRules().Lister(),
		Namespaces:             factory.Core().V1().Namespaces().Lister(),
		Services:               factory.Core().V1().Services().Lister(),
		ReplicaSets:            factory.Apps().V1().ReplicaSets().Lister(),
		StatefulSets:           factory.Apps().V1().StatefulSets().Lister(),
		ReplicationControllers: factory.Core().V1().ReplicationControllers().Lister(),
		// VolumeBinding: volumes and claims with those of assumed pods
		// laid over the informers'. The other volume plugins read them
		// too, and nothing they read differs: an assumed object differs
		// only in a volume's claimRef and a claim's selected node.
		PersistentVolumeClaims: volumes.pvcs,
		PersistentVolumes:      volumes.pvs,
		StorageClasses:         storage.StorageClasses().Lister(),
		CSINodes:               storage.CSINodes().Lister(),
		CSIDrivers:             storage.CSIDrivers().Lister(),
		CSIStorageCapacities:   storage.CSIStorageCapacities().Lister(),
		VolumeAttachments:      storage.VolumeAttachments().Lister(),
		// DefaultPreemption prefers victims whose eviction no budget forbids.
		PodDisruptionBudgets: factory.Policy().V1().PodDisruptionBudgets().Lister(),
	}
}

// schedulerNames returns the spec.schedulerName values the controller
// serves, sorted.
func (c *Controller) schedulerNames() []string { return slices.Sorted(maps.Keys(c.profiles)) }

// Run starts the informers, waits for them to sync, and schedules pods
// until ctx is done; it then waits for the bindings and preemptions in
// progress.
func (c *Controller) Run(ctx context.Context) error {
	c.events.StartRecordingToSink(ctx.Done())
	defer c.events.Shutdown()
	c.factory.Start(ctx.Done())
	defer c.factory.Shutdown()
	for informer, ok := range c.factory.WaitForCacheSync(ctx.Done()) {
		if !ok {
			return fmt.Errorf("controller: informer for %v did not sync", informer)
		}
	}
	// A synced informer may not have handed its initial list to the
	// handlers yet; scheduling before they have would place pods on nodes
	// whose pods the cache has not seen. kube-scheduler waits for its
	// handlers too.
	synced := make([]toolscache.InformerSynced, len(c.handlers))
	for i, h := range c.handlers {
		synced[i] = h.HasSynced
	}
	if !toolscache.WaitForCacheSync(ctx.Done(), synced...) {
		return errors.New("controller: event handlers did not sync")
	}
	c.synced.Store(true)
	defer c.synced.Store(false)
	go c.queue.Run(ctx)
	stop := context.AfterFunc(ctx, c.queue.Close)
	defer stop()
	c.log.Info("scheduling", "schedulerNames", c.schedulerNames())
	for c.scheduleOne(ctx) {
	}
	c.async.Wait()
	return nil
}

// scheduleOne schedules the next pod and starts binding it. It returns
// false once the queue is closed.
func (c *Controller) scheduleOne(ctx context.Context) bool {
	pi, err := c.queue.Pop(ctx)
	if err != nil {
		return false
	}
	pod := pi.Pod
	if assumed, _ := c.cache.IsAssumedPod(pod); pod.DeletionTimestamp != nil || assumed {
		c.queue.Done(pod)
		return true
	}
	fw, ok := c.profiles[pod.Spec.SchedulerName]
	if !ok {
		// The event handlers queue only the pods of the profiles, and
		// spec.schedulerName is immutable.
		c.log.Error("dropping a queued pod no profile serves", "pod", key(pod), "schedulerName", pod.Spec.SchedulerName)
		c.queue.Done(pod)
		return true
	}
	start := time.Now()
	res, err := fw.ScheduleSnapshot(ctx, pod, c.cache.Snapshot())
	var fitErr *framework.FitError
	switch {
	case err == nil:
		c.metrics.observe(pod.Spec.SchedulerName, "scheduled", time.Since(start))
	case errors.As(err, &fitErr):
		c.metrics.observe(pod.Spec.SchedulerName, "unschedulable", time.Since(start))
	default:
		c.metrics.observe(pod.Spec.SchedulerName, "error", time.Since(start))
	}
	if err != nil {
		c.failed(ctx, pi, err)
		return true
	}
	// Assume the placement so that the next cycles see the node's room
	// taken while the binding is on its way.
	assumed := pod.DeepCopy()
	assumed.Spec.NodeName = res.SuggestedHost
	// Reserve, in the profile's order: the volumes the placement binds
	// and the claims it provisions are assumed in the listers, and the
	// ResourceClaims it allocated and reserved count as the cache's,
	// until the informers report them written. The claim for DRA-backed
	// extended resources counts under the name the placement gave it
	// until PreBind has created it and the informer reports it.
	var volumes *podVolumes
	if timeout, ok := c.bindTimeouts[pod.Spec.SchedulerName]; ok {
		if volumes, err = c.volumes.assume(assumed, res, timeout); err != nil {
			c.failed(ctx, pi, fmt.Errorf("running Reserve plugin %q: %w", names.VolumeBinding, err))
			return true
		}
	}
	if err := c.cache.AssumePod(assumed, filter.Claims(res)...); err != nil {
		c.volumes.revert(volumes)
		c.failed(ctx, pi, err)
		return true
	}
	c.queue.Nominations().Delete(pod)
	claims, ext := filter.Claims(res), filter.ExtendedResourceClaimStatus(res)
	c.async.Go(func() { c.bind(ctx, fw, pi, assumed, claims, ext, volumes) })
	return true
}

// bind binds an assumed pod with the framework that scheduled it, after
// what the PreBind plugins write (volumes, ResourceClaims), or undoes
// the assumption if that fails, as kube-scheduler's binding cycle does.
// claims and ext are the placement's filter.Claims and
// filter.ExtendedResourceClaimStatus.
func (c *Controller) bind(ctx context.Context, fw *framework.Framework, pi *queue.QueuedPodInfo, assumed *v1.Pod, claims []*resourceapi.ResourceClaim, ext *v1.PodExtendedResourceClaimStatus, volumes *podVolumes) {
	// VolumeBinding has PreBind work when a claim is not bound yet,
	// DynamicResources for every pod with ResourceClaims.
	current := pi.Pod // as the API server has it
	if volumes != nil || len(claims) > 0 {
		current = c.nominateForBinding(ctx, pi.Pod, assumed.Spec.NodeName)
	}
	written, err := c.preBind(ctx, assumed, current, claims, ext, volumes)
	if err == nil {
		err = c.bindPod(ctx, fw, assumed)
	}
	if err != nil {
		// Unreserve, then forget the pod.
		c.volumes.revert(volumes)
		c.unreserveClaims(ctx, assumed, written)
		if err := c.cache.ForgetPod(assumed); err != nil {
			// The informer has reported the pod bound by someone else
			// (ours was refused), and the cache holds it as bound: that
			// event, not this failure, changed the cluster.
			// kube-scheduler moves no pod when ForgetPod fails either.
			c.log.Error("forgetting the assumed pod", "pod", key(assumed), "err", err)
		} else {
			// The room it held is free again.
			c.queue.MoveAllToActiveOrBackoffQueue(fwk.EventAssignedPodDelete, assumed, nil, nil)
		}
		c.failedFrom(ctx, pi, current, err)
		return
	}
	if err := c.cache.FinishBinding(assumed); err != nil {
		c.log.Error("finishing the binding", "pod", key(assumed), "err", err)
	}
	c.queue.Done(pi.Pod)
	c.log.Info("bound", "pod", key(assumed), "node", assumed.Spec.NodeName)
	c.recorders[assumed.Spec.SchedulerName].Eventf(assumed, nil, v1.EventTypeNormal, "Scheduled", "Binding",
		"Successfully assigned %v/%v to %v", assumed.Namespace, assumed.Name, assumed.Spec.NodeName)
}

// preBind runs what the PreBind plugins do before pod is bound:
// VolumeBinding's writes and wait for volumes, DynamicResources' for
// claims (bindClaims, which patches current, the pod as the API server
// has it). kube-scheduler v1.37.2 runs the two side by side, since both
// allow it in PreBindPreFlight, and the first to fail stops the other;
// its error, which preBind returns, says which plugin failed. written
// are the claims written for the pod, to unreserve if it is not bound.
func (c *Controller) preBind(ctx context.Context, pod, current *v1.Pod, claims []*resourceapi.ResourceClaim, ext *v1.PodExtendedResourceClaimStatus, volumes *podVolumes) (written claimWrites, err error) {
	g, ctx := errgroup.WithContext(ctx)
	if volumes != nil {
		g.Go(func() error {
			if err := c.volumes.bind(ctx, pod, volumes); err != nil {
				return fmt.Errorf("running PreBind plugin %q: %w", names.VolumeBinding, err)
			}
			return nil
		})
	}
	if len(claims) > 0 {
		g.Go(func() error {
			if err := c.bindClaims(ctx, current, claims, ext, &written); err != nil {
				return fmt.Errorf("running PreBind plugin %q: %w", names.DynamicResources, err)
			}
			return nil
		})
	}
	err = g.Wait()
	return written, err
}

// nominateForBinding sets pod's status.nominatedNodeName to node before
// its volumes and claims are written, as kube-scheduler does with
// NominatedNodeNameForExpectation (beta, on by default in v1.37.2) for a
// pod whose PreBind has work to do (PreBindPreFlight): VolumeBinding's
// has while one of its PersistentVolumeClaims is unbound,
// DynamicResources' for every pod with ResourceClaims, the one created
// for its DRA-backed extended resources included. (kube-scheduler also
// nominates a pod asking for an extended resource that a DeviceClass
// provides when its node offers the resource itself and needs no claim;
// the placement does not tell the controller of such a pod.) Other
// components, such as cluster-autoscaler, then see where the pod is
// going while the writes and the volumes' binding take their time. A
// failure is logged and binding goes on, as in kube-scheduler. It
// returns the pod as the API server then has it: nominated, or pod
// itself when it was nominated there already or the patch failed.
func (c *Controller) nominateForBinding(ctx context.Context, pod *v1.Pod, node string) *v1.Pod {
	if pod.Status.NominatedNodeName == node {
		return pod
	}
	if err := c.patchStatus(ctx, pod, func(s *v1.PodStatus) bool {
		s.NominatedNodeName = node
		return true
	}); err != nil {
		c.log.Error("nominating the node a pod is being bound to", "pod", key(pod), "node", node, "err", err)
		return pod
	}
	nominated := pod.DeepCopy()
	nominated.Status.NominatedNodeName = node
	return nominated
}

// bindPod binds pod to its spec.nodeName as kube-scheduler does: through
// the profile's binding extender (a configuration's extender with a
// bindVerb) when it is interested in pod, else by creating the pod's
// Binding, as DefaultBinder does. Its error is kube-scheduler's: the
// extender's own, or DefaultBinder's with the plugin named.
func (c *Controller) bindPod(ctx context.Context, fw *framework.Framework, pod *v1.Pod) error {
	if took, err := fw.BindWithExtenders(ctx, pod, pod.Spec.NodeName); took || err != nil {
		return err
	}
	binding := &v1.Binding{
		ObjectMeta: metav1.ObjectMeta{Namespace: pod.Namespace, Name: pod.Name, UID: pod.UID},
		Target:     v1.ObjectReference{Kind: "Node", Name: pod.Spec.NodeName},
	}
	if err := c.client.CoreV1().Pods(pod.Namespace).Bind(ctx, binding, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("running Bind plugin %q: %w", names.DefaultBinder, err)
	}
	return nil
}

// failed handles a pod that could not be scheduled as kube-scheduler's
// handleSchedulingFailure does: it acts on what the PostFilter plugins
// decided, puts the pod back in the queue with the plugins that rejected
// it, and records why on the pod, with the nomination the cycle leaves:
// a preemption's node, none after an error or when preemption gave up,
// otherwise the one the pod had.
func (c *Controller) failed(ctx context.Context, pi *queue.QueuedPodInfo, err error) {
	c.failedFrom(ctx, pi, pi.Pod, err)
}

// failedFrom is failed for a pod whose status the attempt changed (a
// binding nominates the pod to its node): current is the pod as the API
// server has it since, the status the patch starts from.
func (c *Controller) failedFrom(ctx context.Context, pi *queue.QueuedPodInfo, current *v1.Pod, err error) {
	// The queue owns pi once it is requeued; read the pod from here on.
	pod := pi.Pod
	reason := v1.PodReasonSchedulerError
	pi.UnschedulablePlugins = sets.New[string]()
	// A cycle that failed for another reason than no fit clears the
	// nomination, as kube-scheduler does; the framework, which updates
	// the nominator only after PostFilter, leaves that to us.
	nominated, override := "", true
	var victims []*v1.Pod
	var fitErr *framework.FitError
	if errors.As(err, &fitErr) {
		reason = v1.PodReasonUnschedulable
		pi.UnschedulablePlugins = fitErr.Diagnosis.UnschedulablePlugins.Clone()
		nominated, override = nominationAfter(fitErr)
		c.releaseClaims(ctx, fitErr)
		victims = victimsToDelete(fitErr.Preemption)
	} else {
		c.queue.Nominations().Delete(pod)
	}
	c.log.Info("not scheduled", "pod", key(pod), "reason", reason, "err", err)
	if len(victims) > 0 {
		// As with kube-scheduler's asynchronous preemption, the evictions
		// do not hold up the loop, and the pod is not tried again until
		// they are done: it stays in flight, so the queue remembers the
		// deletions it sees meanwhile.
		c.async.Go(func() {
			if err := c.preempt(ctx, pod, fitErr.Preemption.NominationsToClear, victims); err != nil {
				c.log.Error("preempting", "pod", key(pod), "node", fitErr.Preemption.NominatedNodeName, "err", err)
				// kube-scheduler activates a preemptor whose evictions
				// failed; an error's backoff is the nearest the queue has.
				pi.UnschedulablePlugins = sets.New[string]()
			}
			c.requeue(pi)
		})
	} else {
		c.requeue(pi)
	}
	if rec := c.recorders[pod.Spec.SchedulerName]; rec != nil {
		rec.Eventf(pod, nil, v1.EventTypeWarning, "FailedScheduling", "Scheduling", "%s", truncateNote(err.Error()))
	}
	cond := v1.PodCondition{Type: v1.PodScheduled, Status: v1.ConditionFalse, Reason: reason, Message: err.Error()}
	if err := c.patchStatus(ctx, current, func(s *v1.PodStatus) bool {
		changed := setCondition(s, pod.Generation, cond)
		if override && s.NominatedNodeName != nominated {
			s.NominatedNodeName = nominated
			changed = true
		}
		return changed
	}); err != nil {
		c.log.Error("updating the PodScheduled condition and the nomination", "pod", key(pod), "err", err)
	}
}

// truncateNote cuts a message to the length an Event's note may have,
// ending it with " ..." as kube-scheduler does.
func truncateNote(msg string) string {
	// The API's limit on an Event's note (k8s.io/kubernetes's
	// NoteLengthLimit).
	const limit, suffix = 1024, " ..."
	if len(msg) <= limit {
		return msg
	}
	return msg[:limit-len(suffix)] + suffix
}

// requeue gives a failed pod back to the queue.
func (c *Controller) requeue(pi *queue.QueuedPodInfo) {
	pod := pi.Pod
	if err := c.queue.AddUnschedulableIfNotPresent(pi); err != nil {
		c.log.Error("requeueing", "pod", key(pod), "err", err)
	}
}

// nominationAfter returns the status.nominatedNodeName a cycle that
// found no fit writes, and whether it writes one: the preemption's node,
// "" when kube-scheduler clears it, nothing otherwise.
func nominationAfter(fe *framework.FitError) (node string, override bool) {
	if fe.Preemption != nil {
		return fe.Preemption.NominatedNodeName, true
	}
	return "", fe.ClearNomination
}

// setCondition sets cond in s as kube-scheduler's UpdatePodCondition
// does, with observedGeneration set to the pod's generation: the
// transition time changes only with the condition's status, and it
// reports a change only in status, reason, message or probe time.
func setCondition(s *v1.PodStatus, generation int64, cond v1.PodCondition) bool {
	cond.ObservedGeneration = generation
	cond.LastTransitionTime = metav1.Now()
	for i := range s.Conditions {
		old := &s.Conditions[i]
		if old.Type != cond.Type {
			continue
		}
		if old.Status == cond.Status {
			cond.LastTransitionTime = old.LastTransitionTime
		}
		same := old.Status == cond.Status && old.Reason == cond.Reason && old.Message == cond.Message &&
			old.LastProbeTime.Equal(&cond.LastProbeTime)
		*old = cond
		return !same
	}
	s.Conditions = append(s.Conditions, cond)
	return true
}

// patchStatus applies update to a copy of pod's status and sends the
// difference as a strategic merge patch to the status subresource, as
// kube-scheduler's PatchPodStatus does, retrying transient errors. It
// sends nothing when update reports no change.
func (c *Controller) patchStatus(ctx context.Context, pod *v1.Pod, update func(*v1.PodStatus) bool) error {
	status := pod.Status.DeepCopy()
	if !update(status) {
		return nil
	}
	oldData, err := json.Marshal(v1.Pod{Status: pod.Status})
	if err != nil {
		return err
	}
	newData, err := json.Marshal(v1.Pod{Status: *status})
	if err != nil {
		return err
	}
	patch, err := strategicpatch.CreateTwoWayMergePatch(oldData, newData, &v1.Pod{})
	if err != nil {
		return fmt.Errorf("patch for pod %s: %w", key(pod), err)
	}
	if string(patch) == "{}" {
		return nil
	}
	return retry.OnError(retry.DefaultBackoff, retriable, func() error {
		_, err := c.client.CoreV1().Pods(pod.Namespace).Patch(ctx, pod.Name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
		return err
	})
}

// retriable are the errors kube-scheduler retries a status patch after.
func retriable(err error) bool {
	return apierrors.IsInternalError(err) || apierrors.IsServiceUnavailable(err) ||
		apierrors.IsConflict(err) || utilnet.IsConnectionRefused(err)
}

func key(pod *v1.Pod) string { return pod.Namespace + "/" + pod.Name }

func assigned(pod *v1.Pod) bool { return pod.Spec.NodeName != "" }

// responsible reports whether one of the controller's profiles schedules
// pod.
func (c *Controller) responsible(pod *v1.Pod) bool {
	_, ok := c.profiles[pod.Spec.SchedulerName]
	return ok
}

// addEventHandlers wires the informers to the cache and the queue.
func (c *Controller) addEventHandlers() error {
	handlers := []struct {
		informer toolscache.SharedIndexInformer
		funcs    toolscache.ResourceEventHandlerFuncs
	}{
		{c.factory.Core().V1().Pods().Informer(), toolscache.ResourceEventHandlerFuncs{AddFunc: c.addPod, UpdateFunc: c.updatePod, DeleteFunc: c.deletePod}},
		{c.factory.Core().V1().Nodes().Informer(), toolscache.ResourceEventHandlerFuncs{AddFunc: c.addNode, UpdateFunc: c.updateNode, DeleteFunc: c.deleteNode}},
		// Changes to storage objects may help pods the volume plugins
		// rejected; the queue moves only those.
		{c.factory.Core().V1().PersistentVolumes().Informer(), c.moveOn(fwk.PersistentVolume)},
		{c.factory.Core().V1().PersistentVolumeClaims().Informer(), c.moveOn(fwk.PersistentVolumeClaim)},
		// What was assumed about them expires once the informers have
		// a newer version.
		{c.factory.Core().V1().PersistentVolumes().Informer(), c.volumes.pvs.handler()},
		{c.factory.Core().V1().PersistentVolumeClaims().Informer(), c.volumes.pvcs.handler()},
		{c.factory.Storage().V1().StorageClasses().Informer(), c.moveOn(fwk.StorageClass)},
		{c.factory.Storage().V1().CSINodes().Informer(), c.moveOn(fwk.CSINode)},
		{c.factory.Storage().V1().CSIDrivers().Informer(), c.moveOn(fwk.CSIDriver)},
		{c.factory.Storage().V1().CSIStorageCapacities().Informer(), c.moveOn(fwk.CSIStorageCapacity)},
		{c.factory.Storage().V1().VolumeAttachments().Informer(), c.moveOn(fwk.VolumeAttachment)},
		// DRA: claims go to the cache, which overlays assumed ones.
		{c.factory.Resource().V1().ResourceClaims().Informer(), toolscache.ResourceEventHandlerFuncs{AddFunc: c.claimAdded, UpdateFunc: c.claimUpdated, DeleteFunc: c.claimDeleted}},
		{c.factory.Resource().V1().ResourceSlices().Informer(), c.moveOn(fwk.ResourceSlice)},
		{c.factory.Resource().V1().DeviceClasses().Informer(), c.moveOn(fwk.DeviceClass)},
		{c.factory.Resource().V1().DeviceTaintRules().Informer(), c.taintRuleChanged()},
	}
	for _, h := range handlers {
		reg, err := h.informer.AddEventHandler(h.funcs)
		if err != nil {
			return err
		}
		c.handlers = append(c.handlers, reg)
	}
	return nil
}

// moveOn turns every event about resource into a queue event, whose
// objects the queue's hints read.
func (c *Controller) moveOn(resource fwk.EventResource) toolscache.ResourceEventHandlerFuncs {
	move := func(a fwk.ActionType, oldObj, newObj any) {
		c.queue.MoveAllToActiveOrBackoffQueue(fwk.ClusterEvent{Resource: resource, ActionType: a}, oldObj, newObj, nil)
	}
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { move(fwk.Add, nil, obj) },
		UpdateFunc: func(oldObj, newObj any) { move(fwk.Update, oldObj, newObj) },
		DeleteFunc: func(obj any) {
			// The hints read the object itself, as kube-scheduler's do
			// after unwrapping a missed deletion's tombstone.
			if t, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			move(fwk.Delete, obj, nil)
		},
	}
}

// taintRuleChanged reports a DeviceTaintRule's change as kube-scheduler's
// ResourceSlice tracker does, as an update of the slices it taints: no
// plugin registers DeviceTaintRule events. A change of the rule's status
// alone taints nothing anew.
func (c *Controller) taintRuleChanged() toolscache.ResourceEventHandlerFuncs {
	move := func() {
		c.queue.MoveAllToActiveOrBackoffQueue(fwk.ClusterEvent{Resource: fwk.ResourceSlice, ActionType: fwk.Update}, nil, nil, nil)
	}
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(any) { move() },
		UpdateFunc: func(oldObj, newObj any) {
			old, ok1 := oldObj.(*resourceapi.DeviceTaintRule)
			rule, ok2 := newObj.(*resourceapi.DeviceTaintRule)
			if ok1 && ok2 && apiequality.Semantic.DeepEqual(old.Spec, rule.Spec) {
				return
			}
			move()
		},
		DeleteFunc: func(any) { move() },
	}
}

func (c *Controller) claimAdded(obj any) {
	claim, ok := obj.(*resourceapi.ResourceClaim)
	if !ok {
		return
	}
	if err := c.cache.AddClaim(claim); err != nil {
		c.log.Error("adding a ResourceClaim", "claim", claim.Namespace+"/"+claim.Name, "err", err)
	}
	c.queue.MoveAllToActiveOrBackoffQueue(fwk.ClusterEvent{Resource: fwk.ResourceClaim, ActionType: fwk.Add}, nil, claim, nil)
}

func (c *Controller) claimUpdated(oldObj, newObj any) {
	claim, ok := newObj.(*resourceapi.ResourceClaim)
	if !ok {
		return
	}
	if err := c.cache.UpdateClaim(claim); err != nil {
		c.log.Error("updating a ResourceClaim", "claim", claim.Namespace+"/"+claim.Name, "err", err)
	}
	c.queue.MoveAllToActiveOrBackoffQueue(fwk.ClusterEvent{Resource: fwk.ResourceClaim, ActionType: fwk.Update}, oldObj, claim, nil)
}

func (c *Controller) claimDeleted(obj any) {
	if err := c.cache.RemoveClaim(obj); err != nil {
		c.log.Error("removing a ResourceClaim", "err", err)
	}
	c.queue.MoveAllToActiveOrBackoffQueue(fwk.ClusterEvent{Resource: fwk.ResourceClaim, ActionType: fwk.Delete}, obj, nil, nil)
}

func (c *Controller) addNode(obj any) {
	node, ok := obj.(*v1.Node)
	if !ok {
		return
	}
	if _, err := c.cache.AddNode(node); err != nil {
		c.log.Error("adding a node", "node", node.Name, "err", err)
	}
	c.queue.MoveAllToActiveOrBackoffQueue(fwk.EventNodeAdd, nil, node, nil)
}

func (c *Controller) updateNode(oldObj, newObj any) {
	oldNode, ok1 := oldObj.(*v1.Node)
	newNode, ok2 := newObj.(*v1.Node)
	if !ok1 || !ok2 {
		return
	}
	if _, err := c.cache.UpdateNode(newNode); err != nil {
		c.log.Error("updating a node", "node", newNode.Name, "err", err)
	}
	// A heartbeat raises no event: only changes that may help pods do.
	for _, event := range queue.NodeSchedulingPropertiesChange(newNode, oldNode) {
		c.queue.MoveAllToActiveOrBackoffQueue(event, oldNode, newNode, nil)
	}
}

func (c *Controller) deleteNode(obj any) {
	node, err := cache.NodeOf(obj)
	if err != nil {
		c.log.Error("deleting a node", "err", err)
		return
	}
	c.queue.MoveAllToActiveOrBackoffQueue(fwk.EventNodeDelete, node, nil, nil)
	if err := c.cache.RemoveNode(obj); err != nil {
		c.log.Error("removing a node", "node", node.Name, "err", err)
	}
}

func (c *Controller) addPod(obj any) {
	pod, ok := obj.(*v1.Pod)
	switch {
	case !ok:
	case assigned(pod):
		c.addAssignedPod(pod)
	case c.responsible(pod):
		if err := c.queue.Add(pod); err != nil {
			c.log.Error("queueing a pod", "pod", key(pod), "err", err)
		}
	}
}

func (c *Controller) addAssignedPod(pod *v1.Pod) {
	if err := c.cache.AddPod(pod); err != nil {
		c.log.Error("adding a bound pod", "pod", key(pod), "err", err)
	}
	c.queue.MoveAllToActiveOrBackoffQueue(fwk.EventAssignedPodAdd, nil, pod, nil)
}

func (c *Controller) updatePod(oldObj, newObj any) {
	oldPod, ok1 := oldObj.(*v1.Pod)
	newPod, ok2 := newObj.(*v1.Pod)
	switch {
	case !ok1 || !ok2:
	case assigned(oldPod):
		if err := c.cache.UpdatePod(newPod); err != nil {
			c.log.Error("updating a bound pod", "pod", key(newPod), "err", err)
		}
		for _, event := range queue.PodSchedulingPropertiesChange(newPod, oldPod) {
			c.queue.MoveAllToActiveOrBackoffQueue(event, oldPod, newPod, nil)
		}
	case assigned(newPod):
		// Bound: by us (the cache confirms the assumed pod) or by someone else.
		c.addAssignedPod(newPod)
		if c.responsible(oldPod) {
			c.queue.Delete(oldPod)
		}
	case c.responsible(oldPod):
		if oldPod.ResourceVersion == newPod.ResourceVersion {
			return // a resync
		}
		if assumed, _ := c.cache.IsAssumedPod(newPod); assumed {
			if newPod.DeletionTimestamp != nil && oldPod.DeletionTimestamp == nil {
				c.forgetAssumed(newPod)
			}
			return
		}
		if err := c.queue.Update(oldPod, newPod); err != nil {
			c.log.Error("updating a pending pod", "pod", key(newPod), "err", err)
		}
		if nominated := oldPod.Status.NominatedNodeName; nominated != "" && nominated != newPod.Status.NominatedNodeName {
			// The room it held on its nominated node is free for pods
			// that yielded to it.
			c.queue.MoveAllToActiveOrBackoffQueue(fwk.EventAssignedPodDelete, oldPod, nil, notAbove(oldPod))
		}
	}
}

func (c *Controller) deletePod(obj any) {
	pod, err := cache.PodOf(obj)
	if err != nil {
		c.log.Error("deleting a pod", "err", err)
		return
	}
	_, known := obj.(*v1.Pod)
	// A tombstone may be stale about the binding: try both.
	if !known || assigned(pod) {
		if err := c.cache.RemovePod(obj); err != nil && known {
			c.log.Error("removing a bound pod", "pod", key(pod), "err", err)
		}
		c.queue.MoveAllToActiveOrBackoffQueue(fwk.EventAssignedPodDelete, pod, nil, nil)
		if known {
			return
		}
	}
	if !c.responsible(pod) {
		return
	}
	c.queue.Delete(pod)
	if assumed, _ := c.cache.IsAssumedPod(pod); assumed {
		c.forgetAssumed(pod)
	} else if pod.Status.NominatedNodeName != "" {
		c.queue.MoveAllToActiveOrBackoffQueue(fwk.EventAssignedPodDelete, pod, nil, notAbove(pod))
	}
}

// forgetAssumed drops an assumed pod being deleted, freeing its room.
func (c *Controller) forgetAssumed(pod *v1.Pod) {
	cached, err := c.cache.GetPod(pod)
	if err != nil {
		return // already bound or forgotten
	}
	if err := c.cache.ForgetPod(cached); err != nil {
		c.log.Error("forgetting a deleted assumed pod", "pod", key(pod), "err", err)
	}
	c.queue.MoveAllToActiveOrBackoffQueue(fwk.EventAssignedPodDelete, cached, nil, nil)
}

// notAbove admits the pods of priority at most pod's: those that yielded
// to its nomination.
func notAbove(pod *v1.Pod) queue.PreEnqueueCheck {
	priority := corev1helpers.PodPriority(pod)
	return func(p *v1.Pod) bool { return corev1helpers.PodPriority(p) <= priority }
}
