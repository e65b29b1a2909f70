// Command sidebyside times kubesched and kube-scheduler v1.37.2 in one
// process on scheduler_perf-shaped clusters and prints their throughput
// side by side, one table per cluster size.
//
// The upstream side is kube-scheduler's own scheduling algorithm,
// (*scheduler.Scheduler).SchedulePod, built by scheduler.New over the
// default profile ([conformance.Upstream]), so it includes whatever
// upstream does besides running plugins: its snapshot, the early stop of
// the adaptive percentageOfNodesToScore, the lookup of the nodes a
// PreFilterResult names. kubesched is timed two ways, each returning a
// new Result: Schedule over a plain []*nodeinfo.NodeInfo, which it checks
// in full on every call, and ScheduleSnapshot over a cache.Snapshot of the
// same cluster, which it trusts.
//
// Every workload is timed at each percentageOfNodesToScore of
// -percentages: 100 filters and scores every node; 0 is kube-scheduler's
// default, the adaptive percentage (46% of 500 nodes, 10% of 5000, 5% of
// 15000 and more), shown as "adaptive".
//
// The Preemption workload's pod fits no node, and each call is a whole
// scheduling attempt: the cycle, then the PostFilter plugins, where
// DefaultPreemption chooses a node and its victims. Upstream's side is
// [conformance.UpstreamPreemption], which decides without acting, as
// kubesched does; the percentage changes nothing here, since every node is
// filtered when none fits. Before timing, kubesched's decision, from each
// of its calls, must be one upstream could make
// ([conformance.PreemptionReference]).
//
//	go run ./cmd/sidebyside -nodes 500,5000,15000 -duration 5s -rounds 5
//	go run ./cmd/sidebyside -nodes 5000 -workloads Basic,Pinned -percentages 0
//	go run ./cmd/sidebyside -nodes 5000 -kubernetes-version 1.36
//
// With -kubernetes-version, kubesched decides as kubesched.ReleaseFor
// says, and the upstream side is that release's scheduler, built and run
// in a process of its own (cmd/oracle, see conformance.RemoteOracle): its
// rounds are timed there, between kubesched's here, so its rates do not
// include the pipe.
//
// Each scheduler's time on a workload is split into rounds that alternate
// between the schedulers, each round starting after a garbage collection,
// so that a slow spell of a shared machine, or one scheduler's garbage,
// weighs on both sides alike.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/kubesched/kubesched"
	"github.com/kubesched/kubesched/cache"
	"github.com/kubesched/kubesched/conformance"
	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/internal/testcluster"
	"github.com/kubesched/kubesched/nodeinfo"
)

