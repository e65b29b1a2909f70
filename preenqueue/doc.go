// Package preenqueue holds kube-scheduler's PreEnqueue plugins, which
// decide whether a pod is tried at all: [SchedulingGates] turns down pods
// with scheduling gates. Framework.Schedule runs them before PreFilter and
// returns a *framework.NotTriedError for a pod they turn down; the queue
// package keeps such pods out of its active queue.
package preenqueue
