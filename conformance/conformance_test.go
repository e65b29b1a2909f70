package conformance

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	kfwk "github.com/kubesched/kubesched/fwk"

	"k8s.io/apimachinery/pkg/api/equality"

	"github.com/kubesched/kubesched/cache"
	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/nodeinfo"
)

var (
	numScenarios = flag.Int("scenarios", envInt("KUBESCHED_CONFORMANCE_SCENARIOS", 2000),
		"number of random scenarios TestDifferential compares (env KUBESCHED_CONFORMANCE_SCENARIOS)")
	firstSeed = flag.Uint64("seed", 1,
		"seed of TestDifferential's first scenario; scenario i uses seed+i")
	numLarge = flag.Int("large-scenarios", 20,
		"number of 600-node scenarios TestDifferentialLarge compares, from seed 7000000")
	maxRepros = flag.Int("repros", 10,
		"TestDifferential minimises and prints the YAML of one failing scenario per kind of disagreement, for at most this many kinds")
)

func envInt(name string, fallback int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return n
	}
	return fallback
}

// TestDifferential schedules random pods in random clusters with both
// kubesched and upstream, and requires the same verdict on every node, the
// same scores and a host upstream could have picked. A failing scenario is
// rerun alone with -run 'TestDifferential/group/seed=N$'.
func TestDifferential(t *testing.T) {
	fw, err := ours.DefaultFramework(framework.WithPercentageOfNodesToScore(100))
	if err != nil {
		t.Fatalf("DefaultFramework: %v", err)
	}
	tally := &tally{counts: map[string]int{}, reproduced: map[string]bool{}, repros: *maxRepros}
	// The group returns only when its parallel subtests have finished.
	t.Run("group", func(t *testing.T) {
		for i := range *numScenarios {
			seed := *firstSeed + uint64(i)
			t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
				t.Parallel()
				checkScenario(t, fw, Generate(seed), tally)
			})
		}
	})
	if summary := tally.summary(); summary != "" {
		t.Errorf("%d of %d scenarios disagree; by kind (scenarios affected):\n%s", tally.failing, *numScenarios, summary)
	}
}

// TestDifferentialLarge is TestDifferential on a few clusters of 600 nodes,
// where kubesched's plugins count over several workers and merge what
// they counted; the clusters of TestDifferential are too small for that.
// It runs alone with GOMAXPROCS 4, so that there are several workers even
// on a one-CPU machine.
func TestDifferentialLarge(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	fw, err := ours.DefaultFramework(framework.WithPercentageOfNodesToScore(100))
	if err != nil {
		t.Fatalf("DefaultFramework: %v", err)
	}
	// Minimising 600 nodes takes too long: a failing seed is reported, to
	// be rerun with -large-scenarios.
	tally := &tally{counts: map[string]int{}, reproduced: map[string]bool{}, repros: 0}
	for i := range *numLarge {
		checkScenario(t, fw, GenerateLarge(7000000+uint64(i), 600), tally)
	}
	if summary := tally.summary(); summary != "" {
		t.Errorf("%d of %d large scenarios disagree; by kind (scenarios affected):\n%s", tally.failing, *numLarge, summary)
	}
}

// TestReproductions replays the scenarios kept in testdata/scenarios,
// written by [MarshalScenario] or by hand, against kubesched.
func TestReproductions(t *testing.T) {
	t.Parallel()
	files, err := filepath.Glob("testdata/scenarios/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios in testdata/scenarios (err %v)", err)
	}
	fw, err := ours.DefaultFramework(framework.WithPercentageOfNodesToScore(100))
	if err != nil {
		t.Fatalf("DefaultFramework: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			s, err := ParseScenario(data)
			if err != nil {
				t.Fatal(err)
			}
			diffs, err := compare(context.Background(), fw, s)
			if err != nil {
				t.Fatal(err)
			}
			if len(diffs) > 0 {
				t.Errorf("%d disagreement(s) with kube-scheduler:\n%s", len(diffs), formatDiffs(diffs, 20))
			}
		})
	}
}

