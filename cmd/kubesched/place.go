package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/framework"
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
	c, err := sim.New(fw, st.cluster.Nodes, st.cluster.Bound(), st.cluster.Objects...)
	if err != nil {
		return 0, err
	}
	rep := placeReport{KubeScheduler: st.release.Version(), Placements: []placement{}}
	if whatif {
		if len(o.addNodes) == 0 && len(o.rmNodes) == 0 {
			return 0, errors.New("whatif without --add-node or --remove-node: use place")
		}
		evicted, changes, err := change(c, o)
		if err != nil {
			return 0, err
		}
		rep.Changes = changes
		pending = append(pending, evicted...)
	}

	var opts []sim.PlaceOption
	if !o.givenOrder {
		opts = append(opts, sim.InQueueOrder())
	}
	if o.firstFit {
		opts = append(opts, sim.FirstFit())
	}
	progress := newProgress(stderr, "placed", len(pending), o.quiet)
	var explainErr error
	opts = append(opts, sim.AfterEach(func(i int, res *framework.Result, err error) {
		progress.step()
		pod := pending[i]
		pl := placement{Pod: pod.Namespace + "/" + pod.Name}
		var fe *framework.FitError
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
			if errors.As(err, &fe) {
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

// change applies whatif's --remove-node and --add-node to c. It returns
// the pods of removed nodes to place again, and what it did.
func change(c *sim.Cluster, o *options) ([]*v1.Pod, []string, error) {
	var evicted []*v1.Pod
	var changes []string
	for _, name := range o.rmNodes {
		ni, ok := c.NodeInfo(name)
		if !ok {
			return nil, nil, fmt.Errorf("--remove-node %s: no such node", name)
		}
		moved, stay := 0, 0
		for _, pi := range ni.Pods {
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
	for _, spec := range o.addNodes {
		file, n := parseAddNode(spec)
		nodes, err := loadNodes(file)
		if err != nil {
			return nil, nil, fmt.Errorf("--add-node %s: %w", spec, err)
		}
		for _, template := range nodes {
			for i := range n {
				node := template.DeepCopy()
				if n > 1 {
					node.Name = fmt.Sprintf("%s-%d", template.Name, i+1)
					if node.Labels[v1.LabelHostname] != "" {
						node.Labels[v1.LabelHostname] = node.Name
					}
				}
				if err := c.AddNode(node); err != nil {
					return nil, nil, fmt.Errorf("--add-node %s: %w", spec, err)
				}
			}
			what := "node " + template.Name
			if n > 1 {
				what = fmt.Sprintf("%d nodes like %s (%s-1 to %s-%d)", n, template.Name, template.Name, template.Name, n)
			}
			changes = append(changes, fmt.Sprintf("added %s from %s", what, file))
		}
	}
	return evicted, changes, nil
}

// parseAddNode splits FILExN into the file and the count, 1 without a
// suffix.
func parseAddNode(spec string) (string, int) {
	if i := strings.LastIndexByte(spec, 'x'); i > 0 {
		if n, err := strconv.Atoi(spec[i+1:]); err == nil && n > 0 {
			return spec[:i], n
		}
	}
	return spec, 1
}

// loadNodes reads the Nodes of a file; it must hold at least one.
func loadNodes(file string) ([]*v1.Node, error) {
	c, err := loader.Load(file)
	if err != nil {
		return nil, err
	}
	if len(c.Nodes) == 0 {
		return nil, errors.New("the file holds no Node")
	}
	return c.Nodes, nil
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
	fmt.Fprint(w, ".\n\n")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "POD\tNODE")
	for _, p := range rep.Placements {
		node := p.Node
		switch {
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
			fmt.Fprintln(w, "\nPreemption, as kube-scheduler would decide it when the pod was tried (not acted on):")
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
