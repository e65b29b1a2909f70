//go:build !kubernetes_1_36

package conformance

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
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

// linkedKinds are the cluster objects only the linked release reads:
// DeviceTaintRules, which its ResourceSlice tracker applies to the slices
// DynamicResources lists (DRADeviceTaintRules, GA in v1.37).
var linkedKinds = []schema.GroupVersionKind{resourceapi.SchemeGroupVersion.WithKind("DeviceTaintRule")}

// withTaintRules returns slice as a ResourceSlice tracker applying the
// DeviceTaintRules among objs hands it out: with each rule's taint
// appended to the devices the rule selects, in no particular order. A
// rule without a device selector selects nothing; the driver, pool and
// device it names, if any, must be the slice's driver and pool and the
// device's name. slice itself is returned when no rule selects a device.
func withTaintRules(slice *resourceapi.ResourceSlice, objs map[objectKey]runtime.Object) *resourceapi.ResourceSlice {
	out := slice
	for _, obj := range objs {
		rule, ok := obj.(*resourceapi.DeviceTaintRule)
		if !ok || rule.Spec.DeviceSelector == nil {
			continue
		}
		sel := rule.Spec.DeviceSelector
		if sel.Driver != nil && *sel.Driver != slice.Spec.Driver || sel.Pool != nil && *sel.Pool != slice.Spec.Pool.Name {
			continue
		}
		for i, d := range slice.Spec.Devices {
			if sel.Device != nil && *sel.Device != d.Name {
				continue
			}
			if out == slice {
				out = slice.DeepCopy()
			}
			out.Spec.Devices[i].Taints = append(out.Spec.Devices[i].Taints, rule.Spec.Taint)
		}
	}
	return out
}

// taintRules gives nearly half the scenarios with slices one to three
// DeviceTaintRules, drawn from a stream of their own (see
// [taintRuleStream]). Each selects devices of a slice of the scenario,
// mostly one of GPUs, which claims ask for most: by driver, pool, device
// name or a combination, all devices (an empty selector), or none (no
// selector, or a driver and pool that do not go together). Its taint has
// one of the keys of the slices' own taints, which claims' requests
// sometimes tolerate, and the effect NoSchedule, NoExecute or, less
// often, None.
func (g *draGenerator) taintRules() {
	r := &generator{r: rand.New(rand.NewPCG(g.s.Seed, taintRuleStream))}
	if len(g.slices) == 0 || !r.chance(0.45) {
		return
	}
	var gpus []*resourceapi.ResourceSlice
	for _, s := range g.slices {
		if s.Spec.Driver == driverGPU {
			gpus = append(gpus, s)
		}
	}
	for i := range 1 + r.r.IntN(3) {
		slice := pick(r, g.slices)
		if len(gpus) > 0 && r.chance(0.7) {
			slice = pick(r, gpus)
		}
		driver, pool, device := slice.Spec.Driver, slice.Spec.Pool.Name, "gpu-0"
		if len(slice.Spec.Devices) > 0 {
			device = pick(r, slice.Spec.Devices).Name
		}
		other := driverNIC
		if driver == driverNIC {
			other = driverGPU
		}
		sel := &resourceapi.DeviceTaintSelector{}
		switch x := r.r.Float64(); {
		case x < 0.08:
			sel = nil
		case x < 0.12:
			// Every device.
		case x < 0.24:
			sel.Driver = &driver
		case x < 0.36:
			sel.Pool = &pool
		case x < 0.46:
			sel.Device = &device
		case x < 0.58:
			sel.Driver, sel.Pool = &driver, &pool
		case x < 0.72:
			sel.Pool, sel.Device = &pool, &device
		case x < 0.92:
			sel.Driver, sel.Pool, sel.Device = &driver, &pool, &device
		default:
			sel.Driver, sel.Pool = &other, &pool
		}
		taint := resourceapi.DeviceTaint{
			Key:    pick(r, deviceTaints),
			Effect: pick(r, []resourceapi.DeviceTaintEffect{resourceapi.DeviceTaintEffectNoSchedule, resourceapi.DeviceTaintEffectNoSchedule, resourceapi.DeviceTaintEffectNoExecute, resourceapi.DeviceTaintEffectNoExecute, resourceapi.DeviceTaintEffectNone}),
			// The API server sets it when the rule is created.
			TimeAdded: &metav1.Time{Time: classCreation},
		}
		if r.chance(0.3) {
			taint.Value = "true"
		}
		name := fmt.Sprintf("taint-%d", i)
		g.s.Objects = append(g.s.Objects, &resourceapi.DeviceTaintRule{
			TypeMeta:   metav1.TypeMeta{APIVersion: resourceapi.SchemeGroupVersion.String(), Kind: "DeviceTaintRule"},
			ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID("uid-devicetaintrule-" + name)},
			Spec:       resourceapi.DeviceTaintRuleSpec{DeviceSelector: sel, Taint: taint},
		})
	}
}
