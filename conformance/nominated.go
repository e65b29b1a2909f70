package conformance

import (
	"context"
	"fmt"
	"sync"

	v1 "k8s.io/api/core/v1"
	fwk "k8s.io/kube-scheduler/framework"
	schedframework "k8s.io/kubernetes/pkg/scheduler/framework"
)

// Nomination is a pending pod nominated to run on a node, as preemption
// leaves it while its victims terminate.
type Nomination struct {
	Pod  *v1.Pod
	Node string
}

// NominatedOracle is an [Oracle] whose scheduling cycle sees nominated
// pods: its filters run through upstream's
// RunFilterPluginsWithNominatedPods, with a pod nominator holding the
// nominations given to [NominatedOracle.RunScenario], as kube-scheduler's
// scheduling queue would. Create it with [NewNominatedOracle]; it is safe
// for concurrent use, and runs are serialised.
type NominatedOracle struct {
	mu        sync.Mutex
	oracle    *Oracle
	nominator *fixedNominator
}

// NewNominatedOracle builds an oracle of its own (see [NewOracle]) and
// gives its framework a nominator. Call [NominatedOracle.Close] to stop
// it.
func NewNominatedOracle() (*NominatedOracle, error) {
	o, err := NewOracle()
	if err != nil {
		return nil, err
	}
	nominator := &fixedNominator{}
	o.fw.SetPodNominator(nominator)
	o.fw = nominatingFramework{o.fw}
	return &NominatedOracle{oracle: o, nominator: nominator}, nil
}

// Close stops the oracle.
func (n *NominatedOracle) Close() { n.oracle.Close() }

// RunScenario is [Oracle.RunScenario] with the pods of nominated waiting
// on their nodes, in the order given. The pod being scheduled may be
// among them; upstream ignores its own nomination. It returns an error
// for a nomination without pod, or one whose pod upstream cannot parse.
func (n *NominatedOracle) RunScenario(ctx context.Context, s *Scenario, nominated []Nomination) (*OracleResult, error) {
	byNode := map[string][]fwk.PodInfo{}
	for _, nom := range nominated {
		if nom.Pod == nil {
			return nil, fmt.Errorf("nomination to %q has no pod", nom.Node)
		}
		pi, err := schedframework.NewPodInfo(nom.Pod)
		if err != nil {
			return nil, fmt.Errorf("nominated pod %s: %w", nom.Pod.Name, err)
		}
		byNode[nom.Node] = append(byNode[nom.Node], pi)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	n.nominator.byNode = byNode
	defer func() { n.nominator.byNode = nil }()
	return n.oracle.RunScenario(ctx, s)
}

// nominatingFramework runs every Filter call, the nominated node's
// included, through RunFilterPluginsWithNominatedPods, as upstream's
// scheduling cycle does; the oracle calls RunFilterPlugins.
type nominatingFramework struct {
	schedframework.Framework
}

func (f nominatingFramework) RunFilterPlugins(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeInfo fwk.NodeInfo) *fwk.Status {
	return f.RunFilterPluginsWithNominatedPods(ctx, state, pod, nodeInfo)
}

// fixedNominator answers with the nominations of the current run. It is
// set only between runs, so the framework's parallel filters only read it.
// A scheduling cycle only reads nominations: the PodNominator methods
// that change them, which the oracle never calls, are left unimplemented
// (nil).
type fixedNominator struct {
	fwk.PodNominator
	byNode map[string][]fwk.PodInfo
}

func (n *fixedNominator) NominatedPodsForNode(nodeName string) []fwk.PodInfo {
	return n.byNode[nodeName]
}
