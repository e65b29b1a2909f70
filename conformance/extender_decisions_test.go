package conformance

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"

	kfwk "github.com/kubesched/kubesched/fwk"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	configv1 "k8s.io/kube-scheduler/config/v1"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/apis/config/scheme"
	schedframework "k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/utils/ptr"

	"github.com/kubesched/kubesched/cache"
	extserver "github.com/kubesched/kubesched/extender/server"
	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/nodeinfo"
)

// testExtender is one HTTP extender that both schedulers call: its verbs
// decide by a hash of the extender's number, the pod and the node, so
// that its answers are the same whoever asks. Verbs named "fail-…" fail.
type testExtender struct {
	mu sync.Mutex
	// nodes are the scenario's, with the pods bound to them, for
	// nodeCacheCapable calls and the preempt verbs. They are only read.
	nodes map[string]*nodeinfo.NodeInfo
}

func (e *testExtender) handler(t *testing.T) *httptest.Server {
	t.Helper()
	opts := []extserver.Option{extserver.WithLogger(logr.Discard()), extserver.WithNodes(func(_ context.Context, name string) (*nodeinfo.NodeInfo, error) {
		e.mu.Lock()
		defer e.mu.Unlock()
		ni, ok := e.nodes[name]
		if !ok {
			return nil, fmt.Errorf("no node %q", name)
		}
		return ni, nil
	})}
	for i := range 2 {
		opts = append(opts,
			extserver.Filter(fmt.Sprintf("filter%d", i), extserver.EachNode(func(_ context.Context, pod *v1.Pod, ni *nodeinfo.NodeInfo) *kfwk.Status {
				switch extenderHash(i, pod, ni.Name()) % 10 {
				case 0, 1:
					return kfwk.NewStatus(kfwk.Unschedulable, fmt.Sprintf("extender %d turns the node down", i))
				case 2:
					return kfwk.NewStatus(kfwk.UnschedulableAndUnresolvable, fmt.Sprintf("extender %d never takes the node", i))
				}
				return nil
			})),
			extserver.Prioritize(fmt.Sprintf("prioritize%d", i), extserver.EachNodeScore(func(_ context.Context, pod *v1.Pod, ni *nodeinfo.NodeInfo) (int64, error) {
				return int64(extenderHash(100+i, pod, ni.Name()) % 11), nil
			})),
			extserver.Preempt(fmt.Sprintf("preempt%d", i), e.preempt(i)))
	}
	opts = append(opts,
		extserver.Filter("fail-filter", func(context.Context, *v1.Pod, []*nodeinfo.NodeInfo) ([]*nodeinfo.NodeInfo, framework.Diagnosis, error) {
			return nil, framework.Diagnosis{}, errors.New("the extender's filter is broken")
		}),
		extserver.Prioritize("fail-prioritize", func(context.Context, *v1.Pod, []*nodeinfo.NodeInfo) (extenderv1.HostPriorityList, error) {
			return nil, errors.New("the extender's prioritize is broken")
		}),
		extserver.Preempt("fail-preempt", func(context.Context, *v1.Pod, map[string]*extenderv1.Victims) (map[string]*extenderv1.Victims, error) {
			return nil, errors.New("the extender's preempt is broken")
		}),
		extserver.Preempt("fail-preempt-node", preemptOnMissingNode))
	h, err := extserver.New(opts...)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// setCluster makes nodes, with the pods bound to them, the cluster the
// extender knows.
func (e *testExtender) setCluster(nodes []*v1.Node, pods []*v1.Pod) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.nodes = map[string]*nodeinfo.NodeInfo{}
	for _, ni := range nodeinfo.Build(nodes, pods) {
		e.nodes[ni.Name()] = ni
	}
}

func extenderHash(i int, pod *v1.Pod, node string) uint32 {
	h := fnv.New32a()
	fmt.Fprintf(h, "%d/%s/%s", i, pod.Name, node)
	return h.Sum32()
}