// checkScenario compares kubesched with the oracle on s and reports every
// disagreement, with a minimal YAML reproduction while tally allows one.
func checkScenario(t *testing.T, fw *framework.Framework, s *Scenario, tally *tally) {
	ctx := context.Background()
	diffs, err := compare(ctx, fw, s)
	if err != nil {
		t.Fatalf("seed %d: %v", s.Seed, err)
	}
	if len(diffs) == 0 {
		return
	}
	if tally.add(diffs) > verboseScenarios {
		t.Errorf("seed %d: %d disagreement(s) with kube-scheduler, first: [%s] %s", s.Seed, len(diffs), diffs[0].kind, diffs[0].detail)
	} else {
		t.Errorf("seed %d: %d disagreement(s) with kube-scheduler:\n%s", s.Seed, len(diffs), formatDiffs(diffs, 20))
	}
	kind := mainKind(diffs)
	if !tally.takeRepro(kind) {
		return
	}
	minimal := Minimize(s, func(c *Scenario) bool {
		d, err := compare(ctx, fw, c)
		return err == nil && slices.ContainsFunc(d, func(d disagreement) bool { return d.kind == kind })
	})
	minimalDiffs, _ := compare(ctx, fw, minimal)
	data, err := MarshalScenario(minimal)
	if err != nil {
		t.Fatalf("seed %d: marshalling the reproduction: %v", s.Seed, err)
	}
	t.Errorf("seed %d: minimal reproduction of %q (save it in testdata/scenarios/ to keep it):\n%s\n%s",
		s.Seed, kind, formatDiffs(minimalDiffs, 20), data)
}

// mainKind picks the disagreement to minimise for: the first one a plugin
// is blamed for, since fit-error, host and total disagreements follow from
// those.
func mainKind(diffs []disagreement) string {
	for _, d := range diffs {
		if strings.HasPrefix(d.kind, "Filter ") || strings.HasPrefix(d.kind, "Score ") {
			return d.kind
		}
	}
	return diffs[0].kind
}

// disagreement is one difference between kubesched and upstream. kind
// groups disagreements by the plugin or step responsible.
type disagreement struct {
	kind   string
	detail string
}

func formatDiffs(diffs []disagreement, limit int) string {
	var b strings.Builder
	for i, d := range diffs {
		if i == limit {
			fmt.Fprintf(&b, "  ... and %d more\n", len(diffs)-limit)
			break
		}
		fmt.Fprintf(&b, "  [%s] %s\n", d.kind, d.detail)
	}
	return b.String()
}

// compare runs s through the oracle and kubesched and lists where they
// differ. kubesched runs with shared, or for a scenario with cluster
// objects with a framework of its own that lists them. The error is for
// failures of the oracle itself, or objects kubesched refuses.
func compare(ctx context.Context, shared *framework.Framework, s *Scenario) ([]disagreement, error) {
	want, err := upstream.RunScenario(ctx, s)
	if err != nil {
		return nil, fmt.Errorf("oracle: %w", err)
	}
	fw := shared
	if len(s.Objects) > 0 {
		fw, err = ours.DefaultFramework(framework.WithPercentageOfNodesToScore(100), framework.WithObjects(schedulingObjects(s.Objects)...))
		if err != nil {
			return nil, fmt.Errorf("DefaultFramework with the scenario's objects: %w", err)
		}
	}
	before := snapshotScenario(s)
	got, err := fw.Schedule(ctx, s.Pod, nodeinfo.Build(s.Nodes, s.Pods))
	diffs := diffResults(s, want, got, err)
	// The same decision over snapshots, which the framework trusts instead
	// of checking, must agree as well: a plain one, and a cache's, which
	// orders the nodes zone by zone and lists the nodes with pod affinity.
	snap, err := cacheSnapshot(s)
	if err != nil {
		return nil, err
	}
	for _, ns := range []struct {
		name string
		snap framework.NodeSnapshot
	}{{"ScheduleSnapshot", newNodeSnapshot(nodeinfo.Build(s.Nodes, s.Pods))}, {"ScheduleSnapshot (cache)", snap}} {
		got, err = fw.ScheduleSnapshot(ctx, s.Pod, ns.snap)
		for _, d := range diffResults(s, want, got, err) {
			d.detail = ns.name + ": " + d.detail
			diffs = append(diffs, d)
		}
	}
	if !equality.Semantic.DeepEqual(before, snapshotScenario(s)) {
		diffs = append(diffs, disagreement{"mutation", "Schedule modified its input objects"})
	}
	return diffs, nil
}

