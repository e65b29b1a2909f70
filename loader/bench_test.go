package loader_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"testing"

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
