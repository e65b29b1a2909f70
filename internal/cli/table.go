package cli

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/kubesched/kubesched/fwk"
)

// ClosestWhy says, for a pod that fits nowhere, what stands in the way
// on each of the nodes closest to fitting; nothing for a pod that fits.
func (r *podReport) ClosestWhy() []closeNode {
	if r.Node != "" {
		return nil
	}
	var out []closeNode
	for _, name := range r.Closest {
		n := r.node(name)
		if n == nil {
			continue
		}
		c := closeNode{Name: name}
		for _, f := range n.Filters {
			if f.Verdict != "reject" {
				continue
			}
			short := make([]fwk.Shortfall, len(f.Shortfalls))
			for i, sf := range f.Shortfalls {
				short[i] = fwk.Shortfall{Resource: sf.Resource, Requested: sf.Requested, Allocatable: sf.Allocatable, Used: sf.Used}
			}
			c.Reasons = append(c.Reasons, obstacle(f.Plugin, f.Details, short, f.Reasons))
		}
		if len(c.Reasons) == 0 && n.KubeScheduler != nil {
			c.Reasons = n.KubeScheduler.Reasons
		}
		out = append(out, c)
	}
	return out
}

// Findings lists what the filters found on the nodes of the report, one
// line per finding, at most maxDetails per filter and node.
func (r *podReport) Findings() []string {
	var out []string
	for _, n := range r.Nodes {
		for _, f := range n.Filters {
			for i, d := range f.Details {
				if i == maxDetails && len(f.Details) > maxDetails+1 {
					out = append(out, fmt.Sprintf("%s: %s: ... and %d more (-o json has them all)", n.Name, f.Plugin, len(f.Details)-i))
					break
				}
				out = append(out, n.Name+": "+f.Plugin+": "+d)
			}
		}
	}
	return out
}

// maxDetails bounds the lines a table gives one filter's findings on one
// node (a node may have a thousand taints).
const maxDetails = 10

