// Command simbyside times simulations by kubesched and by kube-scheduler
// v1.37.2 in one process: thousands of pending pods placed one after
// another in a cluster, each placement committed before the next, as
// cluster-autoscaler, descheduler and capacity planners simulate
// scheduling. It prints each side's pods per second and their ratio, one
// row per workload and mode.
//
// kubesched's side is its public API, as its users call it: a sim.Cluster
// (sim.New over kubesched.DefaultFramework) that forks, places every
// pending pod with Place (best fit) or PlaceFirstFit (first fit), and
// reverts.
//
// Upstream's side does the same simulation the way cluster-autoscaler
// does it: one framework over one snapshot, whose NodeInfos each
// placement updates before the next pod is placed. The framework and the
// snapshot are kube-scheduler's own ([conformance.Upstream], built by
// scheduler.New with the default profile): each pod is placed over the
// scheduler's snapshot, which a cycle refreshes from the scheduler's
// cache first, copying only the nodes that changed, as kube-scheduler
// does; the placement is committed by adding the pod, bound, to that
// cache. Best fit ([conformance.Upstream.Place]) is kube-scheduler's
// SchedulePod followed by the Reserve plugins, as its scheduling cycle
// runs them, so it includes upstream's adaptive percentage and its early
// stop, its rotating start node, the queue's per-pod work. First fit
// ([conformance.Upstream.FirstFit]) is cluster-autoscaler's
// RunFiltersUntilPassingNode: PreFilter once, then Filter node after node
// on a clone of the cycle state, from just past the node the previous
// search chose, until one passes; then Reserve there, as
// cluster-autoscaler's SchedulePod does. cluster-autoscaler filters the
// nodes in parallel and takes whichever passing node a worker reports
// first; upstream's side here searches them one after another, so that
// its answer is deterministic (always the first passing node in order)
// and can be checked against kubesched's.
//
// Modes (-modes):
//   - best100: best fit, every node filtered and scored
//     (percentageOfNodesToScore 100);
//   - best-adaptive: best fit at kube-scheduler's default, the adaptive
//     percentage (10% of 5000 nodes; kubesched's 0, upstream's unset);
//   - firstfit: cluster-autoscaler's first fit, filters only.
//
// Workloads (-workloads) are [conformance.NewSimWorkload]'s: Mix, a
// realistic mix of plain pods, pods of ReplicaSets that default spreading
// spreads and pods of ReplicaSets that keep a node apart (required pod
// anti-affinity); Replicas, replicas of one ReplicaSet's pod; Autoscaler,
// the mix cluster-autoscaler simulates (mostly plain pods, of five sizes),
// in a cluster where every ReplicaSet has a Service selecting its pods, so
// that default spreading reads Services too; AutoscalerReplicas,
// Replicas' pods in Autoscaler's cluster. cluster-autoscaler's own
// simulation is Autoscaler in mode firstfit:
//
//	go run ./cmd/simbyside -workloads Autoscaler,AutoscalerReplicas -pending 2000
//
// Before timing, decisions are checked, untimed, on the first -check
// pending pods (all of them with -check -1), each after the ones before
// were committed on both sides:
//   - best100: kubesched places the pod; upstream, given kubesched's
//     choices so far, must rank kubesched's node among its best (the
//     feasible nodes sharing the top total score,
//     [conformance.Upstream.Evaluate]), and then binds it there too;
//   - best-adaptive: kubesched's node must be feasible on upstream's
//     side; which nodes an adaptive search scores depends on where it
//     starts, which differs between the two;
//   - firstfit: both sides place the pod, each from its own next start,
//     and must choose the same node.
//
// A pod that fits nowhere on one side must fit nowhere on the other. The
// first disagreement ends the command with a non-zero exit, the pod and
// both answers.
//
// A round places the whole pending list on one side, then on the other,
// after a garbage collection each, then takes the placements back
// (untimed); the side that goes first alternates from round to round, so
// that a slow spell of a shared machine weighs on both alike. Each side's
// pods/s is over all its rounds; unplaced counts the pods that fit
// nowhere in the last round, which should be none. -cpuprofile writes a
// CPU profile of each side's last round, per workload and mode.
//
//	go run ./cmd/simbyside
//	go run ./cmd/simbyside -pending 1000 -modes firstfit -rounds 5
//	go run ./cmd/simbyside -workloads Replicas -cpuprofile /tmp/simbyside
//
// With -kubernetes-version (e.g. 1.36), kubesched decides as
// kubesched.ReleaseFor that release, and upstream's side is that release
// of kube-scheduler, which this module cannot link: cmd/oracle, built
// from this directory with the release's module file, holds the cluster
// in a process of its own, answers the checks' steps one request each,
// and times each of its rounds itself, so that neither the pipe nor
// encoding weighs on its rate. Such rounds report no progress and write
// no CPU profile.
//
//	go run ./cmd/simbyside -kubernetes-version 1.36
//
// Progress goes to stderr: upstream can take a minute or more per round.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	v1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/kubesched/kubesched"
	"github.com/kubesched/kubesched/conformance"
	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/sim"
)

