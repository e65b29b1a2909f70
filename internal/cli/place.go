package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"

	v1 "k8s.io/api/core/v1"
	resourceapi "k8s.io/api/resource/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/loader"
	"github.com/kubesched/kubesched/sim"
)

// place places the pending pods of one profile one after another, each
// placement committed for the next; whatif first adds and removes nodes.
func place(ctx context.Context, st *state, o *options, whatif bool, stdout, stderr io.Writer) (int, error) {
	profile, fw, err := st.placingProfile(o)
	if err != nil {
		return 0, err
	}
	var pending []*v1.Pod
	others := 0
	for _, p := range st.cluster.Pending() {
		if profileOf(p) == profile {
			pending = append(pending, p)
		} else {
			others++
		}
	}
	if others > 0 {
		fmt.Fprintf(stderr, "kubesched: %d pending pods of other profiles than %s left alone\n", others, profile)
	}
	rep := placeReport{APIVersion: jsonAPIVersion, Kind: "Placement", KubeScheduler: st.release.Version(), Placements: []placement{}}
	if whatif {
		if len(o.addNodes) == 0 && len(o.rmNodes) == 0 {
			return 0, errors.New("whatif without --add-node or --remove-node: use place")
		}
		// The nodes added are in the cluster already (see load).
		rep.Changes = st.added
	}
	c, err := sim.New(fw, st.cluster.Nodes, st.cluster.Bound(), st.cluster.Objects...)
	if err != nil {
		return 0, err
	}
	if whatif {
		evicted, changes, err := removeNodes(c, o.rmNodes)
		if err != nil {
			return 0, err
		}
		rep.Changes = append(changes, rep.Changes...)
		pending = append(pending, evicted...)
	}

	var opts []sim.PlaceOption
	if !o.givenOrder {
		opts = append(opts, sim.InQueueOrder())
	}
	if o.firstFit {
		opts = append(opts, sim.FirstFit())
	}
	// Preemptions acted on, by the pod's position.
	preempted := map[int]*preemptionReport{}
	if o.preempt {
		opts = append(opts, sim.Preempt(func(i int, p *fwk.Preemption) {
			preempted[i] = preemptionOf(&framework.FitError{Preemption: p})
			rep.Evicted += len(p.Victims)
		}))
	}
	progress := newProgress(stderr, "placed", len(pending), o.quiet)
	var explainErr error
	opts = append(opts, sim.AfterEach(func(i int, res *framework.Result, err error) {
		progress.step()
		pod := pending[i]
		pl := placement{Pod: pod.Namespace + "/" + pod.Name}
		var fe *framework.FitError
		if p := preempted[i]; p != nil {
			pl.Preemption, pl.Preempted = p, true
		}
		switch {
		case res != nil:
			pl.Node = res.SuggestedHost
			rep.Placed++
		case notTriedOf(err) != nil:
			pl.NotTried, pl.Message = notTriedOf(err), err.Error()
			rep.Pending++
			rep.NotTried++
		default:
			pl.Message = err.Error()
			rep.Pending++
			if errors.As(err, &fe) && pl.Preemption == nil {
				pl.Preemption = preemptionOf(fe)
			}
			// Why, node by node, on the cluster as it stands now.
			if e, err := c.Explain(ctx, pod); err == nil {
				pl.Closest = closeNodes(e, o.closest)
			} else if explainErr == nil {
				explainErr = err
			}
		}
		rep.Placements = append(rep.Placements, pl)
	}))
	if _, err := c.PlaceAll(ctx, pending, opts...); err != nil {
		return 0, err
	}
	progress.finish()
	rep.Workloads = workloadsPlaced(st.workloads, rep.Placements)
	if explainErr != nil {
		return 0, explainErr
	}
	status := exitOK
	if rep.Pending > 0 {
		status = exitUnschedulable
	}
	switch o.output {
	case "json":
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return status, enc.Encode(rep)
	case "html":
		return status, writePlaceHTML(stdout, &rep)
	}
	writePlaceTable(stdout, &rep, o)
	return status, nil
}

// removeNodes removes the nodes called names from c. It returns the pods
// of those nodes to place again, and what it did.
func removeNodes(c *sim.Cluster, names []string) ([]*v1.Pod, []string, error) {
	var evicted []*v1.Pod
	var changes []string
	for _, name := range names {
		ni, ok := c.NodeInfo(name)
		if !ok {
			return nil, nil, fmt.Errorf("--remove-node %s: no such node", name)
		}
		moved, stay := 0, 0
		for _, pi := range ni.Pods() {
			// As kubectl drain: DaemonSet and static pods belong to the
			// node and go with it.
			if ownedByDaemonSet(pi.Pod) || pi.Pod.Annotations[v1.MirrorPodAnnotationKey] != "" {
				stay++
				continue
			}
			p := pi.Pod.DeepCopy()
			p.Spec.NodeName = ""
			p.Status = v1.PodStatus{Phase: v1.PodPending}
			evicted = append(evicted, p)
			moved++
		}
		if err := c.RemoveNode(name); err != nil {
			return nil, nil, err
		}
		changes = append(changes, fmt.Sprintf("removed %s: %d of its pods to place again, %d DaemonSet or static pods gone with it", name, moved, stay))
	}
	return evicted, changes, nil
}

