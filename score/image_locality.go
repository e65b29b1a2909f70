package score

import (
	"context"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/feature"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/names"
	"github.com/kubesched/kubesched/nodeinfo"
)

// ImageLocality's size thresholds: images totalling less than 23 MiB earn
// nothing (any node pulls that quickly), and the total counts up to
// 1000 MiB per container, so that one huge image cannot dominate.
const (
	imageLocalityMinThreshold          int64 = 23 * 1024 * 1024
	imageLocalityMaxContainerThreshold int64 = 1000 * 1024 * 1024
)

// imageLocalityKey holds the pod's image names, normalized once per cycle,
// and the cluster size.
var imageLocalityKey = fwk.NewStateKey[*imageLocalityPod]()

// ImageLocality favours nodes that already hold the pod's images, weighting
// each image by its size and by how widely it is spread over the cluster,
// so that a pod is not drawn to the one node that happens to hold a rare
// image. The zero value is ready to use.
type ImageLocality struct {
	// Features: ImageVolumesInThreshold is read. nil is [feature.Default].
	Features *feature.Features
}

var (
	_ fwk.PreScorePlugin = &ImageLocality{}
	_ fwk.ScorePlugin    = &ImageLocality{}
)

// Name returns "ImageLocality".
func (*ImageLocality) Name() string { return names.ImageLocality }

// PodOnlyPreScore reports true: PreScore depends on the pod alone, so the
// framework may score nodes while it filters them.
func (*ImageLocality) PodOnlyPreScore(*fwk.CycleState, *v1.Pod) bool { return true }

// PreScore records the pod's normalized image names and the number of
// nodes in the cycle (all of them, not only the feasible ones, as
// kube-scheduler counts its snapshot) in state, so that Score does no
// string work per node. It always returns nil: kube-scheduler never skips
// this plugin. A nil state is left alone.
func (pl *ImageLocality) PreScore(_ context.Context, state *fwk.CycleState, pod *v1.Pod, _ []*nodeinfo.NodeInfo) *fwk.Status {
	if state != nil {
		imageLocalityKey.Write(state, newImageLocalityPod(pod, len(state.AllNodes()), feature.Of(pl.Features).ImageVolumesInThreshold))
	}
	return nil
}

// Score returns the node's score in [fwk.MinNodeScore,
// fwk.MaxNodeScore]: for each image of the pod the node holds, its
// size spread by the share of nodes holding it, summed, clamped and
// scaled; or Error if ni has no node. Without PreScore's record it computes the pod's data itself,
// counting the cycle's nodes from state; with a nil state the node is taken
// to be the whole cluster. It does not allocate once PreScore has run,
// modifies nothing, and is safe for concurrent use.
func (pl *ImageLocality) Score(_ context.Context, state *fwk.CycleState, pod *v1.Pod, ni *nodeinfo.NodeInfo) (int64, *fwk.Status) {
	if ni.Node() == nil {
		return 0, errNilNode
	}
	p, ok := imageLocalityKey.Read(state)
	if !ok {
		p = newImageLocalityPod(pod, len(state.AllNodes()), feature.Of(pl.Features).ImageVolumesInThreshold)
	}
	return p.score(ni), nil
}

// imageLocalityScore is kube-scheduler's ImageLocality score of node for
// pod in a cluster of totalNodes nodes (values below 1 count as 1).
//
// Each image of the pod's init containers, containers and image volumes
// that the node holds adds size × NumNodes/totalNodes, where NumNodes is
// how many nodes hold it; an image used twice counts twice. Names without a
// tag are looked up with ":latest". The sum, clamped to [23 MiB,
// 1000 MiB × images] with init containers counted as containers (image
// volumes too with volumesCount, as from v1.37), maps linearly onto
// [0, 100]. A nil node scores 0.
func imageLocalityScore(pod *v1.Pod, node *nodeinfo.NodeInfo, totalNodes int, volumesCount bool) int64 {
	if node.Node() == nil {
		return 0
	}
	return newImageLocalityPod(pod, totalNodes, volumesCount).score(node)
}

// imageLocalityPod is what scoring needs of a pod, found once per cycle.
type imageLocalityPod struct {
	images []string // normalized, duplicates kept
	// numContainers counts init containers and containers, and image
	// volumes when they count towards the threshold.
	numContainers int
	totalNodes    int // at least 1
}

func newImageLocalityPod(pod *v1.Pod, totalNodes int, volumesCount bool) *imageLocalityPod {
	spec := &pod.Spec
	p := &imageLocalityPod{
		images:        make([]string, 0, len(spec.InitContainers)+len(spec.Containers)),
		numContainers: len(spec.InitContainers) + len(spec.Containers),
		totalNodes:    max(totalNodes, 1),
	}
	for i := range spec.InitContainers {
		p.images = append(p.images, normalizedImageName(spec.InitContainers[i].Image))
	}
	for i := range spec.Containers {
		p.images = append(p.images, normalizedImageName(spec.Containers[i].Image))
	}
	for i := range spec.Volumes {
		if img := spec.Volumes[i].Image; img != nil {
			p.images = append(p.images, normalizedImageName(img.Reference))
			if volumesCount {
				p.numContainers++
			}
		}
	}
	return p
}

// score maps the spread-weighted size of the pod's images present on the
// node onto [0, 100].
func (p *imageLocalityPod) score(ni *nodeinfo.NodeInfo) int64 {
	var sum int64
	for _, name := range p.images {
		if st, ok := ni.ImageStates()[name]; ok {
			// Floating point in this order, to round exactly as kube-scheduler.
			spread := float64(st.NumNodes) / float64(p.totalNodes)
			sum += int64(float64(st.Size) * spread)
		}
	}
	ceiling := imageLocalityMaxContainerThreshold * int64(p.numContainers)
	// Floor first, and the ceiling only above the floor: for a pod without
	// containers (ceiling 0) this order decides between 0 and 100.
	if sum < imageLocalityMinThreshold {
		sum = imageLocalityMinThreshold
	} else if sum > ceiling {
		sum = ceiling
	}
	return fwk.MaxNodeScore * (sum - imageLocalityMinThreshold) / (ceiling - imageLocalityMinThreshold)
}

// normalizedImageName adds the ":latest" tag the runtime assumes when a
// reference has none. A colon before the last slash belongs to a registry
// port, not a tag.
func normalizedImageName(name string) string {
	if strings.LastIndexByte(name, ':') <= strings.LastIndexByte(name, '/') {
		return name + ":latest"
	}
	return name
}

// NodeLocal reports true: the score of a node depends on the pod, the
// number of nodes and that node alone (fwk.NodeLocalPlugin).
func (*ImageLocality) NodeLocal(_ *v1.Pod) bool {
	return true
}
