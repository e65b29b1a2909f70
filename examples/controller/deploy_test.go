package main

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/kubernetes/scheme"
)

// TestTheManifestsArgsAreAccepted runs the command line of
// deploy/controller/kubesched.yaml's Deployment, with its ConfigMap's
// configuration, through the controller's own flag parsing.
func TestTheManifestsArgsAreAccepted(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("../../deploy/controller/kubesched.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var deployment *appsv1.Deployment
	var config *v1.ConfigMap
	docs := yaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := docs.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(doc, nil, nil)
		if err != nil {
			continue // comments only
		}
		switch o := obj.(type) {
		case *appsv1.Deployment:
			deployment = o
		case *v1.ConfigMap:
			config = o
		}
	}
	if deployment == nil || config == nil {
		t.Fatal("the manifest lacks its Deployment or ConfigMap")
	}
	dir := t.TempDir()
	var args []string
	for _, a := range deployment.Spec.Template.Spec.Containers[0].Args {
		if path, ok := strings.CutPrefix(a, "-config="); ok {
			file := filepath.Join(dir, filepath.Base(path))
			if err := os.WriteFile(file, []byte(config.Data[filepath.Base(path)]), 0o600); err != nil {
				t.Fatal(err)
			}
			a = "-config=" + file
		}
		args = append(args, a)
	}
	opts, err := parseFlags(args, io.Discard)
	if err != nil {
		t.Fatalf("the manifest's args %v: %v", args, err)
	}
	if sc := opts.config.SchedulerConfig; sc == nil || len(sc.Profiles) != 1 || *sc.Profiles[0].SchedulerName != defaultSchedulerName {
		t.Errorf("the manifest's configuration serves %v, want the one profile %s", sc, defaultSchedulerName)
	}
	if !opts.election.enabled || opts.election.name != "kubesched" || opts.healthAddr != ":10251" {
		t.Errorf("election %+v, health %q: the manifest's Role and probes expect the Lease kubesched and :10251", opts.election, opts.healthAddr)
	}
}
