package main

import (
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched"
	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/loader"
)

// defaultProfile is kube-scheduler's profile name when none is given.
const defaultProfile = v1.DefaultSchedulerName

// state is the cluster read from -f, with the frameworks to judge it.
type state struct {
	cluster *loader.Cluster
	// frameworks are the profiles by schedulerName.
	frameworks map[string]*framework.Framework
}

// load reads the cluster and builds the profiles.
func load(o *options, stdin io.Reader, stderr io.Writer) (*state, error) {
	if len(o.files) == 0 {
		return nil, fmt.Errorf("no cluster state: give -f FILE, -f DIR or -f - for stdin")
	}
	c := &loader.Cluster{Skipped: map[string]int{}}
	for _, path := range o.files {
		var part *loader.Cluster
		var err error
		if path == "-" {
			part, err = loader.Read(stdin, "stdin")
		} else {
			part, err = loader.Load(path)
		}
		if err != nil {
			return nil, err
		}
		c.Merge(part)
	}
	if len(c.Nodes) == 0 {
		return nil, fmt.Errorf("the input holds no Node (read %d pods, %d other objects)", len(c.Pods), len(c.Objects))
	}
	if err := checkBindings(c); err != nil {
		return nil, err
	}
	if len(c.Skipped) > 0 && !o.quiet {
		var parts []string
		for _, kind := range slices.Sorted(maps.Keys(c.Skipped)) {
			parts = append(parts, fmt.Sprintf("%d %s", c.Skipped[kind], kind))
		}
		fmt.Fprintf(stderr, "kubesched: skipped what the scheduler does not read: %s\n", strings.Join(parts, ", "))
	}
	opts := []framework.Option{
		framework.WithObjects(c.Objects...),
		framework.WithRandSource(rand.NewPCG(o.seed, o.seed)),
	}
	st := &state{cluster: c, frameworks: map[string]*framework.Framework{}}
	if o.config == "" {
		fw, err := kubesched.DefaultFramework(opts...)
		if err != nil {
			return nil, err
		}
		st.frameworks[defaultProfile] = fw
		return st, nil
	}
	data, err := os.ReadFile(o.config)
	if err != nil {
		return nil, err
	}
	cfg, err := kubesched.LoadConfig(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", o.config, err)
	}
	if st.frameworks, err = kubesched.FrameworksFromConfig(cfg, opts...); err != nil {
		return nil, fmt.Errorf("%s: %w", o.config, err)
	}
	return st, nil
}

// checkBindings rejects pods bound to nodes the input does not hold:
// kube-scheduler's cache would not count them anywhere, and a dump that
// lacks nodes gives answers about another cluster.
func checkBindings(c *loader.Cluster) error {
	nodes := make(map[string]bool, len(c.Nodes))
	for _, n := range c.Nodes {
		nodes[n.Name] = true
	}
	for _, p := range c.Bound() {
		if !nodes[p.Spec.NodeName] {
			return fmt.Errorf("pod %s/%s is bound to node %s, which the input does not hold (dump the nodes with the pods: kubectl get nodes,pods -A -o yaml)", p.Namespace, p.Name, p.Spec.NodeName)
		}
	}
	return nil
}

// profileOf returns the name of pod's profile.
func profileOf(pod *v1.Pod) string {
	if pod.Spec.SchedulerName == "" {
		return defaultProfile
	}
	return pod.Spec.SchedulerName
}

// placingProfile picks the profile place and whatif place pods with.
func (st *state) placingProfile(o *options) (string, *framework.Framework, error) {
	name := o.profile
	if name == "" {
		name = defaultProfile
		if len(st.frameworks) == 1 {
			for n := range st.frameworks {
				name = n
			}
		}
	}
	fw, ok := st.frameworks[name]
	if !ok {
		return "", nil, fmt.Errorf("no profile %q (have %s)", name, strings.Join(slices.Sorted(maps.Keys(st.frameworks)), ", "))
	}
	return name, fw, nil
}