// withoutPostFilter is fe without what the PostFilter plugins said: the
// message of the cycle alone, which [Oracle.RunScenario] reports
// (TestPreemption compares the whole message).
func withoutPostFilter(fe *framework.FitError) *framework.FitError {
	c := *fe
	c.Diagnosis.PostFilterMsg = ""
	return &c
}

// cacheSnapshot is a cache's snapshot of s's nodes and the pods bound to
// them. The oracle builds upstream's snapshot with NewSnapshot, whose
// image summaries are Build's: the cache is asked for the same.
// (TestCacheSnapshotsEqualKubeSchedulersCache holds the cache's default
// summaries to kube-scheduler's cache.)
func cacheSnapshot(s *Scenario) (*cache.Snapshot, error) {
	c, err := cache.New(cache.WithFreshImageStates())
	if err != nil {
		return nil, err
	}
	for _, n := range s.Nodes {
		if _, err := c.AddNode(n); err != nil {
			return nil, fmt.Errorf("cache: %w", err)
		}
	}
	for _, p := range boundPods(s.Nodes, s.Pods) {
		if err := c.AddPod(p); err != nil {
			return nil, fmt.Errorf("cache: %w", err)
		}
	}
	return c.Snapshot(), nil
}

// nodeSnapshot is the simplest framework.NodeSnapshot: a slice nobody
// changes, indexed by name.
type nodeSnapshot struct {
	nodes []*nodeinfo.NodeInfo
	index map[string]int
}

func newNodeSnapshot(nodes []*nodeinfo.NodeInfo) *nodeSnapshot {
	s := &nodeSnapshot{nodes: nodes, index: make(map[string]int, len(nodes))}
	for i, ni := range nodes {
		s.index[ni.Name()] = i
	}
	return s
}

func (s *nodeSnapshot) Nodes() []*nodeinfo.NodeInfo { return s.nodes }

func (s *nodeSnapshot) Index(name string) (int, bool) {
	i, ok := s.index[name]
	return i, ok
}

