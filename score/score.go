package score

import "github.com/kubesched/kubesched/fwk"

// skip is the PreScore answer of a plugin with nothing to score for a pod.
var skip = fwk.NewStatus(fwk.Skip)

// errNilNode is what every scorer returns for a NodeInfo without a node.
var errNilNode = fwk.NewStatus(fwk.Error, "node not found: NodeInfo has no Node")

// normalize rescales scores so the highest becomes MaxNodeScore and the
// rest keep their proportion (integer division, as kube-scheduler does).
// With reverse, the scale is flipped so the lowest raw score wins. All-zero
// scores stay 0, or all become MaxNodeScore when reversed.
func normalize(scores []int64, reverse bool) {
	var highest int64
	for _, s := range scores {
		highest = max(highest, s)
	}
	if highest == 0 {
		if reverse {
			for i := range scores {
				scores[i] = fwk.MaxNodeScore
			}
		}
		return
	}
	for i, s := range scores {
		s = fwk.MaxNodeScore * s / highest
		if reverse {
			s = fwk.MaxNodeScore - s
		}
		scores[i] = s
	}
}