// mode is a way of placing pods, which both sides time.
type mode struct {
	name string
	// percentage is kubesched's percentageOfNodesToScore for best fit, 0
	// being the adaptive default; upstream's is upstreamPercentage's.
	percentage int32
	// firstFit places each pod on the first node that fits, from just
	// past the last one chosen, rather than on a best one.
	firstFit bool
}

// modes are the modes -modes chooses from.
var modes = []mode{
	{name: "best100", percentage: 100},
	{name: "best-adaptive", percentage: 0},
	{name: "firstfit", firstFit: true},
}

// config is what the flags ask for.
type config struct {
	nodes, running, pending int
	workloads               []string
	modes                   []mode
	rounds                  int
	// check is how many pending pods, from the first, have their
	// decisions checked before timing; -1 for all.
	check int
	// cpuProfile, when set, is the prefix of the CPU profiles written of
	// each side's last round.
	cpuProfile string
	// release is the kube-scheduler release to compare with, out of
	// process; empty for the linked one, in process. oracleDir is the
	// conformance module's directory, where its oracle is built.
	release, oracleDir string
}

func main() {
	cfg := config{oracleDir: "."}
	flag.IntVar(&cfg.nodes, "nodes", 5000, "nodes in the cluster")
	flag.IntVar(&cfg.running, "running", 10000, "pods already running in the cluster")
	flag.IntVar(&cfg.pending, "pending", 5000, "pending pods each round places, one after another")
	workloadsFlag := flag.String("workloads", strings.Join(conformance.SimWorkloadNames, ","), "comma-separated workloads to time")
	modesFlag := flag.String("modes", strings.Join(modeNames(modes), ","), "comma-separated modes to time")
	flag.IntVar(&cfg.rounds, "rounds", 2, "rounds per side, alternating between the sides")
	flag.IntVar(&cfg.check, "check", 200, "pending pods whose decisions are checked against upstream's before timing; -1 for all")
	flag.StringVar(&cfg.release, "kubernetes-version", "", "the kube-scheduler release to compare with, as 1.36 or v1.36.3: kubesched.ReleaseFor's, against that release run out of process (cmd/oracle, built from this directory); empty for the one this module links, in process")
	flag.StringVar(&cfg.cpuProfile, "cpuprofile", "", "write a CPU profile of each side's last round of each workload and mode to `prefix`.<workload>.<mode>.<side>.pprof")
	flag.Parse()

	var err error
	if cfg.workloads, err = parseWorkloads(*workloadsFlag); err != nil {
		log.Fatalf("-workloads: %v", err)
	}
	if cfg.modes, err = parseModes(*modesFlag); err != nil {
		log.Fatalf("-modes: %v", err)
	}
	if cfg.nodes < 1 || cfg.running < 0 || cfg.pending < 1 || cfg.rounds < 1 || cfg.check < -1 {
		log.Fatal("-nodes, -pending and -rounds must be positive, -running 0 or more, -check -1 or more")
	}
	start := time.Now()
	if err := run(context.Background(), cfg, os.Stdout, os.Stderr); err != nil {
		log.Fatal(err)
	}
	fmt.Fprintf(os.Stderr, "done in %s\n", time.Since(start).Round(time.Second))
}

