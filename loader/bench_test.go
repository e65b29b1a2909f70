package loader_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubesched/kubesched/loader"
)

// BenchmarkRead reads the dump in testdata with its items repeated, as
// kubectl get -o yaml and -o json write it.
func BenchmarkRead(b *testing.B) {
	data, err := os.ReadFile("testdata/kubectl-get.json")
	if err != nil {
		b.Fatal(err)
	}
	var list struct {
		APIVersion string            `json:"apiVersion"`
		Items      []json.RawMessage `json:"items"`
		Kind       string            `json:"kind"`
	}
	if err := json.Unmarshal(data, &list); err != nil {
		b.Fatal(err)
	}
	for _, copies := range []int{1, 100} {
		big := list
		big.Items = nil
		for range copies {
			big.Items = append(big.Items, list.Items...)
		}
		asJSON, err := json.MarshalIndent(big, "", "    ")
		if err != nil {
			b.Fatal(err)
		}
		asYAML, err := yaml.JSONToYAML(asJSON)
		if err != nil {
			b.Fatal(err)
		}
		for _, format := range []struct {
			name  string
			input []byte
		}{{"YAML", asYAML}, {"JSON", asJSON}} {
			b.Run(fmt.Sprintf("%ditems/%s", len(big.Items), format.name), func(b *testing.B) {
				if _, err := loader.Read(bytes.NewReader(format.input), "dump"); err != nil {
					b.Fatal(err)
				}
				b.SetBytes(int64(len(format.input)))
				b.ReportAllocs()
				for b.Loop() {
					loader.Read(bytes.NewReader(format.input), "dump")
				}
			})
		}
	}
}

// BenchmarkCheck checks clusters of many nodes and pods, none twice, as
// read from a large dump.
func BenchmarkCheck(b *testing.B) {
	for _, size := range []struct{ nodes, pods int }{{100, 3000}, {5000, 100000}} {
		b.Run(fmt.Sprintf("%dnodes/%dpods", size.nodes, size.pods), func(b *testing.B) {
			c := &loader.Cluster{}
			for i := range size.nodes {
				c.Nodes = append(c.Nodes, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("node-%d", i)}})
			}
			for i := range size.pods {
				c.Pods = append(c.Pods, &v1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: fmt.Sprintf("pod-%d", i)}})
			}
			if err := c.Check(); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for b.Loop() {
				c.Check()
			}
		})
	}
}
