package conformance

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/nodeinfo"
)

var numNominatedScenarios = flag.Int("nominated-scenarios", envInt("KUBESCHED_CONFORMANCE_NOMINATED_SCENARIOS", 1000),
	"number of scenarios TestNominatedPods compares (env KUBESCHED_CONFORMANCE_NOMINATED_SCENARIOS)")

// nominationStream keeps nominations' randomness apart from Generate's,
// so a seed's cluster and pod are those TestDifferential sees.
const nominationStream = 0x6e6f6d696e617465

// nominatedOracle is the linked release's [NominatedOracle], built when
// first used.
var nominatedOracle = sync.OnceValues(NewNominatedOracle)

// TestNominatedPods adds nominated pods to generated scenarios and
// requires kubesched with framework.WithNominator to reach upstream's
// verdicts with RunFilterPluginsWithNominatedPods on every node, the
// nominated node's included, and the same scores and fit errors. A
// failing scenario is rerun alone with
// -run 'TestNominatedPods/group/seed=N$'.
func TestNominatedPods(t *testing.T) {
	plain, err := ours.DefaultFramework(framework.WithPercentageOfNodesToScore(100))
	if err != nil {
		t.Fatal(err)
	}
	var nominations, changed, failing atomic.Int64
	start := time.Now()
	t.Run("group", func(t *testing.T) {
		for i := range *numNominatedScenarios {
			seed := *firstSeed + uint64(i)
			t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
				t.Parallel()
				s := Generate(seed)
				feasible, err := feasibleNodes(s)
				if err != nil {
					// A plugin error (a DeviceClass's malformed
					// selector) ends every cycle: nominate nothing, and
					// both sides must still fail alike.
					feasible = nil
				}
				nominated := nominate(s, seed, feasible)
				nominations.Add(int64(len(nominated)))
				diffs, err := compareNominated(context.Background(), s, nominated)
				if err != nil {
					t.Fatalf("seed %d: %v", seed, err)
				}
				if len(diffs) > 0 {
					failing.Add(1)
					t.Errorf("seed %d: %d disagreement(s) with kube-scheduler, nominations %s:\n%s",
						seed, len(diffs), describeNominations(nominated), formatDiffs(diffs, 20))
					return
				}
				// Coverage: did the nominations change any verdict?
				if differs, err := verdictsDiffer(plain, s, nominated); err != nil {
					t.Fatal(err)
				} else if differs {
					changed.Add(1)
				}
			})
		}
	})
	t.Logf("%d scenarios with %d nominations in %v: %d disagreements; the nominations changed some node's verdict in %d",
		*numNominatedScenarios, nominations.Load(), time.Since(start).Round(time.Millisecond), failing.Load(), changed.Load())
}

// nominate adds to s, deterministically from seed, a priority for the
// incoming pod and one to four pods nominated to its nodes, mostly to the
// nodes feasible for it without nominations, where they matter: copies of
// its running pods or, as often, of the incoming pod (same labels,
// requests, ports and affinity), of lower, equal or higher priority, and
// now and then the incoming pod itself or a node that is gone. Copies of
// pods the incoming pod's required affinity selects are frequent: only
// the second pass, without them, may reject a node they satisfy the
// affinity on. To have more such pods, one scenario in four gives the
// incoming pod a required affinity to the node of one of its running
// pods (see wantRunningPod).
func nominate(s *Scenario, seed uint64, feasible []string) []Nomination {
	r := rand.New(rand.NewPCG(seed, nominationStream))
	priority := []int32{0, 100, 1000}[r.IntN(3)]
	s.Pod.Spec.Priority = &priority
	if len(s.Pods) > 0 && r.IntN(4) == 0 {
		wantRunningPod(s, s.Pods[r.IntN(len(s.Pods))])
	}
	attracting := podsAttracting(s)
	var out []Nomination
	for i := range 1 + r.IntN(4) {
		node := s.Nodes[r.IntN(len(s.Nodes))].Name
		switch {
		case r.IntN(10) == 0:
			node = "node-that-went-away"
		case len(feasible) > 0 && r.IntN(3) > 0:
			node = feasible[r.IntN(len(feasible))]
		}
		if r.IntN(12) == 0 {
			out = append(out, Nomination{Pod: s.Pod, Node: node})
			continue
		}
		template := s.Pod
		if len(s.Pods) > 0 && r.IntN(2) == 0 {
			template = s.Pods[r.IntN(len(s.Pods))]
		}
		if len(attracting) > 0 && r.IntN(4) > 0 {
			// A pod the incoming pod's affinity wants: it may satisfy the
			// affinity only while counted.
			template = attracting[r.IntN(len(attracting))]
		}
		p := template.DeepCopy()
		p.Name = fmt.Sprintf("nominated-%d", i)
		p.UID = types.UID("uid-" + p.Name)
		p.Spec.NodeName = ""
		p.Status = v1.PodStatus{NominatedNodeName: node}
		pp := priority + []int32{-10, 0, 10}[r.IntN(3)]
		p.Spec.Priority = &pp
		out = append(out, Nomination{Pod: p, Node: node})
	}
	return out
}