func main() {
	nodesFlag := flag.String("nodes", "5000", "comma-separated cluster sizes, in nodes; one table each")
	numPods := flag.Int("pods", -1, "pods already running, spread over the nodes; -1 for one per 5 nodes, as in the root module's benchmarks and scheduler_perf (Preemption's nodes are full whatever it says)")
	percentagesFlag := flag.String("percentages", "100,0", "comma-separated percentageOfNodesToScore settings; 0 is kube-scheduler's adaptive default")
	workloadsFlag := flag.String("workloads", strings.Join(conformance.PerfWorkloadNames, ","), "comma-separated workloads to time")
	duration := flag.Duration("duration", 3*time.Second, "how long to time each scheduler on each workload at each percentage")
	rounds := flag.Int("rounds", 5, "how many alternating rounds the duration is split into")
	release := flag.String("kubernetes-version", "", "the kube-scheduler release to compare with, as 1.36 or v1.36.3: kubesched.ReleaseFor's, against that release run out of process (cmd/oracle, built from this directory); empty for the one this module links, in process")
	flag.Parse()
	sizes, err := parseInts(*nodesFlag, 1, 1<<20)
	if err != nil {
		log.Fatalf("-nodes: %v", err)
	}
	percentages, err := parseInts(*percentagesFlag, 0, 100)
	if err != nil {
		log.Fatalf("-percentages: %v", err)
	}
	workloads := strings.Split(*workloadsFlag, ",")
	for _, w := range workloads {
		if !slices.Contains(conformance.PerfWorkloadNames, w) {
			log.Fatalf("-workloads: unknown workload %q, want some of %s", w, strings.Join(conformance.PerfWorkloadNames, ","))
		}
	}
	if *numPods < -1 || *duration <= 0 || *rounds < 1 {
		log.Fatal("-pods must be -1 or more, -duration and -rounds positive")
	}

	ctx := context.Background()
	ours := kubesched.DefaultPlugins()
	var remote *conformance.RemoteOracle
	if *release != "" {
		r, err := kubesched.ReleaseFor(*release)
		if err != nil {
			log.Fatalf("-kubernetes-version: %v", err)
		}
		ours = r.DefaultPlugins()
		bin, cleanup, err := conformance.BuildReleaseOracle(".", r.Version())
		if err != nil {
			log.Fatal(err)
		}
		remote, err = conformance.StartRemoteOracle(bin)
		cleanup()
		if err != nil {
			log.Fatal(err)
		}
		defer remote.Close()
		fmt.Printf("kubesched as kube-scheduler %s against kube-scheduler %s out of process\n\n", r.Version(), r.Version())
	}
	// One upstream scheduler per setting, since the percentage is part of
	// its profile; each holds a cluster only while it is timed.
	upstreams := make([]*conformance.Upstream, len(percentages))
	for i, p := range percentages {
		if remote != nil {
			break
		}
		upstreams[i], err = conformance.NewUpstream(upstreamPercentage(p))
		if err != nil {
			log.Fatalf("building upstream's scheduler: %v", err)
		}
		defer upstreams[i].Close()
	}

	for i, numNodes := range sizes {
		if i > 0 {
			fmt.Println()
		}
		table := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
		header := false
		for _, name := range workloads {
			// One cluster at a time, so that only the workload timed is on the heap.
			runtime.GC()
			pods := *numPods
			if pods == -1 {
				// As many as PodAntiAffinity's pods can be without
				// filling every node.
				pods = numNodes / 5
			}
			w := conformance.NewPerfWorkload(name, numNodes, pods)
			for j, p := range percentages {
				var theirs timed
				var want verdict
				if remote != nil {
					theirs, want, err = remoteSide(ctx, remote, upstreamPercentage(p), w)
				} else {
					theirs, want, err = upstreamSide(ctx, upstreams[j], w)
				}
				if err != nil {
					log.Fatalf("%s: upstream: %v", name, err)
				}
				columns, err := kubeschedSide(ctx, ours, int32(p), w, want)
				if err != nil {
					log.Fatalf("%s: %v", name, err)
				}
				if !header {
					fmt.Fprint(table, "workload\tnodes\tpct\tupstream evaluated\tupstream pods/s\t")
					for _, c := range columns {
						fmt.Fprintf(table, "%s\tratio\t", c.name)
					}
					fmt.Fprintln(table)
					header = true
				}
				sides := []timed{theirs}
				for _, c := range columns {
					sides = append(sides, inProcess(c.schedule))
				}
				rates, err := alternate(*duration/time.Duration(*rounds), *rounds, sides...)
				if err != nil {
					log.Fatalf("%s: %v", name, err)
				}
				fmt.Fprintf(table, "%s\t%d\t%s\t%d\t%.0f\t", name, numNodes, percentageName(p), want.evaluated, rates[0])
				for _, rate := range rates[1:] {
					fmt.Fprintf(table, "%.0f\t%.2fx\t", rate, rate/rates[0])
				}
				fmt.Fprintln(table)
				// Let the cluster go before the next one is built.
				if remote != nil {
					err = remote.ClearTiming()
				} else {
					err = clearUpstream(ctx, upstreams[j])
				}
				if err != nil {
					log.Fatalf("%s: %v", name, err)
				}
			}
		}
		table.Flush()
	}
}

// column is one way of timing kubesched: a table column and the call it
// times.
type column struct {
	name     string
	schedule func() error
}

// verdict is upstream's verdict on a workload's pod, which kubesched's
// must agree with before either is timed.
type verdict struct {
	// feasible and evaluated are upstream's counts, for a pod that fits;
	// for Preemption's, evaluated is every node.
	feasible, evaluated int
	// preemption, for Preemption's pod, is what kubesched's decision must
	// agree with.
	preemption *conformance.PreemptionReference
}

