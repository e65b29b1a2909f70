// Package locality says which plugins judge a node by that node alone.
//
// A plugin is node-local for a pod when its Filter verdict and its Score
// on a node depend only on the pod, the plugin's own configuration, the
// number of nodes in the cycle, and the content of that node's NodeInfo,
// which its Generation names: never on other nodes, listers or cluster
// objects. The framework remembers such verdicts and scores per pod shape
// and node generation, so that placing pod after pod of one kind, where
// one node changes per placement, asks these plugins about that node
// alone.
//
// A node-local plugin that normalizes its scores must, when every node
// scores 0, give every node the normalized score it gives a single node
// scoring 0: the framework then normalizes that one 0 instead of a score
// per node.
//
// Plugin packages register their types here at init; a plugin type not
// registered is never treated as node-local.
package locality

import (
	"reflect"
	"sync"

	v1 "k8s.io/api/core/v1"
)

// For reports whether plugin is node-local for pod.
type For func(plugin any, pod *v1.Pod) bool

var kinds sync.Map // reflect.Type -> For

// Register declares plugins of the dynamic type of example node-local
// for the pods for which isLocal reports true; a nil isLocal means for
// every pod.
func Register(example any, isLocal For) {
	if isLocal == nil {
		isLocal = func(any, *v1.Pod) bool { return true }
	}
	kinds.Store(reflect.TypeOf(example), isLocal)
}

// Of returns the test registered for plugin's type, or nil when plugins
// of its type are never node-local.
func Of(plugin any) For {
	if f, ok := kinds.Load(reflect.TypeOf(plugin)); ok {
		return f.(For)
	}
	return nil
}