// feasibleNodes returns the names, sorted, of the nodes kubesched finds
// feasible for s's pod without nominations.
func feasibleNodes(s *Scenario) ([]string, error) {
	fw, err := ours.DefaultFramework(framework.WithObjects(schedulingObjects(s.Objects)...))
	if err != nil {
		return nil, err
	}
	feasible, _, err := fw.Filter(context.Background(), s.Pod, nodeinfo.Build(s.Nodes, s.Pods))
	var names []string
	for _, ni := range feasible {
		names = append(names, ni.Name())
	}
	slices.Sort(names)
	return names, err
}

// wantRunningPod gives s's incoming pod a required pod affinity, per
// node, to pods labelled as running pod p is: a copy of p nominated to
// another node satisfies it there only while counted.
func wantRunningPod(s *Scenario, p *v1.Pod) {
	if len(p.Labels) == 0 {
		return
	}
	a := s.Pod.Spec.Affinity
	if a == nil {
		a = &v1.Affinity{}
		s.Pod.Spec.Affinity = a
	}
	if a.PodAffinity == nil {
		a.PodAffinity = &v1.PodAffinity{}
	}
	a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution,
		v1.PodAffinityTerm{LabelSelector: &metav1.LabelSelector{MatchLabels: p.Labels}, Namespaces: []string{p.Namespace}, TopologyKey: v1.LabelHostname})
}

// podsAttracting returns the running pods that match a label selector of
// the incoming pod's required pod affinity terms, roughly: any namespace
// a namespace selector names passes.
func podsAttracting(s *Scenario) []*v1.Pod {
	a := s.Pod.Spec.Affinity
	if a == nil || a.PodAffinity == nil {
		return nil
	}
	var out []*v1.Pod
	for _, p := range s.Pods {
		for _, term := range a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution {
			inNamespace := p.Namespace == s.Pod.Namespace || slices.Contains(term.Namespaces, p.Namespace) || term.NamespaceSelector != nil
			if sel, err := metav1.LabelSelectorAsSelector(term.LabelSelector); err == nil && inNamespace && sel.Matches(labels.Set(p.Labels)) {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

func describeNominations(nominated []Nomination) string {
	var parts []string
	for _, n := range nominated {
		parts = append(parts, fmt.Sprintf("%s (priority %d) on %s", n.Pod.Name, *n.Pod.Spec.Priority, n.Node))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// nominatedFramework is kubesched's default profile with s's objects and
// the nominations.
func nominatedFramework(s *Scenario, nominated []Nomination) (*framework.Framework, error) {
	noms := framework.NewNominations()
	for _, n := range nominated {
		noms.Add(n.Pod, n.Node)
	}
	return ours.DefaultFramework(framework.WithPercentageOfNodesToScore(100),
		framework.WithObjects(schedulingObjects(s.Objects)...), framework.WithNominator(noms))
}

// compareNominated runs s with the nominations through the oracle and
// kubesched and lists where they differ, as compare does for plain
// scenarios.
func compareNominated(ctx context.Context, s *Scenario, nominated []Nomination) ([]disagreement, error) {
	want, err := upstream.RunNominated(ctx, s, nominated)
	if err != nil {
		return nil, fmt.Errorf("oracle: %w", err)
	}
	fw, err := nominatedFramework(s, nominated)
	if err != nil {
		return nil, err
	}
	got, err := fw.Schedule(ctx, s.Pod, nodeinfo.Build(s.Nodes, s.Pods))
	return diffResults(s, want, got, err), nil
}

// verdictsDiffer reports whether kubesched's verdicts on s's nodes differ
// with and without the nominations.
func verdictsDiffer(plain *framework.Framework, s *Scenario, nominated []Nomination) (bool, error) {
	if len(s.Objects) > 0 {
		var err error
		if plain, err = ours.DefaultFramework(framework.WithPercentageOfNodesToScore(100), framework.WithObjects(schedulingObjects(s.Objects)...)); err != nil {
			return false, err
		}
	}
	with, err := nominatedFramework(s, nominated)
	if err != nil {
		return false, err
	}
	nodes := nodeinfo.Build(s.Nodes, s.Pods)
	return !maps.Equal(verdicts(plain, s.Pod, nodes), verdicts(with, s.Pod, nodes)), nil
}

// verdicts maps node names to what Schedule decided about them: a
// rejection, "feasible", or nothing when not evaluated.
func verdicts(fw *framework.Framework, pod *v1.Pod, nodes []*nodeinfo.NodeInfo) map[string]string {
	res, err := fw.Schedule(context.Background(), pod, nodes)
	var fitErr *framework.FitError
	var d framework.Diagnosis
	out := map[string]string{}
	switch {
	case errors.As(err, &fitErr):
		d = fitErr.Diagnosis
	case err != nil:
		return map[string]string{"": err.Error()}
	default:
		d = res.Diagnosis
		out[res.SuggestedHost] = "feasible"
		for _, ns := range res.NodeScores() {
			out[ns.Name] = "feasible"
		}
	}
	for name, status := range d.Rejected() {
		out[name] = status.String()
	}
	return out
}