// diffResults lists where kubesched's answer for s (Schedule's result and
// error) differs from upstream's: the outcome, the FitError text, the
// chosen host and counts, the rejecting plugins, and every node's verdict
// and scores.
func diffResults(s *Scenario, want *OracleResult, got *framework.Result, err error) []disagreement {
	var diffs []disagreement
	add := func(kind, format string, args ...any) {
		diffs = append(diffs, disagreement{kind, fmt.Sprintf(format, args...)})
	}

	var notTried *framework.NotTriedError
	isNotTried := errors.As(err, &notTried)
	switch {
	case want.NotTried != nil && !isNotTried:
		add("not-tried", "upstream does not try the pod (%s: %q), kubesched: result %v, error %v", want.NotTried.Plugin, want.NotTried.Message, got, err)
		return diffs
	case want.NotTried != nil:
		if notTried.Plugin != want.NotTried.Plugin || notTried.Status.Message() != want.NotTried.Message || notTried.Status.Code().String() != want.NotTried.Code.String() {
			add("not-tried", "got %s %v, want %s %v %q", notTried.Plugin, notTried.Status, want.NotTried.Plugin, want.NotTried.Code, want.NotTried.Message)
		}
		return diffs
	case isNotTried:
		add("not-tried", "kubesched does not try the pod (%v), upstream does", err)
		return diffs
	}

	var fitErr *framework.FitError
	if len(want.Errors) > 0 {
		switch {
		case errors.As(err, &fitErr):
			add("error", "kubesched found no node (%q), upstream failed: %q", err, want.Errors)
		case err != nil:
			if !slices.Contains(want.Errors, err.Error()) {
				add("error", "message\n      got  %q\n      want one of %q", err, want.Errors)
			}
		default:
			add("error", "kubesched chose %q, upstream failed: %q", got.SuggestedHost, want.Errors)
		}
		return diffs
	}

	var diagnosis framework.Diagnosis
	switch {
	case errors.As(err, &fitErr):
		diagnosis = fitErr.Diagnosis
		if want.FitErrorMessage == "" {
			add("fit-error", "kubesched found no node (%q), upstream found %v", err, want.TopNodes)
		} else if msg := withoutPostFilter(fitErr).Error(); msg != want.FitErrorMessage {
			add("fit-error", "message\n      got  %q\n      want %q", msg, want.FitErrorMessage)
		}
	case err != nil:
		add("error", "Schedule failed: %v", err)
		return diffs
	default:
		diagnosis = got.Diagnosis
		if want.FitErrorMessage != "" {
			add("fit-error", "kubesched chose %q, upstream found no node: %q", got.SuggestedHost, want.FitErrorMessage)
			break
		}
		if !slices.Contains(want.TopNodes, got.SuggestedHost) {
			add("host", "kubesched chose %q, upstream's best are %v", got.SuggestedHost, want.TopNodes)
		}
		if got.FeasibleNodes != want.FeasibleNodes || got.EvaluatedNodes != want.EvaluatedNodes {
			add("counts", "feasible/evaluated nodes %d/%d, want %d/%d", got.FeasibleNodes, got.EvaluatedNodes, want.FeasibleNodes, want.EvaluatedNodes)
		}
		if gotScored := len(got.NodeScores()) > 0; gotScored != want.Scored {
			add("scored", "kubesched scored: %v, upstream scored: %v", gotScored, want.Scored)
		}
	}

	var gotUnschedulable []string
	if len(diagnosis.UnschedulablePlugins) > 0 {
		gotUnschedulable = slices.Sorted(maps.Keys(diagnosis.UnschedulablePlugins))
	}
	if !slices.Equal(gotUnschedulable, want.UnschedulablePlugins) {
		add("unschedulable-plugins", "got %v, want %v", gotUnschedulable, want.UnschedulablePlugins)
	}

	scores := map[string]framework.NodePluginScores{}
	if got != nil {
		for _, ns := range got.NodeScores() {
			scores[ns.Name] = ns
		}
	}
	for _, n := range s.Nodes {
		outcome, evaluated := want.Nodes[n.Name]
		if !evaluated {
			// Upstream took the nominated node without looking at this one.
			if status := diagnosis.NodeStatus(n.Name); status != nil {
				add("nominated", "%s: kubesched rejected it (%s %q), upstream did not evaluate it", n.Name, status.Plugin(), status.Reasons())
			}
			continue
		}
		got := scores[n.Name]
		diffs = append(diffs, compareNode(n.Name, outcome, diagnosis.NodeStatus(n.Name), got, want.Scored)...)
	}
	return diffs
}

