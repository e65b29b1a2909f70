// Package nodeinfo holds the per-node view the scheduling plugins read: the
// node object, the pods bound to it, and totals derived from them (requested
// resources, used host ports, images present) that would otherwise be
// recomputed for every pod on every node.
//
// A [NodeInfo] is built once per cluster snapshot with [Build] (or [New] for a
// single node) and is then read concurrently by many Schedule calls. Its
// methods that change it ([NodeInfo.AddPod], [NodeInfo.RemovePod]) are not
// safe to call while it is being read; callers who keep a long-lived cluster
// view clone or rebuild the NodeInfos they change.
package nodeinfo
