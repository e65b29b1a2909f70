package cli

import (
	"context"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
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
	// release is the kube-scheduler release decided as.
	release *kubesched.Release
	cluster *loader.Cluster
	// frameworks are the profiles by schedulerName.
	frameworks map[string]*framework.Framework
	// workloads are the workloads whose pods the input lacked, with the
	// pods made for them.
	workloads []loader.ExpandedWorkload
	// added says what --add-node added to the cluster, a line per file.
	added []string
}

// load reads the cluster — from -f, or from cmd.Cluster — and builds the
// profiles.
func load(ctx context.Context, o *options, stdin io.Reader, stderr io.Writer, cmd Command) (*state, error) {
	c := &loader.Cluster{Skipped: map[string]int{}}
	switch {
	case cmd.Cluster != nil && len(o.files) > 0:
		return nil, fmt.Errorf("-f: %s reads the cluster itself", cmd.Name)
	case cmd.Cluster != nil:
		live, err := cmd.Cluster(ctx, o.namespace)
		if err != nil {
			return nil, err
		}
		c.Merge(live)
	case len(o.files) == 0:
		return nil, fmt.Errorf("no cluster state: give -f FILE, -f DIR or -f - for stdin")
	}
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
	// Hand-written manifests as the API server would have stored them,
	// then the pods their workloads' controllers would create, which
	// come out defaulted too.
	defaulted := c.Default(loader.DefaultOptions{Namespace: o.namespace})
	if err := c.Check(); err != nil {
		return nil, err
	}
	// The nodes whatif adds come after the cluster's, in first-fit
	// order, with the objects that belong to them, before the workloads
	// expand: a DaemonSet runs a pod on each added node it would choose.
	var added *additions
	if len(o.addNodes) > 0 {
		var err error
		if added, err = addedNodes(o.addNodes, o.namespace); err != nil {
			return nil, err
		}
		c.Nodes = append(c.Nodes, added.nodes...)
		c.Objects = append(c.Objects, added.objects...)
	}
	expanded, err := c.ExpandWorkloads()
	if err != nil {
		return nil, err
	}
	if !o.quiet {
		for _, line := range []string{defaulted.String(), expanded.String()} {
			if line != "" {
				fmt.Fprintln(stderr, "kubesched:", line)
			}
		}
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
	release := kubesched.Releases()[0]
	if o.version != "" {
		var err error
		if release, err = kubesched.ReleaseFor(o.version); err != nil {
			return nil, fmt.Errorf("--kubernetes-version: %w", err)
		}
	}
	if hint := olderKubelets(c.Nodes, release); hint != "" && !o.quiet {
		fmt.Fprintln(stderr, "kubesched:", hint)
	}
	st := &state{release: release, cluster: c, frameworks: map[string]*framework.Framework{}, workloads: expanded.Workloads}
	if added != nil {
		st.added = added.changes
	}
	if o.config == "" {
		fw, err := release.DefaultFramework(opts...)
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
	cfg, err := release.LoadConfig(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", o.config, err)
	}
	if st.frameworks, err = release.FrameworksFromConfig(cfg, opts...); err != nil {
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

// olderKubelets says which release to pass when every node's kubelet is
// of an older minor version than release, as on a cluster whose control
// plane has not moved to release yet; "" otherwise.
func olderKubelets(nodes []*v1.Node, release *kubesched.Release) string {
	chosen, ok := minorOf(release.Version())
	if !ok || len(nodes) == 0 {
		return ""
	}
	newest := -1
	for _, n := range nodes {
		m, ok := minorOf(n.Status.NodeInfo.KubeletVersion)
		if !ok {
			return ""
		}
		newest = max(newest, m)
	}
	if newest >= chosen {
		return ""
	}
	older := fmt.Sprintf("1.%d", newest)
	if _, err := kubesched.ReleaseFor(older); err != nil {
		return fmt.Sprintf("every node's kubelet is v%s or older, but kubesched decides as kube-scheduler %s; releases it can decide as: %s", older, release.Version(), supportedReleases())
	}
	return fmt.Sprintf("every node's kubelet is v%s or older, but kubesched decides as kube-scheduler %s; if the control plane runs v%s, pass --kubernetes-version %s", older, release.Version(), older, older)
}

// minorOf returns 37 of "v1.37.2" (or "v1.37.2-eks-1"), and false for
// anything that is not a v1 version.
func minorOf(version string) (int, bool) {
	rest, ok := strings.CutPrefix(strings.TrimPrefix(version, "v"), "1.")
	if !ok {
		return 0, false
	}
	end := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
	if end == 0 {
		return 0, false
	}
	if end < 0 {
		end = len(rest)
	}
	m, err := strconv.Atoi(rest[:end])
	return m, err == nil
}
