package score

import "github.com/kubesched/kubesched/framework"

// skip is the PreScore answer of a plugin with nothing to score for a pod.
var skip = framework.NewStatus(framework.Skip)

// errNilNode is what every scorer returns for a NodeInfo without a node.
var errNilNode = framework.NewStatus(framework.Error, "node not found: NodeInfo has no Node")

// normalize rescales scores so the highest becomes MaxNodeScore and the
// rest keep their proportion (integer division, as kube-scheduler does).
// With reverse, the scale is flipped so the lowest raw score wins. All-zero
// scores stay 0, or all become MaxNodeScore when reversed.
func normalize(scores []framework.NodeScore, reverse bool) {
	var highest int64
	for i := range scores {
		highest = max(highest, scores[i].Score)
	}
	if highest == 0 {
		if reverse {
			for i := range scores {
				scores[i].Score = framework.MaxNodeScore
			}
		}
		return
	}
	for i := range scores {
		s := framework.MaxNodeScore * scores[i].Score / highest
		if reverse {
			s = framework.MaxNodeScore - s
		}
		scores[i].Score = s
	}
}
