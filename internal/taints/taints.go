// Package taints answers whether tolerations tolerate taints, for the
// TaintToleration filter and scorer and NodeUnschedulable alike.
package taints

import (
	v1 "k8s.io/api/core/v1"
	corev1 "k8s.io/component-helpers/scheduling/corev1"
	"k8s.io/klog/v2"
)

// ComparisonOperators mirrors the TaintTolerationComparisonOperators feature
// gate (Gt/Lt tolerations), alpha and off in kube-scheduler v1.36.3.
const ComparisonOperators = false

// logger receives component-helpers' diagnostics about malformed
// tolerations; kubesched does not log.
var logger = klog.Background().V(10)

// Tolerated reports whether any toleration tolerates taint.
func Tolerated(tolerations []v1.Toleration, taint *v1.Taint) bool {
	return corev1.TolerationsTolerateTaint(logger, tolerations, taint, ComparisonOperators)
}

// FirstUntolerated returns the index of the first taint with effect
// NoSchedule or NoExecute that no toleration tolerates, or -1. It does not
// allocate.
func FirstUntolerated(taints []v1.Taint, tolerations []v1.Toleration) int {
	for i := range taints {
		t := &taints[i]
		if t.Effect != v1.TaintEffectNoSchedule && t.Effect != v1.TaintEffectNoExecute {
			continue
		}
		if !Tolerated(tolerations, t) {
			return i
		}
	}
	return -1
}
