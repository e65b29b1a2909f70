package cache

import (
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/component-helpers/node/topology"
)

// nodeTree orders node names the way kube-scheduler's cache lists them:
// zones in the order they first appeared, and the nodes of a zone in the
// order they joined it. [nodeTree.list] takes one node from each zone in
// turn, so that a search that stops early (percentageOfNodesToScore)
// still sees every zone. Not safe for concurrent use; the cache's lock
// guards it.
type nodeTree struct {
	zones  []string
	byZone map[string][]string
	n      int
}

// add appends node to its zone. The caller makes sure it is not in the
// tree: looking would make adding n nodes cost n² string comparisons.
func (t *nodeTree) add(node *v1.Node) {
	zone := topology.GetZoneKey(node)
	names, ok := t.byZone[zone]
	if !ok {
		if t.byZone == nil {
			t.byZone = map[string][]string{}
		}
		t.zones = append(t.zones, zone)
	}
	t.byZone[zone] = append(names, node.Name)
	t.n++
}

// remove takes node out of its zone, and the zone out of the tree when
// it was the last. It reports whether the node was there.
func (t *nodeTree) remove(node *v1.Node) bool {
	zone := topology.GetZoneKey(node)
	names := t.byZone[zone]
	i := slices.Index(names, node.Name)
	if i < 0 {
		return false
	}
	names = slices.Delete(names, i, i+1)
	if len(names) == 0 {
		delete(t.byZone, zone)
		t.zones = slices.DeleteFunc(t.zones, func(z string) bool { return z == zone })
	} else {
		t.byZone[zone] = names
	}
	t.n--
	return true
}

// update moves a node whose zone changed to the end of its new zone.
func (t *nodeTree) update(old, node *v1.Node) {
	if topology.GetZoneKey(old) == topology.GetZoneKey(node) {
		return
	}
	t.remove(old)
	t.add(node)
}

// list returns every node name, one zone at a time in turn: the first
// node of each zone, then the second of each, and so on.
func (t *nodeTree) list() []string {
	out := make([]string, 0, t.n)
	for i, more := 0, true; more; i++ {
		more = false
		for _, zone := range t.zones {
			if names := t.byZone[zone]; i < len(names) {
				out = append(out, names[i])
				more = true
			}
		}
	}
	return out
}