// compareNode compares one node's filter verdict and, when upstream scored
// it, its scores.
func compareNode(name string, want NodeOutcome, status *kfwk.Status, got framework.NodePluginScores, scored bool) []disagreement {
	var diffs []disagreement
	add := func(kind, format string, args ...any) {
		diffs = append(diffs, disagreement{kind, name + ": " + fmt.Sprintf(format, args...)})
	}
	gotFeasible := status.IsSuccess()
	switch {
	case gotFeasible != want.Feasible:
		// Blame whichever side rejected the node.
		plugin, code, reasons := status.Plugin(), status.Code().String(), status.Reasons()
		if !want.Feasible {
			plugin, code, reasons = want.Plugin, want.Code, want.Reasons
		}
		add(filterKind(plugin), "kubesched feasible: %v, upstream feasible: %v (rejection: %s %s %q)",
			gotFeasible, want.Feasible, plugin, code, reasons)
		return diffs
	case !want.Feasible:
		if status.Plugin() != want.Plugin || status.Code().String() != want.Code || !sameReasons(want.Plugin, status.Reasons(), want.Reasons) {
			add(filterKind(want.Plugin), "rejection\n      got  %s %s %q\n      want %s %s %q",
				status.Plugin(), status.Code(), status.Reasons(), want.Plugin, want.Code, want.Reasons)
		}
		return diffs
	}
	if !scored {
		return diffs
	}
	gotScores := make(map[string]int64, len(got.Scores))
	for _, ps := range got.Scores {
		gotScores[ps.Name] = ps.Score
	}
	for _, plugin := range slices.Sorted(maps.Keys(want.Scores)) {
		if g, ok := gotScores[plugin]; !ok {
			add("Score "+plugin, "kubesched did not score it, upstream's weighted score is %d", want.Scores[plugin])
		} else if g != want.Scores[plugin] {
			add("Score "+plugin, "weighted score %d, want %d", g, want.Scores[plugin])
		}
	}
	for _, plugin := range slices.Sorted(maps.Keys(gotScores)) {
		if _, ok := want.Scores[plugin]; !ok {
			add("Score "+plugin, "kubesched scored %d, upstream skipped the plugin", gotScores[plugin])
		}
	}
	if got.TotalScore != want.Total {
		add("total", "total score %d, want %d", got.TotalScore, want.Total)
	}
	return diffs
}

// sameReasons compares reason lists in order, except where upstream's
// order is random: NodeResourcesFit reports extended resources and
// hugepages by ranging over a map, after cpu, memory, ephemeral-storage
// and pods in a fixed order.
func sameReasons(plugin string, got, want []string) bool {
	if plugin != "NodeResourcesFit" {
		return slices.Equal(got, want)
	}
	return slices.Equal(sortScalarReasons(got), sortScalarReasons(want))
}

func sortScalarReasons(reasons []string) []string {
	fixed := map[string]bool{
		"Too many pods": true, "Insufficient cpu": true, "Insufficient memory": true, "Insufficient ephemeral-storage": true,
	}
	i := slices.IndexFunc(reasons, func(r string) bool { return !fixed[r] })
	if i < 0 {
		return reasons
	}
	sorted := slices.Clone(reasons)
	slices.Sort(sorted[i:])
	return sorted
}

func filterKind(plugin string) string {
	if plugin == "" {
		return "Filter (PreFilterResult)"
	}
	return "Filter " + plugin
}

// snapshotScenario deep-copies the objects Schedule must not modify.
func snapshotScenario(s *Scenario) []any {
	objects := []any{s.Pod.DeepCopy()}
	for _, n := range s.Nodes {
		objects = append(objects, n.DeepCopy())
	}
	for _, p := range s.Pods {
		objects = append(objects, p.DeepCopy())
	}
	for _, o := range s.Objects {
		objects = append(objects, o.DeepCopyObject())
	}
	return objects
}

// verboseScenarios is how many failing scenarios print every disagreement;
// later ones print one line, so a badly broken build stays readable.
const verboseScenarios = 30

// tally counts disagreements by kind across scenarios and rations the
// expensive minimised reproductions. It is shared by parallel subtests.
type tally struct {
	mu         sync.Mutex
	counts     map[string]int
	failing    int
	reproduced map[string]bool
	repros     int
}

// add counts each kind once per scenario and returns how many scenarios
// have failed so far.
func (t *tally) add(diffs []disagreement) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	seen := map[string]bool{}
	for _, d := range diffs {
		if !seen[d.kind] {
			seen[d.kind] = true
			t.counts[d.kind]++
		}
	}
	t.failing++
	return t.failing
}

// takeRepro reports whether a scenario failing first with kind should be
// minimised: the first of each kind is, while the budget lasts.
func (t *tally) takeRepro(kind string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.repros == 0 || t.reproduced[kind] {
		return false
	}
	t.reproduced[kind] = true
	t.repros--
	return true
}

func (t *tally) summary() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var b strings.Builder
	for _, kind := range slices.Sorted(maps.Keys(t.counts)) {
		fmt.Fprintf(&b, "  %-40s %d\n", kind, t.counts[kind])
	}
	return b.String()
}