// writeTable prints one pod's report for people: kube-scheduler's
// answer, every node's verdicts, the closest nodes and the scores, with
// at most maxNodes nodes (0: all).
func writeTable(w io.Writer, r *podReport, maxNodes int) {
	fmt.Fprintf(w, "Pod %s (profile %s)\n", r.Pod, r.Profile)
	if r.Node != "" {
		fmt.Fprintf(w, "kube-scheduler %s: binds it to %s (%d of %d nodes evaluated are feasible)", r.KubeScheduler, r.Node, r.FeasibleNodes, r.EvaluatedNodes)
		if len(r.Tied) > 0 {
			fmt.Fprintf(w, "; tied with %s, of which it picks one at random", summarize(r.Tied, 10))
		}
		fmt.Fprintln(w, ".")
	} else if r.NotTried != nil {
		by := ""
		if r.NotTried.Plugin != "" {
			by = " (" + r.NotTried.Plugin + ")"
		}
		fmt.Fprintf(w, "kube-scheduler %s does not try it: %s%s\n", r.KubeScheduler, r.Message, by)
		return
	} else {
		fmt.Fprintf(w, "kube-scheduler %s: %s\n", r.KubeScheduler, r.Message)
		if r.Preemption != nil {
			fmt.Fprintf(w, "DefaultPreemption %s.\n", r.Preemption.Sentence())
		}
	}
	for _, v := range r.PreFilter {
		switch v.Verdict {
		case "reject", "error":
			fmt.Fprintf(w, "PreFilter %s rejects the pod on every node: %s\n", v.Plugin, strings.Join(v.Reasons, ", "))
		case "pass":
			for _, d := range v.Details {
				fmt.Fprintf(w, "PreFilter %s %s.\n", v.Plugin, d)
			}
		}
	}

	if classes := r.rejectionClasses(); len(classes) > 1 || len(classes) == 1 && len(classes[0].Nodes) > 1 {
		fmt.Fprintln(w, "\nRejected nodes by kube-scheduler's reason:")
		for _, c := range classes {
			fmt.Fprintf(w, "  %d × %s: %s\n", len(c.Nodes), c.Verdict, summarize(c.Nodes, 10))
		}
	}

	nodes := r.shown(maxNodes)
	fmt.Fprintln(w, "\nFilters (kube-scheduler reports the first rejection; the other rejections are kubesched's extra):")
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tKUBE-SCHEDULER\tALSO REJECTED BY")
	for _, n := range nodes {
		verdict, also := "fits", []string{}
		if ks := n.KubeScheduler; ks != nil {
			verdict = ks.Plugin + ": " + strings.Join(ks.Reasons, ", ")
			if ks.Plugin == "" {
				verdict = strings.Join(ks.Reasons, ", ")
			}
		}
		for _, f := range n.Filters {
			if f.Verdict == "reject" && (n.KubeScheduler == nil || f.Plugin != n.KubeScheduler.Plugin) {
				also = append(also, f.Plugin)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", n.Name, verdict, strings.Join(also, ", "))
	}
	tw.Flush()
	if hidden := len(r.Nodes) - len(nodes); hidden > 0 {
		fmt.Fprintf(w, "... and %d more nodes (--max-nodes 0 shows all).\n", hidden)
	}
	var details strings.Builder
	tw = tabwriter.NewWriter(&details, 0, 4, 2, ' ', 0)
	for _, n := range nodes {
		for _, f := range n.Filters {
			for i, d := range f.Details {
				if i == maxDetails && len(f.Details) > maxDetails+1 {
					fmt.Fprintf(tw, "  %s\t%s: ... and %d more (-o json has them all)\n", n.Name, f.Plugin, len(f.Details)-i)
					break
				}
				fmt.Fprintf(tw, "  %s\t%s: %s\n", n.Name, f.Plugin, d)
			}
		}
	}
	tw.Flush()
	if details.Len() > 0 {
		fmt.Fprintf(w, "\nWhat the filters found:\n%s", details.String())
	}

	if closest := r.ClosestWhy(); len(closest) > 0 {
		fmt.Fprintln(w, "\nClosest to fitting (fewest rejecting filters, then smallest shortfall):")
		for _, c := range closest {
			fmt.Fprintf(w, "  %s: %s\n", c.Name, strings.Join(c.Reasons, "; "))
		}
	}

	var feasible []*nodeReport
	for _, n := range nodes {
		if n.Feasible && len(n.Scores) > 0 {
			feasible = append(feasible, n)
		}
	}
	if len(feasible) == 0 {
		return
	}
	slices.SortStableFunc(feasible, func(a, b *nodeReport) int { return cmp.Compare(b.Total, a.Total) })
	fmt.Fprintln(w, "\nScores of the feasible nodes. Each cell is the plugin's score, then, after ->, the same")
	fmt.Fprintln(w, "normalized to 0-100 where the plugin normalizes; xN is the plugin's weight; TOTAL is the")
	fmt.Fprintln(w, "sum of normalized scores times weights, and the highest total wins:")
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	header := []string{"NODE"}
	for _, s := range r.Scores {
		header = append(header, fmt.Sprintf("%s x%d", s.Plugin, s.Weight))
	}
	fmt.Fprintln(tw, strings.Join(append(header, "TOTAL"), "\t")+"\t")
	for _, n := range feasible {
		row := []string{n.Name}
		for _, s := range n.Scores {
			cell := fmt.Sprint(s.Normalized)
			if s.Raw != s.Normalized {
				cell = fmt.Sprintf("%d->%d", s.Raw, s.Normalized)
			}
			row = append(row, cell)
		}
		total := fmt.Sprint(n.Total)
		if n.Name == r.Node {
			total += "  <- chosen"
		}
		fmt.Fprintln(tw, strings.Join(append(row, total), "\t")+"\t")
	}
	tw.Flush()
}
