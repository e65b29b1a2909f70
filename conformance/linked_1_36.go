//go:build kubernetes_1_36

package conformance

import (
	"context"
	"errors"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	resourceslicetracker "k8s.io/dynamic-resource-allocation/resourceslice/tracker"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/framework/preemption"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
)

// linkedRelease is the kube-scheduler release this build links.
const linkedRelease = "1.36"

// linkedFrameworkOptions are the framework options scheduler.New passes
// that the linked release has and the other does not: none.
func linkedFrameworkOptions(*snapshotLister) []frameworkruntime.Option { return nil }

var _ fwk.SharedLister = (*snapshotLister)(nil)

// watchDeviceTaintRules refuses DRADeviceTaintRules, off by default in
// v1.36: the oracle installs no DeviceTaintRules, which the tracker would
// then read through the v1beta2 API.
func watchDeviceTaintRules(opts *resourceslicetracker.Options, _ informers.SharedInformerFactory) error {
	if opts.EnableDeviceTaintRules {
		return errors.New("the DRADeviceTaintRules feature gate is on, but the oracle has no DeviceTaintRules")
	}
	return nil
}

// countPreemptions has executor count in n its calls that delete a
// victim while they run.
func countPreemptions(executor *preemption.Executor, n *atomic.Int32) {
	preempt := executor.PreemptPod
	executor.PreemptPod = func(ctx context.Context, c preemption.Candidate, preemptor preemption.ExecutorPreemptor, victim *v1.Pod, pluginName string) error {
		n.Add(1)
		defer n.Add(-1)
		return preempt(ctx, c, preemptor, victim, pluginName)
	}
}

// schedulerInformerFactory is the informer factory scheduler.New is
// given, as kube-scheduler builds it.
func schedulerInformerFactory(client kubernetes.Interface) informers.SharedInformerFactory {
	return scheduler.NewInformerFactory(client, 0)
}

// recordVictims has executor hand each candidate to record instead of
// preempting its victims.
func recordVictims(executor *preemption.Executor, record func(preemption.Candidate)) {
	executor.PreemptPod = func(_ context.Context, c preemption.Candidate, _ preemption.ExecutorPreemptor, _ *v1.Pod, _ string) error {
		record(c)
		return nil
	}
}

// linkedKinds are the cluster objects only the linked release reads:
// none that v1.37 does not read too.
var linkedKinds []schema.GroupVersionKind

// withTaintRules returns slice: v1.36.3's API types have no
// DeviceTaintRule, and its tracker applies none.
func withTaintRules(slice *resourceapi.ResourceSlice, _ map[objectKey]runtime.Object) *resourceapi.ResourceSlice {
	return slice
}

// taintRules makes nothing: v1.36.3's API types have no DeviceTaintRule.
func (g *draGenerator) taintRules() {}
