// Command sidebyside times kubesched and kube-scheduler's own framework in
// one process on scheduler_perf-shaped clusters and prints their
// throughput side by side. Every decision considers every node.
//
//	go run ./cmd/sidebyside -nodes 5000 -duration 5s -rounds 5
//
// Each scheduler's time on a workload is split into rounds that alternate
// between the schedulers, each round starting after a garbage collection,
// so that a slow spell of a shared machine, or one scheduler's garbage,
// weighs on both sides alike.
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
	rounds := flag.Int("rounds", 5, "how many alternating rounds the duration is split into")
	flag.Parse()
	if *numNodes < 1 || *numPods < 0 || *duration <= 0 || *rounds < 1 {
		log.Fatal("-nodes must be positive, -pods non-negative, -duration and -rounds positive")
	}

	ctx := context.Background()
	fw, err := kubesched.DefaultFramework(framework.WithPercentageOfNodesToScore(100))
	if err != nil {
		log.Fatalf("building kubesched: %v", err)
	}
	oracle, err := conformance.NewOracle()
	if err != nil {
		log.Fatalf("building upstream's framework: %v", err)
	}
	defer oracle.Close()

	table := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(table, "workload\tnodes\tupstream pods/s\tkubesched pods/s\tratio\t")
	for _, name := range testcluster.Workloads {
		// One cluster at a time, so that only the workload timed is on the heap.
		runtime.GC()
		w := conformance.NewPerfWorkload(name, *numNodes, *numPods)
		nodes := nodeinfo.Build(w.Nodes, w.Pods)
		oracle.SetCluster(w.Nodes, w.Pods)
		rates, err := alternate(*duration/time.Duration(*rounds), *rounds,
			func() error { _, err := oracle.SelectHost(ctx, w.Pod); return err },
			func() error { _, err := fw.Schedule(ctx, w.Pod, nodes); return err },
		)
		if err != nil {
			log.Fatalf("%s: %v", w.Name, err)
		}
		theirs := rates[0]
		fmt.Fprintf(table, "%s\t%d\t%.0f\t", w.Name, *numNodes, theirs)
		for _, ours := range rates[1:] {
			fmt.Fprintf(table, "%.0f\t%.2fx\t", ours, ours/theirs)
		}
		fmt.Fprintln(table)
	}
	table.Flush()
}

// alternate times each schedule function for rounds rounds of about d
// each, taking turns, and returns each one's calls per second over all its
// rounds. It stops at the first error.
func alternate(d time.Duration, rounds int, schedules ...func() error) ([]float64, error) {
	calls := make([]int, len(schedules))
	spent := make([]time.Duration, len(schedules))
	for i, schedule := range schedules {
		// One untimed call warms caches and checks the workload fits.
		if err := schedule(); err != nil {
			return nil, fmt.Errorf("scheduler %d: %w", i, err)
		}
	}
	for range rounds {
		for i, schedule := range schedules {
			runtime.GC()
			start := time.Now()
			for time.Since(start) < d {
				if err := schedule(); err != nil {
					return nil, fmt.Errorf("scheduler %d: %w", i, err)
				}
				calls[i]++
			}
			spent[i] += time.Since(start)
		}
	}
	rates := make([]float64, len(schedules))
	for i := range rates {
		rates[i] = float64(calls[i]) / spent[i].Seconds()
	}
	return rates, nil
}
