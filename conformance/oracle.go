// Package conformance checks kubesched against kube-scheduler itself.
//
// The [Oracle] runs upstream's scheduling framework in-process, built from
// the default v1 profile, and reports for one pod what every node's Filter
// verdict and Score would be. The differential test generates random
// clusters with [Generate], asks both the oracle and kubesched, and prints a
// minimal YAML reproduction ([MarshalScenario]) for any disagreement.
//
// The [PreemptionOracle] goes on where the cycle finds no node: it runs
// upstream's PostFilter plugins (DynamicResources, DefaultPreemption) and
// reports the nomination, the event's text, and every candidate of a
// dry run over all nodes, for kubesched's preemption to be checked
// against.
//
// [Upstream] is kube-scheduler's own scheduler, whose SchedulePod the
// side-by-side timings measure kubesched against, and whose placements,
// committed one after another, the simulation timings measure package
// sim against ([NewSimWorkload]).
//
// This module imports k8s.io/kubernetes, which the root module must never do;
// that is the whole reason it is a separate module.
//
// From this directory:
//
//	go test -race ./...                                    # 2000 scenarios
//	go test -run TestDifferential -scenarios 50000 -seed 7 # a longer hunt
//	go test -run 'TestDifferential/group/seed=42$'         # one scenario
//	go test -run '^$' -bench SideBySide                    # timings
//	go run ./cmd/sidebyside -nodes 500,5000 -duration 5s   # timing tables
//	go run ./cmd/simbyside                                 # simulation timings
//
// KUBESCHED_CONFORMANCE_SCENARIOS sets the number of scenarios as well.
// KUBESCHED_CONFORMANCE_AFFINITY=0 leaves pod affinity, topology spreading
// and the cluster objects they read out of the generated scenarios, and
// KUBESCHED_CONFORMANCE_VOLUMES=0 volumes and the storage objects they
// use. KUBESCHED_GEN_DRA=0 leaves out ResourceClaims and the DRA objects
// they use. KUBESCHED_GEN_PREEMPTION=0 leaves out the priorities, full
// nodes, PodDisruptionBudgets and pending nominated pods that make
// preemption matter.
package conformance

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/latest"
	"k8s.io/kubernetes/pkg/scheduler/backend/cache"
	schedframework "k8s.io/kubernetes/pkg/scheduler/framework"
	frameworkplugins "k8s.io/kubernetes/pkg/scheduler/framework/plugins"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodevolumelimits"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
)

// Oracle schedules pods with kube-scheduler's own framework and default
// plugins. Create it once with [NewOracle]; it is safe for concurrent use,
// but calls to [Oracle.Run] are serialised because the framework reads the
// cluster through one shared snapshot.
type Oracle struct {
	mu       sync.Mutex
	fw       schedframework.Framework
	snapshot *snapshotLister
	objects  *clusterObjects
	dra      *draManager
	stop     context.CancelFunc
}

// NodeOutcome is what upstream decided about one node.
type NodeOutcome struct {
	// Feasible is true when the node passed PreFilter and every Filter.
	Feasible bool
	// Plugin is the rejecting plugin, or the PreFilter plugin that rejected
	// the pod outright. It is empty for feasible nodes and for nodes removed
	// by a PreFilterResult, which upstream attributes to no plugin.
	Plugin string
	// Code is the rejection's code as text: "Unschedulable" or
	// "UnschedulableAndUnresolvable"; empty for feasible nodes.
	Code string
	// Reasons are the rejection's reason strings, in upstream's order.
	Reasons []string
	// Scores maps each plugin that scored the node to its weighted score.
	// Plugins that PreScore skipped are absent. Nil when scoring was skipped.
	Scores map[string]int64
	// Total is the sum of Scores.
	Total int64
}

