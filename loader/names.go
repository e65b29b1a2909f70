package loader

import (
	"encoding/binary"
	"hash/fnv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// names are the names objects have, by kind and namespace, and make new
// ones as the API server makes them of a generateName.
type names struct {
	have map[nameKey]bool
	// next counts the names generated of each prefix.
	next map[nameKey]uint64
}

type nameKey struct{ kind, namespace, name string }

// newNames knows the names of c's objects.
func newNames(c *Cluster) *names {
	n := &names{have: map[nameKey]bool{}, next: map[nameKey]uint64{}}
	for _, o := range c.all() {
		if m, ok := o.(metav1.Object); ok {
			n.have[nameKey{kindName(o), m.GetNamespace(), m.GetName()}] = true
		}
	}
	return n
}

// all are c's objects: nodes, pods, other objects and workloads, none
// nil.
func (c *Cluster) all() []runtime.Object {
	all := make([]runtime.Object, 0, len(c.Nodes)+len(c.Pods)+len(c.Objects)+len(c.Workloads))
	for _, n := range c.Nodes {
		if n != nil {
			all = append(all, n)
		}
	}
	for _, p := range c.Pods {
		if p != nil {
			all = append(all, p)
		}
	}
	for _, o := range append(c.Objects[:len(c.Objects):len(c.Objects)], c.Workloads...) {
		if o != nil && !isNil(o) {
			all = append(all, o)
		}
	}
	return all
}

func (n *names) taken(kind, namespace, name string) bool {
	return n.have[nameKey{kind, namespace, name}]
}

// take takes a name, and says whether it was free.
func (n *names) take(kind, namespace, name string) bool {
	k := nameKey{kind, namespace, name}
	if n.have[k] {
		return false
	}
	n.have[k] = true
	return true
}

// generatedNameChars are the characters the API server appends to a
// generateName: no vowels, so that no word is spelt, and no 0, 1 or 3,
// which look like letters.
const generatedNameChars = "bcdfghjklmnpqrstvwxz2456789"

// maxGeneratedPrefix is the longest prefix the API server keeps of a
// generateName, so that five characters more make a 63-character name.
const maxGeneratedPrefix = 58

// generate takes and returns a name of prefix and five characters, as
// the API server names an object of a generateName, but chosen by a
// hash of the namespace, the prefix and a count, so that the same input
// gives the same names: the first such name no object of the kind and
// namespace has.
func (n *names) generate(kind, namespace, prefix string) string {
	if len(prefix) > maxGeneratedPrefix {
		prefix = prefix[:maxGeneratedPrefix]
	}
	counter := nameKey{kind, namespace, prefix}
	for {
		i := n.next[counter]
		n.next[counter] = i + 1
		h := fnv.New64a()
		h.Write([]byte(namespace + "/" + prefix))
		h.Write(binary.LittleEndian.AppendUint64(nil, i))
		sum := h.Sum64()
		var suffix [5]byte
		for j := range suffix {
			suffix[j] = generatedNameChars[sum%uint64(len(generatedNameChars))]
			sum /= uint64(len(generatedNameChars))
		}
		if name := prefix + string(suffix[:]); n.take(kind, namespace, name) {
			return name
		}
	}
}
