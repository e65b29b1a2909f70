package nodeinfo

// SetImageStates replaces the node's image summaries and marks the
// NodeInfo changed (a new Generation), so that caches which copy changed
// NodeInfos copy this one again. How many nodes hold an image is a fact
// about the cluster, not the node: [Build] computes it across its nodes,
// and an event-fed cache recomputes it when nodes come, go or change
// their images.
//
// The map is kept, not copied, and [NodeInfo.Clone] shares it: callers
// must build a new map (and new summaries) for every change instead of
// modifying one already set.
func (n *NodeInfo) SetImageStates(states map[string]*ImageStateSummary) {
	n.imageStates = states
	n.forgetChanges()
	n.generation = nextGeneration()
}

// CloneWithImageStates returns a [NodeInfo.Clone] whose image summaries
// are states, with n's Generation: the copy a cache hands out when it
// computes how many nodes hold each image as it copies a node, as
// kube-scheduler's does. The copy counts as n's content for everything
// that keys on generations, so states must differ from n's in counts
// and sizes only, never in which images the node holds. The map is kept,
// not copied.
func (n *NodeInfo) CloneWithImageStates(states map[string]*ImageStateSummary) *NodeInfo {
	c := n.Clone()
	c.imageStates = states
	return c
}