// upstreamSide returns the call that times upstream on w, which u holds,
// and its verdict: the Preemption workload's through
// [conformance.UpstreamPreemption], the others' through u's Schedule.
func upstreamSide(ctx context.Context, u *conformance.Upstream, w conformance.PerfWorkload) (timed, verdict, error) {
	if err := u.SetObjects(ctx, w.Objects); err != nil {
		return nil, verdict{}, err
	}
	if err := u.SetCluster(w.Nodes, w.Pods); err != nil {
		return nil, verdict{}, err
	}
	if w.Name != testcluster.Preemption {
		res, err := u.Schedule(ctx, w.Pod)
		if err != nil {
			return nil, verdict{}, err
		}
		schedule := func() error { _, err := u.Schedule(ctx, w.Pod); return err }
		return inProcess(schedule), verdict{feasible: res.FeasibleNodes, evaluated: res.EvaluatedNodes}, nil
	}
	p, err := conformance.NewUpstreamPreemption(u)
	if err != nil {
		return nil, verdict{}, err
	}
	ref, err := p.Reference(ctx, w.Pod)
	if err != nil {
		return nil, verdict{}, err
	}
	schedule := func() error { _, err := p.Schedule(ctx, w.Pod); return err }
	return inProcess(schedule), verdict{evaluated: len(w.Nodes), preemption: ref}, nil
}

// clearUpstream lets u's cluster go.
func clearUpstream(ctx context.Context, u *conformance.Upstream) error {
	if err := u.SetCluster(nil, nil); err != nil {
		return err
	}
	return u.SetObjects(ctx, nil)
}

// remoteSide is upstreamSide for a release timed in the oracle's process,
// at upstream's percentage setting.
func remoteSide(ctx context.Context, remote *conformance.RemoteOracle, percentage *int32, w conformance.PerfWorkload) (timed, verdict, error) {
	preempt := w.Name == testcluster.Preemption
	setup, err := remote.SetUpTiming(ctx, percentage, preempt, &conformance.Scenario{Nodes: w.Nodes, Pods: w.Pods, Pod: w.Pod, Objects: w.Objects})
	if err != nil {
		return nil, verdict{}, err
	}
	round := func(d time.Duration) (int, time.Duration, error) {
		r, err := remote.TimeRound(d)
		if err != nil {
			return 0, 0, err
		}
		return r.Calls, r.Spent, nil
	}
	return round, verdict{feasible: setup.Feasible, evaluated: setup.Evaluated, preemption: setup.Reference}, nil
}

// preemptionChecks is how many of kubesched's decisions on Preemption's
// pod, each from a dry run from a random offset, are checked for each way
// of calling it.
const preemptionChecks = 3

