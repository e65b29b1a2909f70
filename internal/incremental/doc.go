// Package incremental is how kubesched's plugins keep what they counted
// over a cycle's nodes from one cycle to the next, and count again only
// where nodes changed. InterPodAffinity's filter and scorer and
// PodTopologySpread's count this way; the framework's verdict memo and
// DynamicResources' allocation memo (keyed by pod shape and by object
// identity) remember whole answers instead, and are described where they
// live.
//
// The words, used the same way wherever kubesched counts incrementally:
//
//   - A generation names one content of one NodeInfo: every change
//     through its methods gives a new one, and a clone shares it only
//     while identical. Comparing generations is enough to know a node is
//     unchanged, and keeps no NodeInfo alive. Generation 0 (a NodeInfo
//     not built by package nodeinfo) is always counted again.
//   - A position is an index into the cycle's node list. What a count
//     keeps, it keeps by position ([Positions]), for node lists of one
//     length; a list of another length starts it over.
//   - A version names one content of a node list updated in place
//     (cycle.Version): a cache.Snapshot logs which positions
//     each update wrote, so a count told the version it last saw visits
//     only the changed positions (fwk.cycle.Hooks.ChangedNodes).
//     Without one, a count compares every position's generation.
//   - A way of counting is everything a count depends on besides the
//     nodes (the pod's namespace, labels and terms, the constraints'
//     keys and selectors), spelled as a string key; one aggregate is kept
//     per way of counting ([ByKey]), so pods counted alike share it.
//   - An aggregate is one way of counting's running result over the
//     positions: per position, the share the node there added, and the
//     totals over all positions ([Shares]). Counting a changed position
//     again takes its old share off the totals and adds its new one.
//   - A shift brings a position up to date by the pods added to and
//     removed from its node since the counted generation
//     (nodeinfo.NodeInfo.PodChangesSince) when nothing else changed,
//     instead of counting the node again.
//   - A count at a time: an aggregate is taken by one count and given
//     back after it ([ByKey.Take]); a count that finds it taken counts
//     without it.
//   - Lending: totals handed to a cycle's state without copying are on
//     loan ([Loan]) until that cycle ends; an aggregate copies a total
//     before changing it while it is on loan, so a simulation placing pod
//     after pod pays for no copy.
package incremental
