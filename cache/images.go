package cache

import (
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubesched/kubesched/nodeinfo"
)

// imageIndex knows which nodes report each image name, so that every
// node's ImageStateSummary.NumNodes is the cluster-wide count, as
// nodeinfo.Build (and kube-scheduler's NewSnapshot) compute it.
//
// kube-scheduler's own cache counts when it copies a node into a
// snapshot, so a node that has not changed since keeps an old count; here
// a node whose images' counts changed is re-summarised before the next
// snapshot instead, so a snapshot always equals Build on the same objects.
type imageIndex struct {
	nodes map[string]sets.Set[string]
	// dirty are the image names whose node set changed since the nodes
	// holding them were last re-summarised.
	dirty sets.Set[string]
}

// set records that node name now reports the images of node (nil: none)
// where it reported those of old (nil: none).
func (ix *imageIndex) set(name string, old, node *v1.Node) {
	before, after := imageNames(old), imageNames(node)
	if ix.nodes == nil {
		ix.nodes, ix.dirty = map[string]sets.Set[string]{}, sets.New[string]()
	}
	for img := range before {
		if after.Has(img) {
			continue
		}
		ix.dirty.Insert(img)
		if holders := ix.nodes[img]; holders != nil {
			holders.Delete(name)
			if holders.Len() == 0 {
				delete(ix.nodes, img)
			}
		}
	}
	for img := range after {
		if before.Has(img) {
			continue
		}
		ix.dirty.Insert(img)
		if ix.nodes[img] == nil {
			ix.nodes[img] = sets.New[string]()
		}
		ix.nodes[img].Insert(name)
	}
}

// takeDirty returns the names of the nodes holding an image whose count
// changed, and forgets the changes.
func (ix *imageIndex) takeDirty() sets.Set[string] {
	affected := sets.New[string]()
	for img := range ix.dirty {
		for name := range ix.nodes[img] {
			affected.Insert(name)
		}
	}
	ix.dirty = sets.New[string]()
	return affected
}

// summaries returns the image summaries of node: each name it reports,
// with the size it reports (the last, for a name listed twice) and the
// cluster-wide count.
func (ix *imageIndex) summaries(node *v1.Node) map[string]*nodeinfo.ImageStateSummary {
	states := make(map[string]*nodeinfo.ImageStateSummary, len(node.Status.Images))
	for _, img := range node.Status.Images {
		for _, name := range img.Names {
			states[name] = &nodeinfo.ImageStateSummary{Size: img.SizeBytes, NumNodes: ix.nodes[name].Len()}
		}
	}
	return states
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