// OracleResult is upstream's verdict on one pod in one cluster.
type OracleResult struct {
	// Nodes holds every node's outcome, keyed by node name. When the pod's
	// nominated node fits, upstream evaluates no other node, and Nodes
	// holds that node alone.
	Nodes map[string]NodeOutcome
	// FitErrorMessage is upstream's "0/N nodes are available: ..." text when
	// no node fits, without any preemption suffix; empty otherwise.
	FitErrorMessage string
	// TopNodes are the names, sorted, of the feasible nodes sharing the
	// highest total score; upstream picks one of them at random. When
	// scoring was skipped it holds the single feasible node.
	TopNodes []string
	// Scored is false when upstream skipped scoring because at most one node
	// was feasible.
	Scored bool
	// UnschedulablePlugins are the sorted names of the plugins that rejected
	// at least one node, whether or not the pod fits elsewhere.
	UnschedulablePlugins []string
	// FeasibleNodes and EvaluatedNodes are the counts upstream's
	// ScheduleResult reports: the nodes that passed, and the nodes Filter
	// ran on (not those a PreFilterResult excluded). Both are zero when no
	// node fits.
	FeasibleNodes, EvaluatedNodes int
	// Errors, when not empty, are the sorted, distinct messages of the
	// internal errors plugins returned (a DeviceClass's malformed CEL
	// selector, for example), which end upstream's scheduling attempt
	// with one of them: the first node whose filters fail reports it.
	// Every other field is then zero.
	Errors []string
	// NotTried, when set, is the PreEnqueue plugin that keeps upstream's
	// queue from trying the pod at all (scheduling gates, or a
	// ResourceClaim that does not exist yet) and its status. Every other
	// field is then zero.
	NotTried *NotTried
}

// NotTried is a PreEnqueue plugin's refusal of a pod.
type NotTried struct {
	Plugin  string
	Code    fwk.Code
	Message string
}

// NewOracle builds upstream's framework from the default v1 profile over a
// fake API server whose informers are synced and empty, with a DRA manager
// over those informers as kube-scheduler builds it; [Oracle.RunScenario]
// fills them with a scenario's objects. Call [Oracle.Close] to stop its
// goroutines. It fails when a feature gate asks for what the oracle cannot
// give (see [newDRAManager]).
func NewOracle() (*Oracle, error) {
	return newOracle(oracleOptions{})
}

// oracleOptions are what an oracle other than [NewOracle]'s adds to it.
type oracleOptions struct {
	// registry, when set, replaces upstream's in-tree plugin registry (the
	// preemption oracle wraps factories to keep the plugins they build).
	registry frameworkruntime.Registry
	// kinds are written to the fake API server besides [objectKinds].
	kinds []schema.GroupVersionKind
	// framework are more options for the framework.
	framework []frameworkruntime.Option
	// profile, when set, replaces the default profile (which filters and
	// scores every node).
	profile *config.KubeSchedulerProfile
}

