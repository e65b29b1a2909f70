// Package preemption is kube-scheduler v1.37.2's DefaultPreemption
// PostFilter plugin: for a pod no node fits, the node to nominate it to
// and the lower-priority pods to evict there, as a decision the caller
// reads from [github.com/kubesched/kubesched/framework.FitError.Preemption] and acts on.
package preemption
