// Command quickstart places a few pods on a small embedded cluster with
// kube-scheduler's default profile and explains each decision: why nodes
// were rejected, how each plugin scored the others, and, for the pod that
// fits nowhere, what stands in the way on every node.
//
//	go run ./examples/quickstart
//
// The same, for any cluster dump, is the kubesched command:
//
//	go run ./cmd/kubesched place -f examples/quickstart/cluster.yaml -f examples/quickstart/pods.yaml
package main

import (
	"bytes"
	"context"
	_ "embed"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/kubesched/kubesched"
	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/loader"
	"github.com/kubesched/kubesched/sim"
)

var (
	//go:embed cluster.yaml
	clusterYAML []byte
	//go:embed pods.yaml
	podsYAML []byte
)

func main() {
	if err := run(os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

func run(out io.Writer) error {
	ctx := context.Background()
	// loader reads what kubectl get -o yaml writes: multi-document YAML
	// (cluster.yaml) or a List (pods.yaml).
	state, err := loader.Read(bytes.NewReader(clusterYAML), "cluster.yaml")
	if err != nil {
		return err
	}
	queue, err := loader.Read(bytes.NewReader(podsYAML), "pods.yaml")
	if err != nil {
		return err
	}
	// Every node scored and a fixed seed for ties, so the output is the same
	// on every run.
	f, err := kubesched.DefaultFramework(
		framework.WithPercentageOfNodesToScore(100),
		framework.WithRandSource(rand.NewPCG(2026, 11)),
	)
	if err != nil {
		return err
	}
	// The cluster keeps each placement for the next pod.
	cluster, err := sim.New(f, state.Nodes, state.Bound(), state.Objects...)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Cluster: %d nodes, %d pods running.\n", len(state.Nodes), len(state.Bound()))
	printLegend(out, f)

	for _, pod := range queue.Pending() {
		// Explain first, on the cluster as it is; then place, which commits.
		e, err := cluster.Explain(ctx, pod)
		if err != nil {
			return err
		}
		res, err := cluster.Place(ctx, pod)
		if err != nil && e.Err == nil {
			return err
		}
		if res == nil {
			fmt.Fprintf(out, "\nPod %s/%s fits nowhere: %v\n", pod.Namespace, pod.Name, e.Err)
			printEveryRejection(out, e)
			continue
		}
		fmt.Fprintf(out, "\nPod %s/%s -> %s (%d of %d nodes feasible)\n", pod.Namespace, pod.Name, res.SuggestedHost, res.FeasibleNodes, res.EvaluatedNodes)
		printFirstRejections(out, e)
		printScores(out, e, res.SuggestedHost)
	}
	return nil
}

// printLegend says how a node's score is made, from the framework's own
// list of plugins.
func printLegend(out io.Writer, f *framework.Framework) {
	var scorers []string
	for _, p := range f.Plugins() {
		if p.Weight > 0 {
			scorers = append(scorers, fmt.Sprintf("%s x%d", p.Name, p.Weight))
		}
	}
	fmt.Fprintf(out, "Score plugins and weights: %s.\n", strings.Join(scorers, ", "))
	fmt.Fprintln(out, "A score cell reads raw/weighted: the plugin's own score, then that normalized to 0-100")
	fmt.Fprintln(out, "and multiplied by the weight. The node with the highest total of weighted scores wins.")
	fmt.Fprintln(out, "Some plugins invert as they normalize: TaintToleration counts the PreferNoSchedule taints a")
	fmt.Fprintln(out, "pod does not tolerate, so a raw 1 is the worst. A plugin with nothing to score for a pod is")
	fmt.Fprintln(out, "left out of its table.")
}

// printFirstRejections lists each infeasible node with kube-scheduler's
// verdict and what the rejecting plugin found.
func printFirstRejections(out io.Writer, e *framework.Explanation) {
	for _, n := range e.Nodes {
		if n.Status == nil {
			continue
		}
		fmt.Fprintf(out, "  %-8s rejected by %s: %s\n", n.Name, n.Status.Plugin(), n.Status.Message())
		for _, v := range n.Filters {
			if v.Plugin != n.Status.Plugin() {
				continue
			}
			for _, d := range v.Details {
				fmt.Fprintf(out, "           %s\n", d.Message)
			}
		}
	}
}

// printEveryRejection lists, node by node, every filter that rejects the
// pod: kube-scheduler reports only the first (marked *), the others are
// what would still be in the way once it is fixed.
func printEveryRejection(out io.Writer, e *framework.Explanation) {
	fmt.Fprintln(out, "  Every filter that rejects it, node by node (* is the one kube-scheduler reports):")
	for _, n := range e.Nodes {
		fmt.Fprintf(out, "  %s\n", n.Name)
		for _, v := range n.Filters {
			if !v.Status.IsRejected() {
				continue
			}
			mark := " "
			if v.Plugin == n.Status.Plugin() {
				mark = "*"
			}
			if len(v.Details) == 0 {
				fmt.Fprintf(out, "    %s %s: %s\n", mark, v.Plugin, v.Status.Message())
			}
			for _, d := range v.Details {
				fmt.Fprintf(out, "    %s %s: %s\n", mark, v.Plugin, d.Message)
			}
		}
	}
	var closest []string
	for _, n := range e.Closest(2) {
		closest = append(closest, fmt.Sprintf("%s (%d filter(s) in the way)", n.Name, n.Rejections))
	}
	fmt.Fprintf(out, "  Closest to fitting: %s.\n", strings.Join(closest, ", "))
}

// printScores prints one row per feasible node, best first, one column
// per score plugin.
func printScores(out io.Writer, e *framework.Explanation, chosen string) {
	var rows []framework.NodeExplanation
	for _, n := range e.Nodes {
		if n.Status == nil {
			rows = append(rows, n)
		}
	}
	if len(rows) < 2 {
		fmt.Fprintln(out, "  (only one node fits: kube-scheduler does not score it)")
		return
	}
	// Best first; kube-scheduler's node order among equals.
	for i := 1; i < len(rows); i++ {
		for j := i; j > 0 && rows[j].Total > rows[j-1].Total; j-- {
			rows[j], rows[j-1] = rows[j-1], rows[j]
		}
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	header := []string{"  node"}
	for _, p := range e.Scores {
		header = append(header, p.Name)
	}
	fmt.Fprintln(tw, strings.Join(append(header, "total"), "\t"))
	for _, n := range rows {
		row := []string{"  " + n.Name}
		for _, s := range n.Scores {
			row = append(row, fmt.Sprintf("%d/%d", s.Raw, s.Weighted))
		}
		total := fmt.Sprint(n.Total)
		if n.Name == chosen {
			total += " <- chosen"
		}
		fmt.Fprintln(tw, strings.Join(append(row, total), "\t"))
	}
	tw.Flush()
}