// newOracle is [NewOracle] with opts.
func newOracle(opts oracleOptions) (*Oracle, error) {
	// Plugins and the framework record into registered metric vectors.
	metrics.Register()

	profile := opts.profile
	if profile == nil {
		every := int32(100)
		var err error
		if profile, err = defaultProfile(&every); err != nil {
			return nil, err
		}
	}
	registry := opts.registry
	if registry == nil {
		registry = frameworkplugins.NewInTreeRegistry()
	}

	ctx, cancel := context.WithCancel(context.Background())
	// The simple tracker, not NewClientset's field-managed one, which
	// builds a REST mapper on every write: with it, installing a
	// scenario's objects took far longer than scheduling the pod.
	client := fake.NewSimpleClientset()
	informerFactory := informers.NewSharedInformerFactory(client, 0)
	snapshot := &snapshotLister{}
	objects, err := newClusterObjects(client, informerFactory, opts.kinds...)
	if err != nil {
		cancel()
		return nil, err
	}
	dra, err := newDRAManager(ctx, client, informerFactory)
	if err != nil {
		cancel()
		return nil, err
	}
	objects.lagging = func(want map[objectKey]runtime.Object) string {
		if lag := slicesLagging(dra, want); lag != "" {
			return lag
		}
		return claimsLagging(dra, want)
	}
	fw, err := frameworkruntime.NewFramework(ctx, registry, profile, append([]frameworkruntime.Option{
		frameworkruntime.WithClientSet(client),
		frameworkruntime.WithInformerFactory(informerFactory),
		frameworkruntime.WithSnapshotSharedLister(snapshot),
		frameworkruntime.WithSharedCSIManager(nodevolumelimits.NewCSIManager(informerFactory.Storage().V1().CSINodes().Lister())),
		frameworkruntime.WithSharedDRAManager(dra),
	}, append(linkedFrameworkOptions(snapshot), opts.framework...)...)...)
	if err != nil {
		cancel()
		return nil, fmt.Errorf("building upstream framework: %w", err)
	}
	// Plugins ask the factory for their informers while being built, so it
	// can only be started afterwards.
	informerFactory.Start(ctx.Done())
	for informerType, synced := range informerFactory.WaitForCacheSync(ctx.Done()) {
		if !synced {
			cancel()
			return nil, fmt.Errorf("informer for %v did not sync", informerType)
		}
	}
	return &Oracle{fw: fw, snapshot: snapshot, objects: objects, dra: dra, stop: cancel}, nil
}

// defaultProfile returns kube-scheduler's default profile as the v1 config
// defaults produce it, with the profile's
// percentageOfNodesToScore set to percentage. A nil percentage leaves the
// profile to the scheduler-wide setting, which by default is 0: the
// adaptive percentage that shrinks as the cluster grows.
func defaultProfile(percentage *int32) (*config.KubeSchedulerProfile, error) {
	cfg, err := latest.Default()
	if err != nil {
		return nil, fmt.Errorf("defaulting scheduler config: %w", err)
	}
	if len(cfg.Profiles) != 1 {
		return nil, fmt.Errorf("default scheduler config has %d profiles, want 1", len(cfg.Profiles))
	}
	profile := cfg.Profiles[0]
	profile.PercentageOfNodesToScore = percentage
	return &profile, nil
}

// clearCluster removes the installed cluster, once no cycle runs.
func (o *Oracle) clearCluster() {
	o.snapshot.current = nil
}

// Close stops the oracle's informers and metric recorder.
func (o *Oracle) Close() {
	o.stop()
}

// setCluster installs a cluster as the framework's snapshot. Pods whose
// spec.nodeName names no node in nodes are ignored, as kube-scheduler's
// cache would not hold them on a node. The caller holds o.mu.
func (o *Oracle) setCluster(nodes []*v1.Node, pods []*v1.Pod) {
	o.snapshot.current = cache.NewSnapshot(boundPods(nodes, pods), nodes)
}

// Run schedules pod in the cluster made of nodes and the pods bound to them
// (by spec.nodeName), and no other objects, as kube-scheduler's scheduling
// cycle would with percentageOfNodesToScore=100: PreFilter, Filter on every
// node, then PreScore and Score when more than one node is feasible. A pod
// with status.nominatedNodeName has that node tried first, as upstream
// does. Nothing is bound and no preemption is attempted. A plugin's
// internal error is part of the result ([OracleResult.Errors]); Run
// returns an error when nodes is empty, or when the oracle itself fails.
// Inputs are not modified.
func (o *Oracle) Run(ctx context.Context, nodes []*v1.Node, pods []*v1.Pod, pod *v1.Pod) (*OracleResult, error) {
	return o.RunScenario(ctx, &Scenario{Nodes: nodes, Pods: pods, Pod: pod})
}

