package filter

import "github.com/kubesched/kubesched/fwk"

// errNilNode is what every filter returns for a NodeInfo without a node:
// a caller bug, not a verdict about a node.
var errNilNode = fwk.NewStatus(fwk.Error, "node not found: NodeInfo has no Node")

// skip is the PreFilter answer of a plugin with nothing to check for a pod.
var skip = fwk.NewStatus(fwk.Skip)
