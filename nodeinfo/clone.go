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
	n.ImageStates = states
	n.forgetChanges()
	n.Generation = nextGeneration()
}