// run times every workload of cfg in every mode and prints the table to
// out, progress to progress.
func run(ctx context.Context, cfg config, out, progress io.Writer) error {
	plugins := kubesched.DefaultPlugins()
	var us upstreams
	if cfg.release != "" {
		r, err := kubesched.ReleaseFor(cfg.release)
		if err != nil {
			return fmt.Errorf("-kubernetes-version: %w", err)
		}
		plugins = r.DefaultPlugins()
		fmt.Fprintf(progress, "building kube-scheduler %s's oracle\n", r.Version())
		bin, cleanup, err := conformance.BuildReleaseOracle(cfg.oracleDir, r.Version())
		if err != nil {
			return err
		}
		us.remote, err = conformance.StartRemoteOracle(bin)
		cleanup()
		if err != nil {
			return err
		}
		defer us.remote.Close()
		fmt.Fprintf(out, "kubesched as kube-scheduler %s against kube-scheduler %s out of process\n\n", r.Version(), r.Version())
	} else {
		// One upstream scheduler per mode, since the percentage is part
		// of its profile; each holds a cluster only while it is timed.
		for _, m := range cfg.modes {
			u, err := conformance.NewUpstream(upstreamPercentage(m))
			if err != nil {
				return fmt.Errorf("building upstream's scheduler: %w", err)
			}
			defer u.Close()
			us.local = append(us.local, u)
		}
	}
	table := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(table, "workload\tnodes\trunning\tpending\tmode\tchecked\tupstream pods/s\tkubesched pods/s\tratio\tunplaced (upstream/kubesched)\t")
	for _, name := range cfg.workloads {
		// One workload at a time, so that only the one timed is on the heap.
		runtime.GC()
		w := conformance.NewSimWorkload(name, cfg.nodes, cfg.running, cfg.pending)
		for i, m := range cfg.modes {
			row, err := timeMode(ctx, cfg, plugins, m, us.setUp(i), w, progress)
			if err != nil {
				return fmt.Errorf("%s, %s: %w", name, m.name, err)
			}
			fmt.Fprintf(table, "%s\t%d\t%d\t%d\t%s\t%d\t%.0f\t%.0f\t%.1fx\t%d/%d\t\n",
				name, cfg.nodes, cfg.running, cfg.pending, m.name, row.checked,
				row.rates[0], row.rates[1], row.rates[1]/row.rates[0], row.unplaced[0], row.unplaced[1])
		}
	}
	return table.Flush()
}

// upstreams holds upstream's schedulers: one per mode in this process,
// or the oracle's process of another release.
type upstreams struct {
	local  []*conformance.Upstream
	remote *conformance.RemoteOracle
}

// setUpFunc installs a workload in upstream's scheduler for a mode and
// returns its side of the simulation and what lets the workload go.
type setUpFunc func(ctx context.Context, m mode, w conformance.SimWorkload) (upstreamSide, func() error, error)

// setUp is the setUpFunc of the i-th mode.
func (us upstreams) setUp(i int) setUpFunc {
	if us.remote != nil {
		return func(ctx context.Context, m mode, w conformance.SimWorkload) (upstreamSide, func() error, error) {
			if err := us.remote.SetUpSim(ctx, upstreamPercentage(m), m.firstFit, w.Nodes, w.Pods, w.Objects, w.Pending); err != nil {
				return nil, nil, err
			}
			return remoteSim{us.remote}, us.remote.ClearTiming, nil
		}
	}
	u := us.local[i]
	return func(ctx context.Context, m mode, w conformance.SimWorkload) (upstreamSide, func() error, error) {
		if err := u.SetObjects(ctx, w.Objects); err != nil {
			return nil, nil, err
		}
		if err := u.SetCluster(w.Nodes, w.Pods); err != nil {
			return nil, nil, err
		}
		letGo := func() error {
			return errors.Join(u.SetCluster(nil, nil), u.SetObjects(ctx, nil))
		}
		return upstreamSim{conformance.NewUpstreamSim(u, w.Nodes, m.firstFit)}, letGo, nil
	}
}

// row is what timeMode measured: per side, upstream's first.
type row struct {
	checked  int
	rates    [2]float64
	unplaced [2]int
}

