// Command quickstart schedules a few pods onto a small embedded cluster with
// kube-scheduler's default profile and shows why each pod went where it did.
//
//	go run ./examples/quickstart
package main

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/yaml"

	"github.com/kubesched/kubesched"
	"github.com/kubesched/kubesched/framework"
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
	nodes, bound, err := decode(clusterYAML)
	if err != nil {
		return fmt.Errorf("cluster.yaml: %w", err)
	}
	_, pending, err := decode(podsYAML)
	if err != nil {
		return fmt.Errorf("pods.yaml: %w", err)
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
	cluster, err := sim.New(f, nodes, bound)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Cluster: %d nodes, %d pods running.\n", len(nodes), len(bound))
	for _, pod := range pending {
		fmt.Fprintf(out, "\nPod %s/%s\n", pod.Namespace, pod.Name)
		res, err := cluster.Place(context.Background(), pod)
		var fitErr *framework.FitError
		switch {
		case errors.As(err, &fitErr):
			fmt.Fprintf(out, "  unschedulable: %v\n", fitErr)
			continue
		case err != nil:
			return err
		}
		fmt.Fprintf(out, "  -> %s (%d of %d nodes feasible)\n", res.SuggestedHost, res.FeasibleNodes, res.EvaluatedNodes)
		printRejections(out, res.Diagnosis)
		printScores(out, res)
	}
	return nil
}

// printRejections lists each rejected node with the plugin and reason.
func printRejections(out io.Writer, d framework.Diagnosis) {
	rejected := maps.Collect(d.Rejected())
	for _, name := range slices.Sorted(maps.Keys(rejected)) {
		s := rejected[name]
		fmt.Fprintf(out, "  %-8s rejected by %s: %s\n", name, s.Plugin(), s.Message())
	}
}

// printScores prints one row per feasible node, best first, one column per plugin.
func printScores(out io.Writer, res *framework.Result) {
	scores := res.NodeScores()
	if len(scores) == 0 {
		fmt.Fprintln(out, "  (only one node fits, so nothing is scored)")
		return
	}
	slices.SortFunc(scores, func(a, b framework.NodePluginScores) int {
		return cmp.Or(cmp.Compare(b.TotalScore, a.TotalScore), strings.Compare(a.Name, b.Name))
	})
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	header := []string{"node"}
	for _, s := range scores[0].Scores {
		header = append(header, shorten(s.Name))
	}
	fmt.Fprintln(tw, "  "+strings.Join(append(header, "total"), "\t"))
	for _, ns := range scores {
		row := []string{ns.Name}
		for _, s := range ns.Scores {
			row = append(row, fmt.Sprint(s.Score))
		}
		row = append(row, fmt.Sprint(ns.TotalScore))
		fmt.Fprintln(tw, "  "+strings.Join(row, "\t"))
	}
	tw.Flush()
}

// shorten keeps the table narrow.
func shorten(plugin string) string {
	return strings.NewReplacer("NodeResourcesBalancedAllocation", "Balanced", "NodeResourcesFit", "Fit", "TaintToleration", "Taint").Replace(plugin)
}

// decode reads a multi-document YAML stream of Nodes and Pods.
func decode(data []byte) ([]*v1.Node, []*v1.Pod, error) {
	var nodes []*v1.Node
	var pods []*v1.Pod
	docs := yaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		doc, err := docs.Read()
		if err == io.EOF {
			return nodes, pods, nil
		}
		if err != nil {
			return nil, nil, err
		}
		var meta struct {
			Kind string `json:"kind"`
		}
		if err := yaml.Unmarshal(doc, &meta); err != nil {
			return nil, nil, err
		}
		switch meta.Kind {
		case "Node":
			n := &v1.Node{}
			if err := yaml.UnmarshalStrict(doc, n); err != nil {
				return nil, nil, err
			}
			nodes = append(nodes, n)
		case "Pod":
			p := &v1.Pod{}
			if err := yaml.UnmarshalStrict(doc, p); err != nil {
				return nil, nil, err
			}
			pods = append(pods, p)
		case "":
			// A document of comments only.
		default:
			return nil, nil, fmt.Errorf("unexpected kind %q", meta.Kind)
		}
	}
}