// generateExtenderConfig returns a configuration of one or two extenders
// at url: filter and prioritize verbs (sometimes failing ones), weights,
// nodeCacheCapable both ways, ignorable or not, and sometimes an extended
// resource they manage, which decides which pods they are asked about,
// and which NodeResourcesFit ignores when ignoredByScheduler. With
// preempt, most extenders get a preempt verb too, some a failing one;
// without, r is drawn from as it always was, so that a seed's
// configuration stays the same.
func generateExtenderConfig(r *rand.Rand, url string, preempt bool) []byte {
	chance := func(p float64) bool { return r.Float64() < p }
	var b strings.Builder
	b.WriteString("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: default-scheduler\n  percentageOfNodesToScore: 100\nextenders:\n")
	for i := range 1 + r.IntN(2) {
		fmt.Fprintf(&b, "- urlPrefix: %s\n", url)
		switch {
		case chance(0.1):
			b.WriteString("  filterVerb: fail-filter\n")
		case chance(0.85):
			fmt.Fprintf(&b, "  filterVerb: filter%d\n", i)
		}
		switch {
		case chance(0.1):
			fmt.Fprintf(&b, "  prioritizeVerb: fail-prioritize\n  weight: %d\n", 1+r.IntN(5))
		case chance(0.8):
			fmt.Fprintf(&b, "  prioritizeVerb: prioritize%d\n  weight: %d\n", i, 1+r.IntN(5))
		}
		if preempt {
			switch {
			case chance(0.1):
				b.WriteString("  preemptVerb: fail-preempt\n")
			case chance(0.05):
				b.WriteString("  preemptVerb: fail-preempt-node\n")
			case chance(0.9):
				fmt.Fprintf(&b, "  preemptVerb: preempt%d\n", i)
			}
		}
		fmt.Fprintf(&b, "  nodeCacheCapable: %v\n  ignorable: %v\n", chance(0.5), chance(0.4))
		if i == 0 && chance(0.2) {
			fmt.Fprintf(&b, "  managedResources:\n  - name: example.com/gpu\n    ignoredByScheduler: %v\n", chance(0.5))
		}
	}
	return []byte(b.String())
}

// TestExtenderDecisionsMatchUpstream has kube-scheduler's own scheduler
// (its HTTPExtender client, and the scheduling algorithm that calls it)
// and a kubesched framework from the same configuration call the same
// loopback extenders on generated scenarios: the same nodes feasible,
// the same verdict and reason on every rejected node, the same FitError
// message, the same error from a failing extender that is not ignorable,
// and every node upstream chooses among kubesched's best.
func TestExtenderDecisionsMatchUpstream(t *testing.T) {
	linkedOnly(t)
	t.Parallel()
	ctx := context.Background()
	ext := &testExtender{}
	srv := ext.handler(t)
	const configs, scenarios = 30, 12
	outcomes := map[string]int{}
	for c := range uint64(configs) {
		data := generateExtenderConfig(rand.New(rand.NewPCG(c, 0xe87)), srv.URL, false)
		u, cfg := extenderSchedulers(t, data)
		for i := range uint64(scenarios) {
			s := generate(9000000+c*100+i, i%2 == 0)
			installExtenderScenario(t, ext, u, s)
			// Upstream's SchedulePod stops before PostFilter.
			fws, err := ours.FrameworksFromConfig(cfg, framework.WithObjects(schedulingObjects(s.Objects)...), framework.WithoutPreemption())
			if err != nil {
				t.Fatalf("config %d: FrameworksFromConfig: %v\n%s", c, err, data)
			}
			// Upstream's scheduler keeps its nodes in its cache, which
			// gives an image name the size the first node reported:
			// kubesched's cache, fed in the same order, does too.
			got, gotErr := fws["default-scheduler"].ScheduleSnapshot(ctx, s.Pod, cachedSnapshot(t, s.Nodes, s.Pods))
			// Several times: upstream breaks ties at random.
			for range 3 {
				want, wantErr := u.Schedule(ctx, s.Pod)
				if d := compareWithExtenders(want, wantErr, got, gotErr); d != "" {
					t.Fatalf("config %d, seed %d: %s\nconfig:\n%s", c, s.Seed, d, data)
				}
			}
			var fitErr *framework.FitError
			switch {
			case errors.As(gotErr, &fitErr):
				outcomes["unschedulable"]++
				if slices.Contains(fitErr.Diagnosis.UnschedulablePlugins.UnsortedList(), framework.ExtenderName) {
					outcomes["turned down by an extender"]++
				}
			case gotErr != nil:
				outcomes["failed"]++
			default:
				outcomes["placed"]++
				if slices.ContainsFunc(got.NodeScores(), func(n framework.NodePluginScores) bool {
					return slices.ContainsFunc(n.Scores, func(p framework.PluginScore) bool { return p.Name == srv.URL })
				}) {
					outcomes["scored by an extender"]++
				}
			}
		}
		u.Close()
	}
	t.Logf("%d configurations, %d scenarios each: %v", configs, scenarios, outcomes)
	for _, o := range []string{"placed", "unschedulable", "failed", "turned down by an extender", "scored by an extender"} {
		if outcomes[o] == 0 {
			t.Errorf("no scenario %s: the generator drifted (%v)", o, outcomes)
		}
	}
}

