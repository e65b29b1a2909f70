// Package queue is kube-scheduler's scheduling queue, for a scheduling
// loop built on kubesched: which pending pod to try next, how long a pod
// that failed waits before it is tried again, and which cluster events
// are worth trying it again for.
//
// A [PriorityQueue] has three parts: the active queue (highest priority
// first, then oldest), the backoff queue (pods that failed recently,
// waiting 1s doubling up to 10s), and the unschedulable pool (pods that
// plugins rejected, waiting for an event that could help, at most 5
// minutes). Informer events feed it: pending pods with
// [PriorityQueue.Add], [PriorityQueue.Update] and [PriorityQueue.Delete];
// everything else as a [fwk.ClusterEvent] to
// [PriorityQueue.MoveAllToActiveOrBackoffQueue], which moves only the pods
// rejected by a plugin registered for that event ([WithPluginEvents]) and
// whose queueing hint says the event may help them. The registrations and
// hints are the plugins' own ([fwk.EnqueueExtensions]); the queue
// knows no plugin. kubesched.Release.QueueOptions gives a queue a
// kube-scheduler release's: its features, its default plugins'
// registrations and hints (checked against upstream's in the conformance
// module: a node label change does not retry a pod rejected for cpu, a
// node with room does) and its PreEnqueue plugins.
// [NodeUpdateEvents] and [PodUpdateEvents] turn an update into its
// events, so that a node's heartbeat moves nothing. No plugin registers
// DeviceTaintRule events, as in kube-scheduler, whose ResourceSlice
// tracker reports a rule added, changed or deleted as an update of each
// ResourceSlice whose devices' taints it changes: report it as a
// {[fwk.ResourceSlice], [fwk.Update]} event (DynamicResources registers those
// without a hint, so the objects given do not matter).
//
// A queue behaves as the newest supported release (v1.37.2), whose
// events tell pods apart by role (an AssignedPod, the TargetPod updated
// through [PriorityQueue.Update], another UnscheduledPod); [WithFeatures]
// makes it behave as an older one, whose plugins register Pod events for
// every role. [NodeSchedulingPropertiesChange] and
// [PodSchedulingPropertiesChange] are the newest release's.
//
// The loop: [PriorityQueue.Pop] a pod, schedule it on a cache snapshot;
// on success [PriorityQueue.Done], on failure set the rejecting plugins
// and [PriorityQueue.AddUnschedulableIfNotPresent]. [PriorityQueue.Run]
// flushes the backoff queue and the pool on the queue's clock
// ([WithClock]); k8s.io/utils/clock/testing's FakeClock drives them in
// tests.
//
// The queue keeps the pending pods' nominations
// ([PriorityQueue.Nominations]) for framework.WithNominator.
// filter.AdmissionCheck and filter.PreCheckForNode are the node-side
// checks the kubelet and kube-scheduler's older event handlers share.
package queue
