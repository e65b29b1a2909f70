// Package taints answers whether tolerations tolerate taints, for the
// TaintToleration filter and scorer and NodeUnschedulable alike.
package taints

import (
	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	corev1 "k8s.io/component-helpers/scheduling/corev1"
)

// logger receives component-helpers' complaints about non-numeric Gt/Lt
// values. kubesched does not log: such a toleration simply does not match.
var logger = logr.Discard()

// Tolerated reports whether any toleration tolerates taint. comparison
// enables Gt/Lt tolerations (the TaintTolerationComparisonOperators feature
// gate, alpha and off in both supported releases).
func Tolerated(tolerations []v1.Toleration, taint *v1.Taint, comparison bool) bool {
	return corev1.TolerationsTolerateTaint(logger, tolerations, taint, comparison)
}

// FirstUntolerated returns the index of the first taint with effect
// NoSchedule or NoExecute that no toleration tolerates, or -1. It does not
// allocate.
func FirstUntolerated(taints []v1.Taint, tolerations []v1.Toleration, comparison bool) int {
	for i := range taints {
		t := &taints[i]
		if t.Effect != v1.TaintEffectNoSchedule && t.Effect != v1.TaintEffectNoExecute {
			continue
		}
		if !Tolerated(tolerations, t, comparison) {
			return i
		}
	}
	return -1
}