// extenderSchedulers builds both schedulers from data, a configuration
// with extenders (see [generateExtenderConfig]): kube-scheduler's own,
// built by scheduler.New with the configuration's extenders, and
// kubesched's reading of the configuration, from which the caller builds
// frameworks. The caller closes the Upstream; a configuration either
// side refuses fails the test.
func extenderSchedulers(t *testing.T, data []byte) (*Upstream, *configv1.KubeSchedulerConfiguration) {
	t.Helper()
	obj, _, err := scheme.Codecs.UniversalDecoder().Decode(data, nil, nil)
	if err != nil {
		t.Fatalf("upstream cannot decode the configuration: %v\n%s", err, data)
	}
	extenders := obj.(*config.KubeSchedulerConfiguration).Extenders
	u, err := newUpstream(ptr.To[int32](100), scheduler.WithExtenders(extenders...))
	if err != nil {
		t.Fatalf("%v\n%s", err, data)
	}
	cfg, err := ours.LoadConfig(data)
	if err != nil {
		u.Close()
		t.Fatalf("LoadConfig: %v\n%s", err, data)
	}
	return u, cfg
}

// installExtenderScenario gives the extender and upstream's scheduler
// s's cluster: its nodes, the pods bound to them, and its objects.
func installExtenderScenario(t *testing.T, ext *testExtender, u *Upstream, s *Scenario) {
	t.Helper()
	ext.setCluster(s.Nodes, s.Pods)
	if err := u.SetCluster(s.Nodes, s.Pods); err != nil {
		t.Fatal(err)
	}
	if err := u.SetObjects(context.Background(), s.Objects); err != nil {
		t.Fatal(err)
	}
}

// compareWithExtenders compares upstream's scheduling of a pod with
// kubesched's and returns the first difference, or "".
func compareWithExtenders(want scheduler.ScheduleResult, wantErr error, got *framework.Result, gotErr error) string {
	var wantFit *schedframework.FitError
	var gotFit *framework.FitError
	switch {
	case errors.As(wantErr, &wantFit):
		if !errors.As(gotErr, &gotFit) {
			return fmt.Sprintf("upstream: %v; kubesched: %v, %v", wantErr, got, gotErr)
		}
		if wantErr.Error() != gotErr.Error() {
			return fmt.Sprintf("FitError:\n\tupstream  %s\n\tkubesched %s", wantErr, gotErr)
		}
		for name, status := range gotFit.Diagnosis.Rejected() {
			w := wantFit.Diagnosis.NodeToStatus.Get(name)
			if int(w.Code()) != int(status.Code()) || !slices.Equal(w.Reasons(), status.Reasons()) {
				return fmt.Sprintf("node %s: upstream %v %q, kubesched %v %q", name, w.Code(), w.Reasons(), status.Code(), status.Reasons())
			}
		}
		if !slices.Equal(sortedSet(wantFit.Diagnosis.UnschedulablePlugins.UnsortedList()), sortedSet(gotFit.Diagnosis.UnschedulablePlugins.UnsortedList())) {
			return fmt.Sprintf("unschedulable plugins: upstream %v, kubesched %v", wantFit.Diagnosis.UnschedulablePlugins, gotFit.Diagnosis.UnschedulablePlugins)
		}
		return ""
	case wantErr != nil:
		if gotErr == nil || wantErr.Error() != gotErr.Error() {
			return fmt.Sprintf("error:\n\tupstream  %v\n\tkubesched %v", wantErr, gotErr)
		}
		return ""
	case gotErr != nil:
		return fmt.Sprintf("upstream placed the pod on %s; kubesched: %v", want.SuggestedHost, gotErr)
	}
	if want.FeasibleNodes != got.FeasibleNodes || want.EvaluatedNodes != got.EvaluatedNodes {
		return fmt.Sprintf("upstream found %d feasible of %d, kubesched %d of %d", want.FeasibleNodes, want.EvaluatedNodes, got.FeasibleNodes, got.EvaluatedNodes)
	}
	best := []string{got.SuggestedHost}
	if scores := got.NodeScores(); len(scores) > 0 {
		top := slices.MaxFunc(scores, func(a, b framework.NodePluginScores) int { return int(a.TotalScore - b.TotalScore) }).TotalScore
		best = nil
		for _, n := range scores {
			if n.TotalScore == top {
				best = append(best, n.Name)
			}
		}
	}
	if !slices.Contains(best, want.SuggestedHost) {
		return fmt.Sprintf("upstream chose %s, not among kubesched's best %v (kubesched chose %s)", want.SuggestedHost, best, got.SuggestedHost)
	}
	return ""
}

// cachedSnapshot is a snapshot of kubesched's cache after nodes, then the
// pods bound to them, were added in order, as [Upstream.SetCluster] adds
// them to kube-scheduler's.
func cachedSnapshot(t *testing.T, nodes []*v1.Node, pods []*v1.Pod) *cache.Snapshot {
	t.Helper()
	return newCache(t, nodes, boundPods(nodes, pods)).Snapshot()
}

// newCache is kubesched's cache after nodes, then pods, were added in
// order.
func newCache(t *testing.T, nodes []*v1.Node, pods []*v1.Pod) *cache.Cache {
	t.Helper()
	c, err := cache.New()
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes {
		if _, err := c.AddNode(n); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range pods {
		if err := c.AddPod(p); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

func sortedSet(s []string) []string {
	slices.Sort(s)
	return s
}