// maxAddedNodes bounds the nodes --add-node adds in all, so that a typo
// (x100000000) is an error rather than a machine out of memory.
const maxAddedNodes = 100_000

// additions are the nodes --add-node adds, with the objects that belong
// to each: its node-local ResourceSlices and its CSINode.
type additions struct {
	nodes   []*v1.Node
	objects []runtime.Object
	changes []string
}

// addedNodes reads each --add-node FILE[xN] and makes N copies of each
// node in FILE, named <name>-1 to <name>-N when N > 1, each with copies
// of the ResourceSlices of that node (spec.nodeName) and its CSINode
// found in FILE, renamed after the copy. FILE's objects get the API
// server's defaults, in namespace where they name none.
func addedNodes(specs []string, namespace string) (*additions, error) {
	add := &additions{}
	for _, spec := range specs {
		file, n, err := parseAddNode(spec)
		if err != nil {
			return nil, fmt.Errorf("--add-node %s: %w", spec, err)
		}
		tmpl, err := loadTemplate(file, namespace)
		if err != nil {
			return nil, fmt.Errorf("--add-node %s: %w", spec, err)
		}
		if total := len(add.nodes) + n*len(tmpl.Nodes); total > maxAddedNodes {
			return nil, fmt.Errorf("--add-node %s: %d nodes in all, more than the %d kubesched adds", spec, total, maxAddedNodes)
		}
		for _, template := range tmpl.Nodes {
			nodeSlices, csiNode := nodeObjects(tmpl, template.Name)
			for i := range n {
				name := template.Name
				if n > 1 {
					name = fmt.Sprintf("%s-%d", template.Name, i+1)
				}
				add.nodes = append(add.nodes, copyNode(template, name))
				for _, s := range nodeSlices {
					add.objects = append(add.objects, copySlice(s, template.Name, name))
				}
				if csiNode != nil {
					cn := csiNode.DeepCopy()
					cn.Name, cn.UID, cn.ResourceVersion = name, "", ""
					add.objects = append(add.objects, cn)
				}
			}
			what := "node " + template.Name
			if n > 1 {
				what = fmt.Sprintf("%d nodes like %s (%s-1 to %s-%d)", n, template.Name, template.Name, template.Name, n)
			}
			if len(nodeSlices) > 0 || csiNode != nil {
				what += fmt.Sprintf(", each with its %d ResourceSlice(s)", len(nodeSlices))
				if csiNode != nil {
					what += " and its CSINode"
				}
			}
			add.changes = append(add.changes, fmt.Sprintf("added %s from %s", what, file))
		}
	}
	return add, nil
}

// nodeObjects returns the ResourceSlices of c local to the node called
// node and its CSINode, nil without one.
func nodeObjects(c *loader.Cluster, node string) ([]*resourceapi.ResourceSlice, *storagev1.CSINode) {
	var (
		out     []*resourceapi.ResourceSlice
		csiNode *storagev1.CSINode
	)
	for _, o := range c.Objects {
		switch o := o.(type) {
		case *resourceapi.ResourceSlice:
			if o.Spec.NodeName != nil && *o.Spec.NodeName == node {
				out = append(out, o)
			}
		case *storagev1.CSINode:
			if o.Name == node {
				csiNode = o
			}
		}
	}
	return out, csiNode
}

// copyNode copies template under name, with its kubernetes.io/hostname
// label, if any, set to it.
func copyNode(template *v1.Node, name string) *v1.Node {
	node := template.DeepCopy()
	node.UID, node.ResourceVersion = "", ""
	if name != template.Name {
		node.Name = name
		if node.Labels[v1.LabelHostname] != "" {
			node.Labels[v1.LabelHostname] = name
		}
	}
	return node
}

// copySlice copies a ResourceSlice of node from for node to: its
// spec.nodeName, and its name and pool name with from replaced by to (or
// to appended where they do not hold from), so that each copy is a pool
// of its own, as each node's driver publishes one.
func copySlice(s *resourceapi.ResourceSlice, from, to string) *resourceapi.ResourceSlice {
	c := s.DeepCopy()
	c.UID, c.ResourceVersion = "", ""
	if from == to {
		return c
	}
	rename := func(v string) string {
		if strings.Contains(v, from) {
			return strings.ReplaceAll(v, from, to)
		}
		return v + "-" + to
	}
	c.Name = rename(c.Name)
	c.Spec.Pool.Name = rename(c.Spec.Pool.Name)
	c.Spec.NodeName = &to
	return c
}

