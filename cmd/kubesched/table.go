package main

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/kubesched/kubesched/framework"
)

// writeTable prints one pod's report for people: kube-scheduler's
// answer, every node's verdicts, the closest nodes and the scores, with
// at most maxNodes nodes (0: all).
func writeTable(w io.Writer, r *podReport, maxNodes int) {
	fmt.Fprintf(w, "Pod %s (profile %s)\n", r.Pod, r.Profile)
	if r.Node != "" {
		fmt.Fprintf(w, "kube-scheduler %s: binds it to %s (%d of %d nodes evaluated are feasible)", r.KubeScheduler, r.Node, r.FeasibleNodes, r.EvaluatedNodes)
		if len(r.Tied) > 0 {
			fmt.Fprintf(w, "; tied with %s, of which it picks one at random", strings.Join(r.Tied, ", "))
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
			for _, d := range f.Details {
				fmt.Fprintf(tw, "  %s\t%s: %s\n", n.Name, f.Plugin, d)
			}
		}
	}
	tw.Flush()
	if details.Len() > 0 {
		fmt.Fprintf(w, "\nWhat the filters found:\n%s", details.String())
	}

	if len(r.Closest) > 0 && r.Node == "" {
		fmt.Fprintln(w, "\nClosest to fitting (fewest rejecting filters, then smallest shortfall):")
		for _, name := range r.Closest {
			n := r.node(name)
			var why []string
			for _, f := range n.Filters {
				if f.Verdict != "reject" {
					continue
				}
				short := make([]framework.Shortfall, len(f.Shortfalls))
				for i, sf := range f.Shortfalls {
					short[i] = framework.Shortfall{Resource: sf.Resource, Requested: sf.Requested, Allocatable: sf.Allocatable, Used: sf.Used}
				}
				why = append(why, obstacle(f.Plugin, f.Details, short, f.Reasons))
			}
			if len(why) == 0 && n.KubeScheduler != nil {
				why = n.KubeScheduler.Reasons
			}
			fmt.Fprintf(w, "  %s: %s\n", name, strings.Join(why, "; "))
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
