package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

// documentSeparator splits the multi-document YAML of a scenario.
const documentSeparator = "---\n"

// MarshalScenario writes s as multi-document YAML: every Node, then every
// bound Pod, then the incoming Pod last. [ParseScenario] reads it back, and
// kubectl could create the objects as they are.
func MarshalScenario(s *Scenario) ([]byte, error) {
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "# %d nodes, %d bound pods; the last Pod is the one to schedule.\n", len(s.Nodes), len(s.Pods))
	var docs []map[string]any
	for _, n := range s.Nodes {
		n = n.DeepCopy()
		n.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Node"}
		doc, err := toMap(n)
		if err != nil {
			return nil, err
		}
		// Zero-valued status structs are printed in full otherwise.
		status, _ := doc["status"].(map[string]any)
		if n.Status.DaemonEndpoints == (v1.NodeDaemonEndpoints{}) {
			delete(status, "daemonEndpoints")
		}
		if n.Status.NodeInfo == (v1.NodeSystemInfo{}) {
			delete(status, "nodeInfo")
		}
		docs = append(docs, doc)
	}
	for _, p := range append(slices.Clone(s.Pods), s.Pod) {
		p = p.DeepCopy()
		p.TypeMeta = metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"}
		doc, err := toMap(p)
		if err != nil {
			return nil, err
		}
		docs = append(docs, doc)
	}
	for _, doc := range docs {
		// Every object carries a null creationTimestamp: only noise here.
		if meta, ok := doc["metadata"].(map[string]any); ok && meta["creationTimestamp"] == nil {
			delete(meta, "creationTimestamp")
		}
		data, err := yaml.Marshal(doc)
		if err != nil {
			return nil, err
		}
		buf.WriteString(documentSeparator)
		buf.Write(data)
	}
	return buf.Bytes(), nil
}

// toMap converts an API object to its generic JSON form.
func toMap(obj any) (map[string]any, error) {
	data, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	return m, json.Unmarshal(data, &m)
}

// ParseScenario reads what [MarshalScenario] wrote: Nodes and Pods in any
// order, where the last Pod is the incoming one and the others are bound.
func ParseScenario(data []byte) (*Scenario, error) {
	s := &Scenario{}
	var pods []*v1.Pod
	for i, doc := range bytes.Split(data, []byte(documentSeparator)) {
		var meta metav1.TypeMeta
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			return nil, fmt.Errorf("document %d: %w", i, err)
		}
		switch meta.Kind {
		case "":
			// The header comment, or an empty document.
		case "Node":
			n := &v1.Node{}
			if err := yaml.UnmarshalStrict(doc, n); err != nil {
				return nil, fmt.Errorf("document %d: %w", i, err)
			}
			s.Nodes = append(s.Nodes, n)
		case "Pod":
			p := &v1.Pod{}
			if err := yaml.UnmarshalStrict(doc, p); err != nil {
				return nil, fmt.Errorf("document %d: %w", i, err)
			}
			pods = append(pods, p)
		default:
			return nil, fmt.Errorf("document %d: unexpected kind %q", i, meta.Kind)
		}
	}
	if len(pods) == 0 {
		return nil, fmt.Errorf("scenario has no Pod to schedule")
	}
	s.Pods, s.Pod = pods[:len(pods)-1], pods[len(pods)-1]
	return s, nil
}

// Minimize shrinks s while stillFails keeps returning true for the smaller
// scenario: it drops nodes one at a time (with the pods bound to them, and
// never the last node), then bound pods one at a time, and repeats until no
// single removal keeps the failure. s is not modified.
func Minimize(s *Scenario, stillFails func(*Scenario) bool) *Scenario {
	current := &Scenario{Seed: s.Seed, Nodes: slices.Clone(s.Nodes), Pods: slices.Clone(s.Pods), Pod: s.Pod}
	for changed := true; changed; {
		changed = false
		for i := 0; i < len(current.Nodes) && len(current.Nodes) > 1; {
			candidate := withoutNode(current, i)
			if stillFails(candidate) {
				current, changed = candidate, true
				continue
			}
			i++
		}
		for i := 0; i < len(current.Pods); {
			candidate := &Scenario{Seed: current.Seed, Nodes: current.Nodes, Pods: slices.Delete(slices.Clone(current.Pods), i, i+1), Pod: current.Pod}
			if stillFails(candidate) {
				current, changed = candidate, true
				continue
			}
			i++
		}
	}
	// What is left is no longer what the seed generates.
	if len(current.Nodes) != len(s.Nodes) || len(current.Pods) != len(s.Pods) {
		current.Seed = 0
	}
	return current
}

func withoutNode(s *Scenario, i int) *Scenario {
	name := s.Nodes[i].Name
	return &Scenario{
		Seed:  s.Seed,
		Nodes: slices.Delete(slices.Clone(s.Nodes), i, i+1),
		Pods:  slices.DeleteFunc(slices.Clone(s.Pods), func(p *v1.Pod) bool { return p.Spec.NodeName == name }),
		Pod:   s.Pod,
	}
}
