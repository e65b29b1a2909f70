// Package framework composes scheduling plugins into a profile and runs
// kube-scheduler's scheduling cycle over them: [Framework.Schedule] takes a
// pod and a list of [nodeinfo.NodeInfo] and returns the chosen node with
// every feasible node's scores, or a [FitError] explaining why no node fits.
// [Framework.ScheduleSnapshot] does the same over a [NodeSnapshot] (such as
// a cache.Snapshot), a node list that never changes: a cycle over it costs
// what the pod needs, with no pass over the nodes the pod never reaches.
//
// A [Result] and a [Diagnosis] cost what the cycle did, not what the
// cluster holds: as in kube-scheduler, the nodes a PreFilter plugin ruled
// out share one verdict ([Diagnosis.NodeStatus] answers per node), and
// scores live in a compact table that [Result.NodeScores] turns into a
// list on demand.
//
// Plugins are written against package fwk, the plugin API below the
// framework: small interfaces — fwk.PreFilterPlugin, fwk.FilterPlugin,
// fwk.PreScorePlugin, fwk.ScorePlugin, fwk.NormalizeScorePlugin,
// fwk.ReservePlugin — each with a Name; a plugin takes part in every
// phase whose interface it implements. Verdicts are a *fwk.Status, where
// nil means success, so "does not fit" is never an error. Values a
// plugin computes once per pod live in a typed fwk.StateKey slot of the
// fwk.CycleState. A fwk.PostFilterPlugin returns what it asks of the
// caller (a fwk.Preemption, a nomination to clear, outputs), which the
// framework gathers into the [FitError]; it reaches the framework running
// its cycle, to re-run filters, through fwk.HandleOf.
//
// The cycle, in kube-scheduler's order:
//
//  1. PreFilter: each plugin checks the pod alone, may narrow the nodes
//     ([fwk.PreFilterResult]) or reject the pod everywhere.
//  2. Filter: every node (or, with percentageOfNodesToScore below 100,
//     enough of them) runs the filters in order on a worker pool, stopping
//     at the first rejection so the reported plugin is kube-scheduler's.
//     Then each fwk.Extender ([WithExtender]) interested in the pod filters
//     the nodes left, one after another, over HTTP.
//  3. PreScore, Score, NormalizeScore on the feasible nodes; each score must
//     end in [fwk.MinNodeScore, fwk.MaxNodeScore] and is multiplied by the plugin's
//     weight. Prioritizing extenders add their weighted scores, scaled from
//     0-10 to 0-100.
//  4. The highest total wins; ties are broken at random.
//  5. When no node fits, the PostFilter plugins run (DynamicResources',
//     then DefaultPreemption): the [FitError] gathers what kube-scheduler
//     would do to make the pod fit later — the node to nominate it to and
//     the pods to evict (fwk.Preemption), a claim to deallocate — and
//     their messages. Nothing in the cluster is changed.
//
// Scoring is skipped when only one node is feasible.
//
// [Framework.Explain] runs the same cycle for people: every Filter
// plugin's verdict on every node, not only the first rejection, with the
// facts plugins implementing fwk.FilterExplainer give (a fwk.Shortfall per
// resource, the taint, term or port in the way), every feasible node's
// raw, normalized and weighted scores, and the nodes closest to fitting
// ([Explanation.Closest]). [Framework.Plugins] lists the profile.
//
// A framework remembers, per pod shape (a pod but its name and identity)
// and node, what the in-tree plugins that judge a node by that node
// alone (NodeResourcesFit, TaintToleration, NodeAffinity, ...) said of it
// at its generation, so that placing many pods of one shape, as a
// simulation or a ReplicaSet does, asks those plugins only about the
// nodes that changed. Over a snapshot updated in place, when those are
// the only plugins that filter the pod, a search over every node does not
// even look at the other nodes: it takes their verdicts, and the list of
// nodes that passed, from the last search of that shape. This changes
// nothing in the results: the other plugins run as ever, in profile
// order.
package framework