// parseAddNode splits FILExN into the file and the count, 1 without a
// suffix. A count that is not a positive number is an error.
func parseAddNode(spec string) (string, int, error) {
	i := strings.LastIndexByte(spec, 'x')
	if i <= 0 {
		return spec, 1, nil
	}
	suffix := spec[i+1:]
	if suffix == "" || strings.ContainsAny(suffix, "/.") {
		// A file whose name has an x in it, not a count.
		return spec, 1, nil
	}
	n, err := strconv.Atoi(suffix)
	if err != nil || n < 1 {
		if _, statErr := os.Stat(spec); statErr == nil {
			return spec, 1, nil
		}
		return "", 0, fmt.Errorf("%q after the last x is not a count of nodes (FILExN, N from 1 to %d)", suffix, maxAddedNodes)
	}
	if n > maxAddedNodes {
		return "", 0, fmt.Errorf("%d copies: kubesched adds at most %d nodes", n, maxAddedNodes)
	}
	return spec[:i], n, nil
}

// loadTemplate reads a node file: at least one Node, with any objects
// that belong to its nodes, defaulted as the cluster's are.
func loadTemplate(file, namespace string) (*loader.Cluster, error) {
	c, err := loader.Load(file)
	if err != nil {
		return nil, err
	}
	if len(c.Nodes) == 0 {
		return nil, errors.New("the file holds no Node")
	}
	c.Default(loader.DefaultOptions{Namespace: namespace})
	if err := c.Check(); err != nil {
		return nil, err
	}
	return c, nil
}

// workloadsPlaced counts, for each workload, how many of the pods made
// for it were placed.
func workloadsPlaced(workloads []loader.ExpandedWorkload, placements []placement) []workloadReport {
	node := make(map[string]string, len(placements))
	for _, p := range placements {
		node[p.Pod] = p.Node
	}
	var out []workloadReport
	for _, wl := range workloads {
		r := workloadReport{Workload: wl.Kind + " " + wl.Namespace + "/" + wl.Name, Pods: len(wl.Pods)}
		for _, name := range wl.Pods {
			if node[wl.Namespace+"/"+name] != "" {
				r.Placed++
			}
		}
		out = append(out, r)
	}
	return out
}

func ownedByDaemonSet(p *v1.Pod) bool {
	for _, r := range p.OwnerReferences {
		if r.Kind == "DaemonSet" && r.Controller != nil && *r.Controller {
			return true
		}
	}
	return false
}

// writePlaceTable prints a place or whatif run for people.
func writePlaceTable(w io.Writer, rep *placeReport, o *options) {
	for _, c := range rep.Changes {
		fmt.Fprintf(w, "What if: %s.\n", c)
	}
	order := "kube-scheduler's queue order (priority, then age)"
	if o.givenOrder {
		order = "the order given"
	}
	how := "kube-scheduler's best node"
	if o.firstFit {
		how = "first fit"
	}
	fmt.Fprintf(w, "Placed %d of %d pending pods as kube-scheduler %s would, in %s, each on %s, each placement kept for the next", rep.Placed, rep.Placed+rep.Pending, rep.KubeScheduler, order, how)
	if rep.NotTried > 0 {
		fmt.Fprintf(w, "; %d not tried, as kube-scheduler does not try them", rep.NotTried)
	}
	if rep.Evicted > 0 {
		fmt.Fprintf(w, "; %d pod(s) evicted by preemption", rep.Evicted)
	}
	fmt.Fprint(w, ".\n\n")
	if len(rep.Workloads) > 0 {
		fmt.Fprintln(w, "Pods made from workloads, as their controllers would:")
		for _, wl := range rep.Workloads {
			fmt.Fprintf(w, "  %s: %d of %d placed\n", wl.Workload, wl.Placed, wl.Pods)
		}
		fmt.Fprintln(w)
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "POD\tNODE")
	for _, p := range rep.Placements {
		node := p.Node
		switch {
		case node != "" && p.Preempted:
			node += fmt.Sprintf(" (after evicting %d pod(s))", len(p.Preemption.Victims))
		case p.NotTried != nil:
			node = "(not tried) " + p.Message
		case node == "":
			node = "(none) " + p.Message
		}
		fmt.Fprintf(tw, "%s\t%s\n", p.Pod, node)
	}
	tw.Flush()
	first := true
	for _, p := range rep.Placements {
		if p.Preemption == nil {
			continue
		}
		if first {
			if o.preempt {
				fmt.Fprintln(w, "\nPreemption, acted on as kube-scheduler does (the victims deleted, the pod placed in the next cycle):")
			} else {
				fmt.Fprintln(w, "\nPreemption, as kube-scheduler would decide it when the pod was tried (not acted on; --preempt acts on it):")
			}
			first = false
		}
		fmt.Fprintf(w, "  %s %s\n", p.Pod, p.Preemption.Sentence())
	}
	first = true
	for _, p := range rep.Placements {
		if p.Node != "" || len(p.Closest) == 0 {
			continue
		}
		if first {
			fmt.Fprintln(w, "\nClosest to fitting, when each pod was tried:")
			first = false
		}
		fmt.Fprintf(w, "  %s\n", p.Pod)
		for _, c := range p.Closest {
			fmt.Fprintf(w, "    %s: %s\n", c.Name, strings.Join(c.Reasons, "; "))
		}
	}
}