// RunScenario is [Oracle.Run] for s, whose Objects (Namespaces, Services,
// controllers, storage and DRA objects) it first writes to its fake API
// server, waiting until the informers that upstream's plugins list from,
// and the DRA manager's claim cache, hold exactly those. It also returns
// an error when an object is of another kind, two objects share a name,
// or the informers do not catch up within a few seconds.
func (o *Oracle) RunScenario(ctx context.Context, s *Scenario) (*OracleResult, error) {
	nodes, pods, pod := s.Nodes, s.Pods, s.Pod
	if len(nodes) == 0 {
		return nil, errors.New("no nodes available to schedule pods")
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if err := o.install(ctx, s.Objects); err != nil {
		return nil, err
	}
	o.setCluster(nodes, pods)
	defer o.clearCluster()

	if notTried := o.preEnqueue(ctx, pod); notTried != nil {
		return &OracleResult{NotTried: notTried}, nil
	}
	c, err := o.cycle(ctx, pod)
	if err != nil {
		return nil, err
	}
	return c.result(pod), nil
}

// install makes objs the fake API server's objects (see
// [clusterObjects.install]) and rebuilds the DRA manager's extended
// resource cache from them. The caller holds o.mu.
func (o *Oracle) install(ctx context.Context, objs []runtime.Object) error {
	if err := o.objects.install(ctx, objs); err != nil {
		return err
	}
	return o.dra.resetResolver(ctx)
}

// preEnqueue asks upstream's PreEnqueue plugins about pod, as the
// scheduling queue does, and returns the first refusal, or nil: a pod one
// of them refuses never reaches a cycle.
func (o *Oracle) preEnqueue(ctx context.Context, pod *v1.Pod) *NotTried {
	for _, pl := range o.fw.PreEnqueuePlugins() {
		if st := pl.PreEnqueue(ctx, pod); !st.IsSuccess() {
			return &NotTried{Plugin: pl.Name(), Code: st.Code(), Message: st.Message()}
		}
	}
	return nil
}

// cycleResult is one pass of upstream's scheduling algorithm over the
// installed snapshot: the filter verdicts and, when scored, the node scores.
type cycleResult struct {
	// Diagnosis is upstream's record of rejected nodes.
	Diagnosis schedframework.Diagnosis
	// Feasible are the nodes that passed filtering, in snapshot order.
	Feasible []fwk.NodeInfo
	// Scores holds one entry per feasible node when more than one was
	// feasible, and is nil otherwise.
	Scores []fwk.NodePluginScores
	// all are every node in the snapshot.
	all []fwk.NodeInfo
	// nominatedOnly is set when the pod's nominated node passed the
	// filters, so that no other node was evaluated.
	nominatedOnly bool
	// errors are the distinct messages, sorted, of the plugin errors that
	// ended the cycle; the other fields are then incomplete.
	errors []string
	// state is the cycle's state, which PostFilter plugins read on.
	state fwk.CycleState
}

// cycle is [runCycle] for pod against the installed snapshot.
func (o *Oracle) cycle(ctx context.Context, pod *v1.Pod) (*cycleResult, error) {
	return runCycle(ctx, o.fw, o.snapshot.NodeInfos(), pod)
}

// runCycle runs fw's PreFilter, Filter (across nodes, with the
// framework's parallelizer, as upstream does), PreScore and Score for pod
// against the nodes listed, as kube-scheduler's scheduling cycle would at
// percentageOfNodesToScore 100, whatever fw's own setting: every node is
// filtered, and every feasible one scored. Rejections are in the
// Diagnosis, and a plugin's internal error ends the cycle with it in
// errors; Filter runs on every node all the same, and every node's error
// is kept, since which one upstream reports depends on timing. The
// returned error is the lister's. [Oracle] and
// [Upstream] share it, so that the oracle's verdicts and the best nodes
// the simulation timings check kubesched against are computed alike.
func runCycle(ctx context.Context, fw schedframework.Framework, nodes fwk.NodeInfoLister, pod *v1.Pod) (*cycleResult, error) {
	all, err := nodes.List()
	if err != nil {
		return nil, err
	}
	state := schedframework.NewCycleState()
	c := &cycleResult{all: all, Diagnosis: schedframework.Diagnosis{NodeToStatus: schedframework.NewDefaultNodeToStatus()}, state: state}

	preResult, status, unschedulablePlugins := fw.RunPreFilterPlugins(ctx, state, pod)
	c.Diagnosis.UnschedulablePlugins = unschedulablePlugins
	if !status.IsSuccess() {
		if !status.IsRejected() {
			c.errors = []string{status.AsError().Error()}
			return c, nil
		}
		// A PreFilter rejection applies to every node alike.
		c.Diagnosis.NodeToStatus.SetAbsentNodesStatus(status)
		c.Diagnosis.PreFilterMsg = status.Message()
		c.Diagnosis.AddPluginStatus(status)
		return c, nil
	}

	// A node nominated by an earlier preemption is tried alone first, and
	// taken without scoring if it fits, even if a PreFilterResult left it
	// out. Upstream logs a failure here and goes on with every node.
	if name := pod.Status.NominatedNodeName; name != "" {
		if nodeInfo, err := nodes.Get(name); err == nil {
			status := fw.RunFilterPlugins(ctx, state, pod, nodeInfo)
			switch {
			case status.IsSuccess():
				c.Feasible, c.nominatedOnly = []fwk.NodeInfo{nodeInfo}, true
				return c, nil
			case status.IsRejected():
				c.Diagnosis.NodeToStatus.Set(name, status)
				c.Diagnosis.AddPluginStatus(status)
			}
		}
	}

	candidates := all
	if !preResult.AllNodes() {
		candidates = make([]fwk.NodeInfo, 0, len(preResult.NodeNames))
		for _, nodeInfo := range all {
			if preResult.NodeNames.Has(nodeInfo.Node().Name) {
				candidates = append(candidates, nodeInfo)
			}
		}
		c.Diagnosis.NodeToStatus.SetAbsentNodesStatus(fwk.NewStatus(fwk.UnschedulableAndUnresolvable,
			fmt.Sprintf("node(s) didn't satisfy plugin(s) %v", sets.List(unschedulablePlugins))))
	}

	// Upstream runs filters with RunFilterPluginsWithNominatedPods; without
	// nominated pods that is exactly RunFilterPlugins, and it needs no
	// PodNominator.
	statuses := make([]*fwk.Status, len(candidates))
	fw.Parallelizer().Until(ctx, len(candidates), func(i int) {
		statuses[i] = fw.RunFilterPlugins(ctx, state, pod, candidates[i])
	}, metrics.Filter)
	errs := sets.New[string]()
	for i, status := range statuses {
		switch {
		case status.Code() == fwk.Error:
			errs.Insert(status.AsError().Error())
		case status.IsSuccess():
			c.Feasible = append(c.Feasible, candidates[i])
		default:
			c.Diagnosis.NodeToStatus.Set(candidates[i].Node().Name, status)
			c.Diagnosis.AddPluginStatus(status)
		}
	}

	if errs.Len() > 0 {
		c.errors = sets.List(errs)
		return c, nil
	}

	// Upstream places a lone feasible node without scoring it.
	if len(c.Feasible) < 2 {
		return c, nil
	}
	if status := fw.RunPreScorePlugins(ctx, state, pod, c.Feasible); !status.IsSuccess() {
		c.errors = []string{status.AsError().Error()}
		return c, nil
	}
	scores, status := fw.RunScorePlugins(ctx, state, pod, c.Feasible)
	if !status.IsSuccess() {
		c.errors = []string{status.AsError().Error()}
		return c, nil
	}
	c.Scores = scores
	return c, nil
}

// topNodes returns the sorted names of the feasible nodes with the highest
// total score, or of the lone feasible node when scoring was skipped.
func (c *cycleResult) topNodes() []string {
	if c.Scores == nil {
		var top []string
		for _, nodeInfo := range c.Feasible {
			top = append(top, nodeInfo.Node().Name)
		}
		return top
	}
	best := c.Scores[0].TotalScore
	for _, s := range c.Scores[1:] {
		best = max(best, s.TotalScore)
	}
	var top []string
	for _, s := range c.Scores {
		if s.TotalScore == best {
			top = append(top, s.Name)
		}
	}
	slices.Sort(top)
	return top
}

// result converts the cycle into per-node outcomes, or into its errors.
func (c *cycleResult) result(pod *v1.Pod) *OracleResult {
	if len(c.errors) > 0 {
		return &OracleResult{Errors: c.errors}
	}
	res := &OracleResult{
		Nodes:    make(map[string]NodeOutcome, len(c.all)),
		TopNodes: c.topNodes(),
		Scored:   c.Scores != nil,
	}
	if len(c.Diagnosis.UnschedulablePlugins) > 0 {
		res.UnschedulablePlugins = sets.List(c.Diagnosis.UnschedulablePlugins)
	}
	// Upstream evaluated no other node when the nominated one fit.
	if !c.nominatedOnly {
		for _, nodeInfo := range c.all {
			name := nodeInfo.Node().Name
			status := c.Diagnosis.NodeToStatus.Get(name)
			res.Nodes[name] = NodeOutcome{Plugin: status.Plugin(), Code: status.Code().String(), Reasons: status.Reasons()}
		}
	}
	for _, nodeInfo := range c.Feasible {
		res.Nodes[nodeInfo.Node().Name] = NodeOutcome{Feasible: true}
	}
	for _, s := range c.Scores {
		outcome := NodeOutcome{Feasible: true, Scores: make(map[string]int64, len(s.Scores)), Total: s.TotalScore}
		for _, ps := range s.Scores {
			outcome.Scores[ps.Name] = ps.Score
		}
		res.Nodes[s.Name] = outcome
	}
	if len(c.Feasible) > 0 {
		res.FeasibleNodes = len(c.Feasible)
		res.EvaluatedNodes = len(c.Feasible) + c.Diagnosis.NodeToStatus.Len()
	}
	if len(c.Feasible) == 0 {
		fitErr := &schedframework.FitError{Pod: pod, NumAllNodes: len(c.all), Diagnosis: c.Diagnosis}
		res.FitErrorMessage = fitErr.Error()
	}
	return res
}

// boundPods returns the pods whose spec.nodeName is one of nodes. A pod
// bound to an unknown node would make the snapshot hold a NodeInfo without
// a node, which upstream's cache never hands to plugins.
func boundPods(nodes []*v1.Node, pods []*v1.Pod) []*v1.Pod {
	known := make(map[string]bool, len(nodes))
	for _, n := range nodes {
		known[n.Name] = true
	}
	var bound []*v1.Pod
	for _, p := range pods {
		if known[p.Spec.NodeName] {
			bound = append(bound, p)
		}
	}
	return bound
}

// snapshotLister lets one framework, whose SharedLister is fixed at
// construction, see a different cluster on each run. current is only
// replaced while no scheduling cycle is running.
type snapshotLister struct {
	current *cache.Snapshot
}

// NodeInfos lists the nodes of the installed cluster.
func (s *snapshotLister) NodeInfos() fwk.NodeInfoLister {
	return s.snapshotOrEmpty().NodeInfos()
}

// StorageInfos reports which PVCs the installed cluster's pods use.
func (s *snapshotLister) StorageInfos() fwk.StorageInfoLister {
	return s.snapshotOrEmpty().StorageInfos()
}

// PodGroupStates reports the installed cluster's pod groups.
func (s *snapshotLister) PodGroupStates() fwk.PodGroupStateLister {
	return s.snapshotOrEmpty().PodGroupStates()
}

// snapshotOrEmpty keeps the framework usable between runs, when plugins
// built at start-up may list nodes.
func (s *snapshotLister) snapshotOrEmpty() *cache.Snapshot {
	if s.current == nil {
		return cache.NewEmptySnapshot()
	}
	return s.current
}