// timeMode checks, then times, w's simulation in mode m on both sides,
// kubesched's with plugins, upstream's as setUp installs it.
func timeMode(ctx context.Context, cfg config, plugins kubesched.Plugins, m mode, setUp setUpFunc, w conformance.SimWorkload, progress io.Writer) (row, error) {
	theirs, letGo, err := setUp(ctx, m, w)
	if err != nil {
		return row{}, err
	}
	// Let the cluster go before the next one is built.
	defer func() {
		if err := letGo(); err != nil {
			fmt.Fprintf(progress, "clearing upstream's cluster: %v\n", err)
		}
	}()
	ours, err := newKubeschedSim(plugins, w, m)
	if err != nil {
		return row{}, err
	}

	var r row
	r.checked = cfg.check
	if r.checked < 0 || r.checked > len(w.Pending) {
		r.checked = len(w.Pending)
	}
	if r.checked > 0 {
		start := time.Now()
		fmt.Fprintf(progress, "%s, %s: checking %d pods' decisions\n", w.Name, m.name, r.checked)
		summary, err := check(ctx, m, theirs, ours, w.Pending[:r.checked])
		if err != nil {
			return row{}, err
		}
		fmt.Fprintf(progress, "%s, %s: %d decisions agree%s (%s)\n", w.Name, m.name, r.checked, summary, time.Since(start).Round(time.Millisecond))
	}

	sims := [2]simulator{theirs, ours}
	var spent [2]time.Duration
	for round := range cfg.rounds {
		for turn := range 2 {
			// Upstream first in even rounds, kubesched in odd ones.
			side := (turn + round) % 2
			s := sims[side]
			var profile string
			if cfg.cpuProfile != "" && round == cfg.rounds-1 {
				profile = fmt.Sprintf("%s.%s.%s.%s.pprof", cfg.cpuProfile, w.Name, m.name, s.name())
			}
			unplaced, d, err := placeAll(ctx, s, w.Pending, profile, func(done int, elapsed time.Duration) {
				fmt.Fprintf(progress, "%s, %s, round %d/%d, %s: %d/%d pods placed in %s\n",
					w.Name, m.name, round+1, cfg.rounds, s.name(), done, len(w.Pending), elapsed.Round(time.Millisecond))
			})
			if err != nil {
				return row{}, fmt.Errorf("%s: %w", s.name(), err)
			}
			spent[side] += d
			r.unplaced[side] = unplaced
			fmt.Fprintf(progress, "%s, %s, round %d/%d, %s: %d pods in %s, %.0f pods/s, %d unplaced\n",
				w.Name, m.name, round+1, cfg.rounds, s.name(), len(w.Pending), d.Round(time.Millisecond),
				float64(len(w.Pending))/d.Seconds(), unplaced)
		}
	}
	for side := range sims {
		r.rates[side] = float64(cfg.rounds*len(w.Pending)) / spent[side].Seconds()
	}
	return r, nil
}

// progressEvery is how many pods placeAll reports progress after, once a
// round has run long enough for it to matter.
const progressEvery = 1000

// placeAll times one round of s: it begins a round, places pods one after
// another, then, untimed, takes them back. It returns how many fit
// nowhere and the time spent placing. When profile is set, the placements
// are CPU-profiled into that file. tick is called every progressEvery
// pods once the round has run for 5 seconds.
func placeAll(ctx context.Context, s simulator, pods []*v1.Pod, profile string, tick func(done int, elapsed time.Duration)) (int, time.Duration, error) {
	if r, ok := s.(rounder); ok {
		return r.round()
	}
	runtime.GC()
	if profile != "" {
		f, err := os.Create(profile)
		if err != nil {
			return 0, 0, err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return 0, 0, err
		}
	}
	start := time.Now()
	unplaced, err := placeEach(ctx, s, pods, func(done int) {
		if elapsed := time.Since(start); elapsed > 5*time.Second {
			tick(done, elapsed)
		}
	})
	d := time.Since(start)
	if profile != "" {
		pprof.StopCPUProfile()
	}
	if err != nil {
		return 0, 0, err
	}
	return unplaced, d, s.undo()
}

// placeEach begins a round of s and places pods one after another,
// calling tick every progressEvery pods but the last. It returns how many
// fit nowhere.
func placeEach(ctx context.Context, s simulator, pods []*v1.Pod, tick func(done int)) (int, error) {
	unplaced := 0
	s.begin()
	for i, pod := range pods {
		node, err := s.place(ctx, pod)
		if err != nil {
			return 0, fmt.Errorf("pod %s: %w", pod.Name, err)
		}
		if node == "" {
			unplaced++
		}
		if done := i + 1; done%progressEvery == 0 && done < len(pods) {
			tick(done)
		}
	}
	return unplaced, nil
}

// rounder is a simulator that times its rounds itself, elsewhere: the
// pods are those it was set up with, and it takes them back itself; it
// reports no progress and writes no profile.
type rounder interface {
	round() (unplaced int, spent time.Duration, err error)
}

// simulator is one side's simulation: pods placed one at a time, each
// committed before the next, and a round's placements taken back.
type simulator interface {
	name() string
	// begin starts a round, whose placements undo takes back.
	begin()
	// place places pod and commits it, returning its node, or "" when
	// it fits nowhere.
	place(ctx context.Context, pod *v1.Pod) (string, error)
	undo() error
}

// kubeschedSim is kubesched's side: a sim.Cluster, through its public API
// alone, so that a change of that API changes this type alone.
type kubeschedSim struct {
	c        *sim.Cluster
	firstFit bool
}

