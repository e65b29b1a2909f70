package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/yaml"
)

// documentSeparator splits the multi-document YAML of a scenario.
const documentSeparator = "---\n"

// MarshalScenario writes s as multi-document YAML: every Node, then the
// other cluster objects (Namespaces first), then every bound Pod, then the
// incoming Pod last. [ParseScenario] reads it back, and kubectl could
// create the objects as they are.
func MarshalScenario(s *Scenario) ([]byte, error) {
	var buf bytes.Buffer
	fmt.Fprintf(&buf, "# %d nodes, %d other objects, %d bound pods; the last Pod is the one to schedule.\n", len(s.Nodes), len(s.Objects), len(s.Pods))
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
	// Namespaces go first, as kubectl needs them first.
	objects := slices.Clone(s.Objects)
	slices.SortStableFunc(objects, func(a, b runtime.Object) int {
		_, aNamespace := a.(*v1.Namespace)
		_, bNamespace := b.(*v1.Namespace)
		switch {
		case aNamespace && !bNamespace:
			return -1
		case bNamespace && !aNamespace:
			return 1
		}
		return 0
	})
	for _, obj := range objects {
		gvk, err := objectKind(obj)
		if err != nil {
			return nil, err
		}
		obj = obj.DeepCopyObject()
		obj.GetObjectKind().SetGroupVersionKind(gvk)
		doc, err := toMap(obj)
		if err != nil {
			return nil, err
		}
		// An empty spec (a Namespace's) or a status the API server has not
		// filled in yet is only noise. StorageClasses and
		// CSIStorageCapacities have neither.
		for field, key := range map[string]string{"Spec": "spec", "Status": "status"} {
			if v := reflect.ValueOf(obj).Elem().FieldByName(field); v.IsValid() && v.IsZero() {
				delete(doc, key)
			}
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
		dropNullTimestamps(doc)
		data, err := yaml.Marshal(doc)
		if err != nil {
			return nil, err
		}
		buf.WriteString(documentSeparator)
		buf.Write(data)
	}
	return buf.Bytes(), nil
}

// dropNullTimestamps deletes the null creationTimestamp that every object
// and pod template carries: only noise here.
func dropNullTimestamps(v any) {
	switch v := v.(type) {
	case map[string]any:
		for key, value := range v {
			if key == "creationTimestamp" && value == nil {
				delete(v, key)
				continue
			}
			dropNullTimestamps(value)
		}
	case []any:
		for _, value := range v {
			dropNullTimestamps(value)
		}
	}
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

// ParseScenario reads what [MarshalScenario] wrote: Nodes, Pods and the
// other kinds of [Scenario] Objects in any order, where the last Pod is the
// incoming one and the others are bound. Unknown kinds and fields are
// errors.
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
			gvk := meta.GroupVersionKind()
			if !slices.Contains(objectKinds, gvk) {
				return nil, fmt.Errorf("document %d: unexpected kind %q (apiVersion %q)", i, meta.Kind, meta.APIVersion)
			}
			obj, err := scheme.Scheme.New(gvk)
			if err != nil {
				return nil, fmt.Errorf("document %d: %w", i, err)
			}
			if err := yaml.UnmarshalStrict(doc, obj); err != nil {
				return nil, fmt.Errorf("document %d: %w", i, err)
			}
			s.Objects = append(s.Objects, obj)
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
// never the last node), then bound pods one at a time, then other objects
// one at a time, and repeats until no single removal keeps the failure. s
// is not modified.
func Minimize(s *Scenario, stillFails func(*Scenario) bool) *Scenario {
	current := &Scenario{Seed: s.Seed, Nodes: slices.Clone(s.Nodes), Pods: slices.Clone(s.Pods), Pod: s.Pod, Objects: slices.Clone(s.Objects)}
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
			candidate := *current
			candidate.Pods = slices.Delete(slices.Clone(current.Pods), i, i+1)
			if stillFails(&candidate) {
				current, changed = &candidate, true
				continue
			}
			i++
		}
		for i := 0; i < len(current.Objects); {
			candidate := *current
			candidate.Objects = slices.Delete(slices.Clone(current.Objects), i, i+1)
			if stillFails(&candidate) {
				current, changed = &candidate, true
				continue
			}
			i++
		}
	}
	// What is left is no longer what the seed generates.
	if len(current.Nodes) != len(s.Nodes) || len(current.Pods) != len(s.Pods) || len(current.Objects) != len(s.Objects) {
		current.Seed = 0
	}
	return current
}

func withoutNode(s *Scenario, i int) *Scenario {
	name := s.Nodes[i].Name
	return &Scenario{
		Seed:    s.Seed,
		Nodes:   slices.Delete(slices.Clone(s.Nodes), i, i+1),
		Pods:    slices.DeleteFunc(slices.Clone(s.Pods), func(p *v1.Pod) bool { return p.Spec.NodeName == name }),
		Pod:     s.Pod,
		Objects: s.Objects,
	}
}