// kubeschedSide returns kubesched's columns for w at percentage (0:
// adaptive), after checking that kubesched agrees with upstream's
// verdict: for a pod that fits, that it finds as many feasible nodes
// (among as many evaluated, when it searches them all); for Preemption's,
// that it makes a decision upstream could make. It is the only code that
// calls kubesched, so that a change of kubesched's API changes this
// function alone.
func kubeschedSide(ctx context.Context, plugins kubesched.Plugins, percentage int32, w conformance.PerfWorkload, want verdict) ([]column, error) {
	fw, err := plugins.Framework(framework.WithPercentageOfNodesToScore(percentage), framework.WithObjects(w.Objects...))
	if err != nil {
		return nil, fmt.Errorf("building kubesched: %w", err)
	}
	nodes := nodeinfo.Build(w.Nodes, w.Pods)
	// The cluster as a scheduler holds it, in a cache, as upstream's side
	// holds it in its own.
	c, err := cache.New()
	if err != nil {
		return nil, err
	}
	for _, n := range w.Nodes {
		if _, err := c.AddNode(n); err != nil {
			return nil, err
		}
	}
	for _, p := range w.Pods {
		if err := c.AddPod(p); err != nil {
			return nil, err
		}
	}
	snap := c.Snapshot()
	columns := []column{
		{"Schedule pods/s", func() error { _, err := fw.Schedule(ctx, w.Pod, nodes); return err }},
		{"ScheduleSnapshot pods/s", func() error { _, err := fw.ScheduleSnapshot(ctx, w.Pod, snap); return err }},
	}
	if want.preemption != nil {
		for i, col := range columns {
			for range preemptionChecks {
				var fe *framework.FitError
				if err := col.schedule(); !errors.As(err, &fe) {
					return nil, fmt.Errorf("kubesched's %s: %v, want a FitError", col.name, err)
				}
				if err := want.preemption.Check(conformance.DecisionOf(fe)); err != nil {
					return nil, fmt.Errorf("kubesched's %s: %w", col.name, err)
				}
			}
			// A FitError is what each timed call must end with.
			schedule := col.schedule
			columns[i].schedule = func() error {
				var fe *framework.FitError
				if err := schedule(); !errors.As(err, &fe) {
					return fmt.Errorf("%v, want a FitError", err)
				}
				return nil
			}
		}
		return columns, nil
	}
	res, err := fw.Schedule(ctx, w.Pod, nodes)
	if err != nil {
		return nil, fmt.Errorf("kubesched: %w", err)
	}
	// A partial search starts where the last one stopped, which differs
	// between the two, so only a full one must evaluate as many nodes.
	if res.FeasibleNodes != want.feasible || percentage == 100 && res.EvaluatedNodes != want.evaluated {
		return nil, fmt.Errorf("kubesched found %d of %d evaluated nodes feasible, upstream %d of %d", res.FeasibleNodes, res.EvaluatedNodes, want.feasible, want.evaluated)
	}
	return columns, nil
}

// upstreamPercentage is upstream's setting for kubesched's percentage p:
// kubesched's 0 is kube-scheduler's default, which leaving the profile's
// setting unset gives.
func upstreamPercentage(p int) *int32 {
	if p == 0 {
		return nil
	}
	p32 := int32(p)
	return &p32
}

// percentageName is how the pct column shows percentage p.
func percentageName(p int) string {
	if p == 0 {
		return "adaptive"
	}
	return strconv.Itoa(p)
}

// parseInts parses a comma-separated list of integers, each in [lo, hi].
func parseInts(s string, lo, hi int) ([]int, error) {
	var ints []int
	for field := range strings.SplitSeq(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(field))
		if err != nil {
			return nil, err
		}
		if n < lo || n > hi {
			return nil, fmt.Errorf("%d is not in [%d, %d]", n, lo, hi)
		}
		ints = append(ints, n)
	}
	return ints, nil
}

// timed is one side of a timing: it calls its scheduler for about d and
// returns how many calls it made and the time they took.
type timed func(d time.Duration) (calls int, spent time.Duration, err error)

// inProcess times schedule in this process, after a garbage collection:
// at least one call.
func inProcess(schedule func() error) timed {
	return func(d time.Duration) (int, time.Duration, error) {
		runtime.GC()
		start := time.Now()
		calls := 0
		for {
			if err := schedule(); err != nil {
				return calls, 0, err
			}
			calls++
			if time.Since(start) >= d {
				return calls, time.Since(start), nil
			}
		}
	}
}

// alternate times each side for rounds rounds of about d each, taking
// turns, after one untimed warm-up call of each, and returns each one's
// calls per second over all its rounds. It stops at the first error.
func alternate(d time.Duration, rounds int, sides ...timed) ([]float64, error) {
	calls := make([]int, len(sides))
	spent := make([]time.Duration, len(sides))
	for i, side := range sides {
		// One untimed call warms caches and checks the workload fits.
		if _, _, err := side(time.Nanosecond); err != nil {
			return nil, fmt.Errorf("scheduler %d: %w", i, err)
		}
	}
	for range rounds {
		for i, side := range sides {
			n, took, err := side(d)
			if err != nil {
				return nil, fmt.Errorf("scheduler %d: %w", i, err)
			}
			calls[i] += n
			spent[i] += took
		}
	}
	rates := make([]float64, len(sides))
	for i := range rates {
		rates[i] = float64(calls[i]) / spent[i].Seconds()
	}
	return rates, nil
}