// newKubeschedSim builds kubesched's cluster of w for mode m, with
// plugins.
func newKubeschedSim(plugins kubesched.Plugins, w conformance.SimWorkload, m mode) (*kubeschedSim, error) {
	fw, err := plugins.Framework(framework.WithPercentageOfNodesToScore(m.percentage))
	if err != nil {
		return nil, fmt.Errorf("building kubesched: %w", err)
	}
	// The workloads' objects are ReplicaSets and Services, which sim.New
	// takes as they are.
	c, err := sim.New(fw, w.Nodes, w.Pods, w.Objects...)
	if err != nil {
		return nil, fmt.Errorf("building kubesched's cluster: %w", err)
	}
	return &kubeschedSim{c: c, firstFit: m.firstFit}, nil
}

func (k *kubeschedSim) name() string { return "kubesched" }

func (k *kubeschedSim) begin() { k.c.Fork() }

func (k *kubeschedSim) place(ctx context.Context, pod *v1.Pod) (string, error) {
	if k.firstFit {
		node, err := k.c.PlaceFirstFit(ctx, pod)
		if errors.Is(err, sim.ErrNoNodeFits) {
			return "", nil
		}
		return node, err
	}
	res, err := k.c.Place(ctx, pod)
	var fitErr *framework.FitError
	if errors.As(err, &fitErr) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return res.SuggestedHost, nil
}

func (k *kubeschedSim) undo() error { return k.c.Revert() }

// upstreamSide is upstream's side of a mode: a simulator, and the steps
// of the checks on it.
type upstreamSide interface {
	simulator
	// evaluate is [conformance.Upstream.Evaluate] on the cluster as
	// placed so far.
	evaluate(ctx context.Context, pod *v1.Pod) (conformance.UpstreamVerdict, error)
	// bind commits pod on node, as a placement would.
	bind(pod *v1.Pod, node string) error
}

// upstreamSim is upstream's side in this process, over a
// [conformance.UpstreamSim].
type upstreamSim struct{ s *conformance.UpstreamSim }

func (s upstreamSim) name() string { return "upstream" }

func (s upstreamSim) begin() {}

func (s upstreamSim) place(ctx context.Context, pod *v1.Pod) (string, error) {
	return s.s.Place(ctx, pod)
}

func (s upstreamSim) undo() error { return s.s.Undo() }

func (s upstreamSim) evaluate(ctx context.Context, pod *v1.Pod) (conformance.UpstreamVerdict, error) {
	return s.s.Upstream().Evaluate(ctx, pod)
}

func (s upstreamSim) bind(pod *v1.Pod, node string) error { return s.s.Upstream().Bind(pod, node) }

// remoteSim is upstream's side in the oracle's process, for a release
// this one cannot link: each step is a request, and a round is timed
// there, so that neither the pipe nor encoding weighs on upstream's rate.
type remoteSim struct{ r *conformance.RemoteOracle }

func (s remoteSim) name() string { return "upstream" }

func (s remoteSim) begin() {}

func (s remoteSim) place(_ context.Context, pod *v1.Pod) (string, error) { return s.r.SimPlace(pod) }

func (s remoteSim) undo() error { return s.r.SimUndo() }

func (s remoteSim) evaluate(_ context.Context, pod *v1.Pod) (conformance.UpstreamVerdict, error) {
	return s.r.SimEvaluate(pod)
}

func (s remoteSim) bind(pod *v1.Pod, node string) error { return s.r.SimBind(pod, node) }

// round places the pending pods SetUpSim gave the oracle, which are the
// round's, and takes them back.
func (s remoteSim) round() (int, time.Duration, error) {
	r, err := s.r.SimRound()
	if err != nil {
		return 0, 0, err
	}
	return r.Unplaced, r.Spent, nil
}

