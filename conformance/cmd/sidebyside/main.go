// Command sidebyside times kubesched and kube-scheduler's own framework in
// one process on scheduler_perf-shaped clusters and prints their
// throughput side by side. Every decision considers every node.
//
//	go run ./cmd/sidebyside -nodes 5000 -duration 5s
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"runtime"
	"text/tabwriter"
	"time"

	"github.com/kubesched/kubesched"
	"github.com/kubesched/kubesched/conformance"
	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/internal/testcluster"
	"github.com/kubesched/kubesched/nodeinfo"
)

func main() {
	numNodes := flag.Int("nodes", 5000, "nodes in the cluster")
	numPods := flag.Int("pods", 1000, "pods already running, spread over the nodes")
	duration := flag.Duration("duration", 3*time.Second, "how long to time each scheduler on each workload")
	flag.Parse()
	if *numNodes < 1 || *numPods < 0 || *duration <= 0 {
		log.Fatal("-nodes must be positive, -pods non-negative and -duration positive")
	}

	ctx := context.Background()
	fw, err := kubesched.DefaultFramework(framework.WithPercentageOfNodesToScore(100))
	if err != nil {
		log.Fatalf("building kubesched: %v", err)
	}
	// The same decision without the per-node score lists, for callers that
	// want only the placement.
	lean, err := kubesched.DefaultFramework(framework.WithPercentageOfNodesToScore(100), framework.WithoutNodeScores())
	if err != nil {
		log.Fatalf("building kubesched: %v", err)
	}
	oracle, err := conformance.NewOracle()
	if err != nil {
		log.Fatalf("building upstream's framework: %v", err)
	}
	defer oracle.Close()

	table := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(table, "workload\tnodes\tkubesched pods/s\tupstream pods/s\tratio\tkubesched, placement only\tratio\t")
	for _, name := range testcluster.Workloads {
		// One cluster at a time, so that only the workload timed is on the heap.
		runtime.GC()
		w := conformance.NewPerfWorkload(name, *numNodes, *numPods)
		nodes := nodeinfo.Build(w.Nodes, w.Pods)
		ours, err := throughput(*duration, func() error {
			_, err := fw.Schedule(ctx, w.Pod, nodes)
			return err
		})
		if err != nil {
			log.Fatalf("%s: kubesched: %v", w.Name, err)
		}
		placement, err := throughput(*duration, func() error {
			_, err := lean.Schedule(ctx, w.Pod, nodes)
			return err
		})
		if err != nil {
			log.Fatalf("%s: kubesched: %v", w.Name, err)
		}
		oracle.SetCluster(w.Nodes, w.Pods)
		theirs, err := throughput(*duration, func() error {
			_, err := oracle.SelectHost(ctx, w.Pod)
			return err
		})
		if err != nil {
			log.Fatalf("%s: upstream: %v", w.Name, err)
		}
		fmt.Fprintf(table, "%s\t%d\t%.0f\t%.0f\t%.2fx\t%.0f\t%.2fx\t\n", w.Name, *numNodes, ours, theirs, ours/theirs, placement, placement/theirs)
	}
	table.Flush()
}

// throughput calls schedule repeatedly for about d and returns calls per
// second. It stops at the first error.
func throughput(d time.Duration, schedule func() error) (float64, error) {
	// One untimed call warms caches and checks the workload fits.
	if err := schedule(); err != nil {
		return 0, err
	}
	start := time.Now()
	n := 0
	for time.Since(start) < d {
		if err := schedule(); err != nil {
			return 0, err
		}
		n++
	}
	return float64(n) / time.Since(start).Seconds(), nil
}
