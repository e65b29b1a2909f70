package conformance

import (
	"context"
	"errors"
	"runtime"
	"time"

	v1 "k8s.io/api/core/v1"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
)

// The simulations' timings compare kubesched with a release the test
// process cannot link by running that release's [UpstreamSim] in the
// oracle's process: "sim-setup" installs a cluster and the pods to place,
// "sim-evaluate", "sim-bind", "sim-place" and "sim-undo" are the checks'
// steps, each "sim-round" places every pending pod there and takes the
// placements back, and "time-clear" lets the cluster go.

// SimRound is one round of a simulation timed in the oracle's process.
type SimRound struct {
	// Unplaced counts the pods that fit nowhere.
	Unplaced int
	// Spent is the time the placements took, without taking them back.
	Spent time.Duration
}

var errNoSim = errors.New("no simulation is installed")

// simSetup installs s's nodes, pods and objects in the Upstream for
// percentage, and pending as the pods each round places.
func (t *timer) simSetup(ctx context.Context, percentage *int32, firstFit bool, s *Scenario, pending []*v1.Pod) error {
	u, err := t.install(ctx, percentage, s)
	if err != nil {
		return err
	}
	t.sim = NewUpstreamSim(u, s.Nodes, firstFit)
	t.pending = pending
	return nil
}

// simStep answers the simulation's requests but "sim-setup".
func (t *timer) simStep(ctx context.Context, req *request) (any, error) {
	s := t.sim
	if s == nil {
		return nil, errNoSim
	}
	switch req.Kind {
	case "sim-evaluate":
		return s.Upstream().Evaluate(ctx, req.Pod)
	case "sim-bind":
		return true, s.Upstream().Bind(req.Pod, req.Node)
	case "sim-place":
		return s.Place(ctx, req.Pod)
	case "sim-undo":
		return true, s.Undo()
	}
	// A round: the pending pods placed after a garbage collection, as the
	// caller's rounds are, then taken back, untimed.
	runtime.GC()
	start := time.Now()
	unplaced, err := s.PlaceAll(ctx, t.pending)
	spent := time.Since(start)
	if err != nil {
		return nil, err
	}
	return &SimRound{Unplaced: unplaced, Spent: spent}, s.Undo()
}

// SetUpSim installs a simulation in the oracle's process: the cluster of
// nodes, pods and objects in the Upstream for percentage (nil:
// kube-scheduler's default), placing pods by first fit or best fit, and
// pending as the pods each [RemoteOracle.SimRound] places. It replaces
// any simulation or timing installed before.
func (r *RemoteOracle) SetUpSim(ctx context.Context, percentage *int32, firstFit bool, nodes []*v1.Node, pods []*v1.Pod, objects []k8sruntime.Object, pending []*v1.Pod) error {
	w, err := toWire(&Scenario{Nodes: nodes, Pods: pods, Objects: objects})
	if err != nil {
		return err
	}
	var ok bool
	return r.call(&request{Kind: "sim-setup", Scenario: w, Percentage: percentage, FirstFit: firstFit, Pending: pending}, &ok)
}

// SimEvaluate is [Upstream.Evaluate] on the installed simulation's
// cluster.
func (r *RemoteOracle) SimEvaluate(pod *v1.Pod) (UpstreamVerdict, error) {
	var v UpstreamVerdict
	return v, r.call(&request{Kind: "sim-evaluate", Pod: pod}, &v)
}

// SimBind is [Upstream.Bind] on the installed simulation's cluster.
func (r *RemoteOracle) SimBind(pod *v1.Pod, node string) error {
	var ok bool
	return r.call(&request{Kind: "sim-bind", Pod: pod, Node: node}, &ok)
}

// SimPlace is [UpstreamSim.Place] on the installed simulation.
func (r *RemoteOracle) SimPlace(pod *v1.Pod) (string, error) {
	var node string
	return node, r.call(&request{Kind: "sim-place", Pod: pod}, &node)
}

// SimUndo is [UpstreamSim.Undo] on the installed simulation.
func (r *RemoteOracle) SimUndo() error {
	var ok bool
	return r.call(&request{Kind: "sim-undo"}, &ok)
}

// SimRound places the installed simulation's pending pods in the oracle's
// process, one after another, after a garbage collection, then takes them
// back; the time reported is the placements'.
func (r *RemoteOracle) SimRound() (*SimRound, error) {
	res := &SimRound{}
	return res, r.call(&request{Kind: "sim-round"}, res)
}
