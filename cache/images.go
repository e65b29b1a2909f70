package cache

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubesched/kubesched/nodeinfo"
)

// imageIndex knows which nodes report each image name, for the image
// summaries ImageLocality reads. It keeps them one of two ways.
//
// As kube-scheduler's cache does (the default): an image name has one
// size, the one the first node to report it gave (until no node reports
// it any more), whatever size other nodes report; and a node's summaries
// count the nodes holding each image when the node is copied into a
// snapshot, that is when it changed, so a node that has not changed
// since keeps an old count.
//
// Fresh (WithFreshImageStates): each node's own sizes and counts across
// the current nodes in every snapshot, as nodeinfo.Build and
// kube-scheduler's NewSnapshot compute them: a node whose images'
// counts changed is summarised again before the next snapshot.
type imageIndex struct {
	fresh bool
	nodes map[string]sets.Set[string]
	// sizes holds each name's size as kube-scheduler's cache keeps it:
	// the first reported.
	sizes map[string]int64
	// dirty are the image names whose node set changed since the nodes
	// holding them were last summarised (fresh only).
	dirty sets.Set[string]
}

// set records that node name now reports the images of node (nil: none)
// where it reported those of old (nil: none).
func (ix *imageIndex) set(name string, old, node *v1.Node) {
	before, after := imageNames(old), imageNames(node)
	if ix.nodes == nil {
		ix.nodes, ix.sizes, ix.dirty = map[string]sets.Set[string]{}, map[string]int64{}, sets.New[string]()
	}
	// kube-scheduler removes the old node's images before it adds the new
	// one's, so a name only this node reports takes the new size.
	for img := range before {
		if after.Has(img) && ix.nodes[img].Len() > 1 {
			continue
		}
		ix.dirty.Insert(img)
		if holders := ix.nodes[img]; holders != nil {
			holders.Delete(name)
			if holders.Len() == 0 {
				delete(ix.nodes, img)
				delete(ix.sizes, img)
			}
		}
	}
	if node == nil {
		return
	}
	for _, image := range node.Status.Images {
		for _, img := range image.Names {
			if ix.nodes[img].Has(name) {
				continue
			}
			ix.dirty.Insert(img)
			if ix.nodes[img] == nil {
				ix.nodes[img] = sets.New[string]()
				ix.sizes[img] = image.SizeBytes
			}
			ix.nodes[img].Insert(name)
		}
	}
}

// takeDirty returns the names of the nodes to summarise again before a
// snapshot (none unless fresh), and forgets the changes.
func (ix *imageIndex) takeDirty() sets.Set[string] {
	affected := sets.New[string]()
	if !ix.fresh {
		ix.dirty = sets.New[string]()
		return affected
	}
	for img := range ix.dirty {
		for name := range ix.nodes[img] {
			affected.Insert(name)
		}
	}
	ix.dirty = sets.New[string]()
	return affected
}

// summaries returns the image summaries of node as the index keeps them:
// each name it reports, with the cluster-wide count and the size (the
// node's own when fresh, the last for a name listed twice; kube-scheduler
// cache's otherwise).
func (ix *imageIndex) summaries(node *v1.Node) map[string]*nodeinfo.ImageStateSummary {
	states := make(map[string]*nodeinfo.ImageStateSummary, len(node.Status.Images))
	for _, img := range node.Status.Images {
		for _, name := range img.Names {
			size := img.SizeBytes
			if !ix.fresh {
				if _, seen := states[name]; seen {
					continue
				}
				size = ix.sizes[name]
			}
			states[name] = &nodeinfo.ImageStateSummary{Size: size, NumNodes: ix.nodes[name].Len()}
		}
	}
	return states
}

// snapshotOf returns the copy of info a snapshot holds: as kube-scheduler
// copies a changed node, counting each image's nodes now.
func (ix *imageIndex) snapshotOf(info *nodeinfo.NodeInfo) *nodeinfo.NodeInfo {
	if !ix.fresh && info.Node() != nil {
		// Clone shares the map: give the copy its own.
		return info.CloneWithImageStates(ix.summaries(info.Node()))
	}
	return info.Clone()
}

func imageNames(node *v1.Node) sets.Set[string] {
	names := sets.New[string]()
	if node == nil {
		return names
	}
	for _, img := range node.Status.Images {
		names.Insert(img.Names...)
	}
	return names
}
