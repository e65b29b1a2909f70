package nodeaffinity

import (
	"fmt"
	"strings"

	v1 "k8s.io/api/core/v1"
)

// Unmet describes, for people, each term of ns that node does not match:
// one line per such term, "term 2 of 3: zone In [a b] (the node has
// zone=c)", listing the requirements of the term the node fails. It
// returns nil when some term matches.
func Unmet(ns *v1.NodeSelector, node *v1.Node) []string {
	if ns == nil || NewSelector(ns).Matches(node) {
		return nil
	}
	terms := ns.NodeSelectorTerms
	var out []string
	for i, t := range terms {
		var failed []string
		for _, r := range t.MatchExpressions {
			if !matchesOne(v1.NodeSelectorTerm{MatchExpressions: []v1.NodeSelectorRequirement{r}}, node) {
				failed = append(failed, fmt.Sprintf("%s %s %v (the node has %s)", r.Key, r.Operator, r.Values, LabelValue(node.Labels, r.Key)))
			}
		}
		for _, r := range t.MatchFields {
			if !matchesOne(v1.NodeSelectorTerm{MatchFields: []v1.NodeSelectorRequirement{r}}, node) {
				failed = append(failed, fmt.Sprintf("field %s %s %v (the node is %s)", r.Key, r.Operator, r.Values, node.Name))
			}
		}
		if len(failed) == 0 {
			failed = []string{"the term matches nothing"}
		}
		out = append(out, fmt.Sprintf("term %d of %d: %s", i+1, len(terms), strings.Join(failed, "; ")))
	}
	return out
}

func matchesOne(t v1.NodeSelectorTerm, node *v1.Node) bool {
	return NewSelector(&v1.NodeSelector{NodeSelectorTerms: []v1.NodeSelectorTerm{t}}).Matches(node)
}

// LabelValue writes a node's label key as key=value, or says it has none.
func LabelValue(nodeLabels map[string]string, key string) string {
	if v, ok := nodeLabels[key]; ok {
		return key + "=" + v
	}
	return "no " + key + " label"
}
