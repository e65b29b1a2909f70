package loader

import (
	"fmt"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// placed is where Read found an object: the input's name, as given to
// Read, and the document and item, as errors name them.
type placed struct {
	obj          runtime.Object
	input, where string
}

func (p placed) String() string { return p.input + ": " + p.where }

// Check returns an error for what no API server could hold, and
// kubesched's simulation refuses without saying where it came from:
//
//   - an object without a name: neither in the input nor, by
//     [Cluster.Default], from its generateName;
//   - two nodes of one name, or two objects of one kind, namespace and
//     name (two pods, say), in one input or across several ([Load] of
//     several paths, [Cluster.Merge]).
//
// The error names the places of the objects, as Read's errors do, for
// the objects Read read; a duplicate is reported where it is found
// again:
//
//	more.yaml: document 1: Node "n1" is also in nodes.yaml: document 3
//
// Call Check after [Cluster.Default], which names objects and gives
// them the namespace that makes two the same, and before
// [Cluster.ExpandWorkloads], so that the error is about the input;
// what ExpandWorkloads creates has names of its own. Check reads c
// only, in O(objects) time; it may run concurrently with other readers
// of c.
func (c *Cluster) Check() error {
	type key struct{ kind, namespace, name string }
	all := c.all()
	seen := make(map[key]runtime.Object, len(all))
	for _, o := range all {
		m, ok := o.(metav1.Object)
		if !ok {
			continue
		}
		if m.GetName() == "" {
			return c.unnamed(o, m)
		}
		k := key{kind: kindName(o), name: m.GetName()}
		if namespaced(o) {
			k.namespace = m.GetNamespace()
		}
		if first, ok := seen[k]; ok {
			return c.duplicate(first, o, k.kind, k.namespace, k.name)
		}
		seen[k] = o
	}
	return nil
}

// unnamed is the error for o, which has no name.
func (c *Cluster) unnamed(o runtime.Object, m metav1.Object) error {
	what := kindName(o)
	if namespaced(o) && m.GetNamespace() != "" {
		what += " in namespace " + m.GetNamespace()
	}
	problem := "name or generateName is required"
	if g := m.GetGenerateName(); g != "" {
		problem = fmt.Sprintf("generateName %q is not a name until Cluster.Default makes one of it", g)
	}
	where, _ := c.placesOf(o, nil)
	if where != "" {
		return fmt.Errorf("%s (%s): metadata.name: Required value: %s", where, what, problem)
	}
	return fmt.Errorf("%s: metadata.name: Required value: %s", what, problem)
}

// duplicate is the error for again, of the kind, namespace and name of
// first, which came before it.
func (c *Cluster) duplicate(first, again runtime.Object, kind, namespace, name string) error {
	if namespace != "" {
		name = namespace + "/" + name
	}
	what := kind + " " + strconv.Quote(name)
	atFirst, atAgain := c.placesOf(first, again)
	switch {
	case first == again && atFirst != "":
		return fmt.Errorf("%s: %s is in the cluster twice", atFirst, what)
	case atFirst != "" && atAgain != "":
		return fmt.Errorf("%s: %s is also in %s", atAgain, what, atFirst)
	case atAgain != "":
		return fmt.Errorf("%s: %s is also in the cluster already, from elsewhere than Read", atAgain, what)
	case atFirst != "":
		return fmt.Errorf("%s is in %s and again, from elsewhere than Read", what, atFirst)
	}
	return fmt.Errorf("%s is in the cluster twice", what)
}

// placesOf returns where Read found a and b, "" for an object it did
// not read (or nil). It looks through all places: it is for errors.
func (c *Cluster) placesOf(a, b runtime.Object) (string, string) {
	var atA, atB string
	for _, p := range c.places {
		if p.obj == a && atA == "" {
			atA = p.String()
		}
		if b != nil && p.obj == b {
			atB = p.String()
		}
	}
	return atA, atB
}