// check places pods one after another on kubesched's side and checks
// each decision against upstream's, as the package doc says, then takes
// every placement back on both sides. It returns a summary of what was
// checked, or the first disagreement.
func check(ctx context.Context, m mode, theirs upstreamSide, ours *kubeschedSim, pods []*v1.Pod) (string, error) {
	ours.begin()
	theirs.begin()
	var best, unplaced int
	minBest, maxBest := -1, 0
	for i, pod := range pods {
		got, err := ours.place(ctx, pod)
		if err != nil {
			return "", fmt.Errorf("kubesched, pod %s: %w", pod.Name, err)
		}
		if got == "" {
			unplaced++
		}
		if m.firstFit {
			want, err := theirs.place(ctx, pod)
			if err != nil {
				return "", fmt.Errorf("upstream, pod %s: %w", pod.Name, err)
			}
			if got != want {
				return "", disagreement(i, pod, answer(got), "first fit "+answer(want))
			}
			continue
		}
		// Upstream's verdict on the cluster as kubesched committed it so
		// far, and, when kubesched placed the pod, the same placement.
		v, err := theirs.evaluate(ctx, pod)
		if err != nil {
			return "", fmt.Errorf("upstream, pod %s: %w", pod.Name, err)
		}
		switch {
		case got == "" && len(v.Feasible) > 0:
			return "", disagreement(i, pod, answer(got), fmt.Sprintf("%d feasible nodes, the best %s", len(v.Feasible), names(v.Best)))
		case got == "":
			continue
		case m.percentage == 100 && !slices.Contains(v.Best, got):
			return "", disagreement(i, pod, answer(got), "the best nodes "+names(v.Best))
		case !slices.Contains(v.Feasible, got):
			return "", disagreement(i, pod, answer(got), fmt.Sprintf("the %d feasible nodes %s", len(v.Feasible), names(v.Feasible)))
		}
		if err := theirs.bind(pod, got); err != nil {
			return "", err
		}
		best += len(v.Best)
		if minBest < 0 || len(v.Best) < minBest {
			minBest = len(v.Best)
		}
		maxBest = max(maxBest, len(v.Best))
	}
	if err := ours.undo(); err != nil {
		return "", err
	}
	// Upstream's binds, the checks' or first fit's own, go too.
	if err := theirs.undo(); err != nil {
		return "", err
	}
	summary := ""
	// How many nodes tie for best says how much the check of best fit
	// pins kubesched's choice down.
	if placed := len(pods) - unplaced; !m.firstFit && m.percentage == 100 && placed > 0 {
		summary = fmt.Sprintf(", upstream's best %d to %d nodes, %.1f on average", minBest, maxBest, float64(best)/float64(placed))
	}
	if unplaced > 0 {
		summary += fmt.Sprintf(", %d pods fit nowhere on both sides", unplaced)
	}
	return summary, nil
}

// disagreement is the error for the i-th pod checked, which kubesched
// placed as got says and upstream as want says.
func disagreement(i int, pod *v1.Pod, got, want string) error {
	text, err := yaml.Marshal(pod)
	if err != nil {
		text = []byte(err.Error())
	}
	return fmt.Errorf("pod %d checked, %s: kubesched chose %s; upstream %s\n%s", i, pod.Name, got, want, text)
}

// answer describes a side's placement of a pod.
func answer(node string) string {
	if node == "" {
		return "no node"
	}
	return node
}

// names lists nodes, or the first few of many.
func names(nodes []string) string {
	const most = 10
	if len(nodes) > most {
		return fmt.Sprintf("%v and %d more", nodes[:most], len(nodes)-most)
	}
	return fmt.Sprint(nodes)
}

// upstreamPercentage is upstream's setting for mode m: kubesched's 0 is
// kube-scheduler's default, which leaving the profile's setting unset
// gives. First fit scores nothing, so its setting does not matter.
func upstreamPercentage(m mode) *int32 {
	if m.percentage == 0 {
		return nil
	}
	return new(m.percentage)
}

// modeNames returns the names of ms.
func modeNames(ms []mode) []string {
	names := make([]string, len(ms))
	for i, m := range ms {
		names[i] = m.name
	}
	return names
}

// parseModes parses a comma-separated list of mode names.
func parseModes(s string) ([]mode, error) {
	var out []mode
	for field := range strings.SplitSeq(s, ",") {
		i := slices.IndexFunc(modes, func(m mode) bool { return m.name == strings.TrimSpace(field) })
		if i < 0 {
			return nil, fmt.Errorf("unknown mode %q, want some of %s", field, strings.Join(modeNames(modes), ","))
		}
		out = append(out, modes[i])
	}
	return out, nil
}

// parseWorkloads parses a comma-separated list of workload names.
func parseWorkloads(s string) ([]string, error) {
	var out []string
	for field := range strings.SplitSeq(s, ",") {
		name := strings.TrimSpace(field)
		if !slices.Contains(conformance.SimWorkloadNames, name) {
			return nil, fmt.Errorf("unknown workload %q, want some of %s", field, strings.Join(conformance.SimWorkloadNames, ","))
		}
		out = append(out, name)
	}
	return out, nil
}
