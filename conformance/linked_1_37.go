//go:build !kubernetes_1_36

package conformance

import (
	"context"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	resourceslicetracker "k8s.io/dynamic-resource-allocation/resourceslice/tracker"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
)

// This file and its kubernetes_1_36 counterpart hold what the oracles
// need to build against one release of k8s.io/kubernetes and not the
// other. The module links v1.37.2; the out-of-process oracle for v1.36.3
// (cmd/oracle, built with the kubernetes_1_36 tag and
// kubernetes-1.36.mod) takes the other file.

// linkedRelease is the kube-scheduler release this build links.
const linkedRelease = "1.37"

// linkedFrameworkOptions are the framework options scheduler.New passes
// that the linked release has and the other does not.
func linkedFrameworkOptions(snapshot *snapshotLister) []frameworkruntime.Option {
	// DefaultPreemption reads the nominated node through it.
	return []frameworkruntime.Option{frameworkruntime.WithMutableSnapshotLister(snapshot)}
}

var _ fwk.MutableSnapshotSharedLister = (*snapshotLister)(nil)

// CompositePodGroupStates reports the installed cluster's composite pod
// groups.
func (s *snapshotLister) CompositePodGroupStates() fwk.CompositePodGroupStateLister {
	return s.snapshotOrEmpty().CompositePodGroupStates()
}

// StartMutations starts a mutation session of the installed cluster,
// which only kube-scheduler's pod group preemption uses.
func (s *snapshotLister) StartMutations() error { return s.snapshotOrEmpty().StartMutations() }

// EndMutations ends a mutation session, restoring the installed cluster.
func (s *snapshotLister) EndMutations() error { return s.snapshotOrEmpty().EndMutations() }

// AddPod adds a pod to the installed cluster in a mutation session.
func (s *snapshotLister) AddPod(podInfo fwk.PodInfo, nodeName string) error {
	return s.snapshotOrEmpty().AddPod(podInfo, nodeName)
}

// RemovePod removes a pod from the installed cluster in a mutation
// session.
func (s *snapshotLister) RemovePod(logger klog.Logger, pod *v1.Pod, nodeName string) error {
	return s.snapshotOrEmpty().RemovePod(logger, pod, nodeName)
}

// PodGroups reports the installed cluster's pod group objects.
func (s *snapshotLister) PodGroups() fwk.PodGroupLister {
	return s.snapshotOrEmpty().PodGroups()
}

// CompositePodGroups reports the installed cluster's composite pod group
// objects.
func (s *snapshotLister) CompositePodGroups() fwk.CompositePodGroupLister {
	return s.snapshotOrEmpty().CompositePodGroups()
}

// watchDeviceTaintRules has the ResourceSlice tracker apply
// DeviceTaintRules when DRADeviceTaintRules is on.
func watchDeviceTaintRules(opts *resourceslicetracker.Options, factory informers.SharedInformerFactory) error {
	if opts.EnableDeviceTaintRules {
		opts.TaintInformer = factory.Resource().V1().DeviceTaintRules()
	}
	return nil
}

// countPreemptions has executor count in n its calls that delete a
// victim while they run.
func countPreemptions(executor *preemption.Executor, n *atomic.Int32) {
	preempt := executor.PreemptPod
	executor.PreemptPod = func(ctx context.Context, c preemption.Candidate, preemptor preemption.ExecutorPreemptor, victim *v1.Pod, pluginName string) (bool, error) {
		n.Add(1)
		defer n.Add(-1)
		return preempt(ctx, c, preemptor, victim, pluginName)
	}
}

// schedulerInformerFactory is the informer factory scheduler.New is
// given, as kube-scheduler builds it.
func schedulerInformerFactory(client kubernetes.Interface) informers.SharedInformerFactory {
	return scheduler.NewInformerFactory(client, 0, nil)
}

// recordVictims has executor hand each candidate to record instead of
// preempting its victims.
func recordVictims(executor *preemption.Executor, record func(preemption.Candidate)) {
	executor.PreemptPod = func(_ context.Context, c preemption.Candidate, _ preemption.ExecutorPreemptor, _ *v1.Pod, _ string) (bool, error) {
		record(c)
		return false, nil
	}
}
