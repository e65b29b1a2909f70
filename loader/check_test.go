package loader_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesched/kubesched/loader"
)

func TestCheck(t *testing.T) {
	t.Parallel()
	const node = "--- {apiVersion: v1, kind: Node, metadata: {name: n1}}\n"
	dir := t.TempDir()
	for name, content := range map[string]string{
		"nodes.yaml": node + "--- {apiVersion: v1, kind: Node, metadata: {name: n2}}\n" + node,
		"more.yaml":  node,
		"pods.yaml": "apiVersion: v1\nkind: List\nitems:\n" +
			"- {apiVersion: v1, kind: Pod, metadata: {name: web}}\n" +
			"- {apiVersion: v1, kind: Pod, metadata: {name: web, namespace: other}}\n" +
			"- {apiVersion: v1, kind: Pod, metadata: {name: web, namespace: default}}\n",
		"kinds.yaml": "--- {apiVersion: v1, kind: PersistentVolumeClaim, metadata: {name: data, namespace: default}}\n" +
			"--- {apiVersion: v1, kind: PersistentVolume, metadata: {name: data}}\n" +
			"--- {apiVersion: storage.k8s.io/v1, kind: StorageClass, metadata: {name: data}}\n" +
			"--- {apiVersion: apps/v1, kind: Deployment, metadata: {name: data, namespace: default}}\n",
		"classes.yaml": "--- {apiVersion: resource.k8s.io/v1, kind: DeviceClass, metadata: {name: gpu}}\n" +
			"--- {apiVersion: resource.k8s.io/v1beta2, kind: DeviceClass, metadata: {name: gpu}}\n",
		"unnamed.yaml":   node + "--- {apiVersion: v1, kind: Pod, metadata: {namespace: default}}\n",
		"generated.yaml": "--- {apiVersion: v1, kind: Pod, metadata: {generateName: web-}}\n--- {apiVersion: v1, kind: Pod, metadata: {generateName: web-}}\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	in := func(name string) string { return filepath.Join(dir, name) }
	for _, tc := range []struct {
		name        string
		paths       []string
		merge       bool // each path loaded on its own and merged, as the command does
		undefaulted bool
		wantErr     string
	}{
		{
			name:    "Two nodes of one name in one file are an error naming both documents.",
			paths:   []string{in("nodes.yaml")},
			wantErr: in("nodes.yaml") + `: document 3: Node "n1" is also in ` + in("nodes.yaml") + ": document 1",
		},
		{
			name:    "Two nodes of one name in two files loaded at once are an error naming both files.",
			paths:   []string{in("more.yaml"), in("kinds.yaml"), in("nodes.yaml")},
			wantErr: in("nodes.yaml") + `: document 1: Node "n1" is also in ` + in("more.yaml") + ": document 1",
		},
		{
			name:    "Two nodes of one name in two files loaded apart and merged are an error naming both files.",
			paths:   []string{in("more.yaml"), in("nodes.yaml")},
			merge:   true,
			wantErr: in("nodes.yaml") + `: document 1: Node "n1" is also in ` + in("more.yaml") + ": document 1",
		},
		{
			name:    "A pod without a namespace is the pod of that name in the namespace defaulting gives it.",
			paths:   []string{in("pods.yaml")},
			wantErr: in("pods.yaml") + `: document 1: item 3: Pod "default/web" is also in ` + in("pods.yaml") + ": document 1: item 1",
		},
		{
			name:    "A DeviceClass read as v1beta2 is the DeviceClass of its name in v1.",
			paths:   []string{in("classes.yaml")},
			wantErr: in("classes.yaml") + `: document 2: DeviceClass "gpu" is also in ` + in("classes.yaml") + ": document 1",
		},
		{
			name:  "Objects of different kinds may share a name.",
			paths: []string{in("kinds.yaml"), in("more.yaml")},
		},
		{
			name:    "An object with neither name nor generateName is an error with its place.",
			paths:   []string{in("unnamed.yaml")},
			wantErr: in("unnamed.yaml") + ": document 2 (Pod in namespace default): metadata.name: Required value: name or generateName is required",
		},
		{
			name:  "Objects of one generateName get names of their own.",
			paths: []string{in("generated.yaml")},
		},
		{
			name:        "An object with only a generateName, not yet defaulted, has no name yet.",
			paths:       []string{in("generated.yaml")},
			undefaulted: true,
			wantErr:     in("generated.yaml") + `: document 1 (Pod): metadata.name: Required value: generateName "web-" is not a name until Cluster.Default makes one of it`,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var c *loader.Cluster
			if tc.merge {
				c = &loader.Cluster{}
				for _, path := range tc.paths {
					part, err := loader.Load(path)
					if err != nil {
						t.Fatal(err)
					}
					c.Merge(part)
				}
			} else {
				var err error
				if c, err = loader.Load(tc.paths...); err != nil {
					t.Fatal(err)
				}
			}
			if !tc.undefaulted {
				c.Default(loader.DefaultOptions{})
			}
			err := c.Check()
			switch {
			case tc.wantErr == "" && err != nil:
				t.Errorf("Check: %v", err)
			case tc.wantErr != "" && (err == nil || err.Error() != tc.wantErr):
				t.Errorf("Check: %v\nwant the error %s", err, tc.wantErr)
			}
		})
	}
}

func TestCheckNamesObjectsNotReadWithoutAPlace(t *testing.T) {
	t.Parallel()
	read, err := loader.Read(strings.NewReader("apiVersion: v1\nkind: Node\nmetadata: {name: n1}\n"), "nodes.yaml")
	if err != nil {
		t.Fatal(err)
	}
	made := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}
	for _, tc := range []struct {
		name    string
		nodes   []*v1.Node
		wantErr string
	}{
		{"A node made after one read is named where it is found again.", []*v1.Node{read.Nodes[0], made}, `Node "n1" is in nodes.yaml: document 1 and again, from elsewhere than Read`},
		{"A node read after one made is named where it was read.", []*v1.Node{made, read.Nodes[0]}, `nodes.yaml: document 1: Node "n1" is also in the cluster already, from elsewhere than Read`},
		{"Two nodes made are named by name alone.", []*v1.Node{made, made.DeepCopy()}, `Node "n1" is in the cluster twice`},
		{"A node read, twice, is named where it was read.", []*v1.Node{read.Nodes[0], read.Nodes[0]}, `nodes.yaml: document 1: Node "n1" is in the cluster twice`},
		{"A node made without a name is named by its kind.", []*v1.Node{{}}, "Node: metadata.name: Required value: name or generateName is required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := &loader.Cluster{}
			c.Merge(read)
			c.Nodes = tc.nodes
			if err := c.Check(); err == nil || err.Error() != tc.wantErr {
				t.Errorf("Check: %v\nwant the error %s", err, tc.wantErr)
			}
		})
	}
}
