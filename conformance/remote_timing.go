package conformance

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"time"

	v1 "k8s.io/api/core/v1"
)

// The side-by-side timings compare kubesched with a kube-scheduler
// release the test process cannot link by timing that release's Upstream
// in the oracle's process, in rounds that alternate with kubesched's in
// the caller's: a "time-setup" request installs a workload, each "time"
// request is one round, "time-clear" lets the workload go.

// TimingSetup is upstream's verdict on a workload's pod, which
// kubesched's must agree with before either is timed.
type TimingSetup struct {
	// Feasible and Evaluated are upstream's counts, for a pod that fits.
	Feasible, Evaluated int
	// Reference, for a pod that fits no node, is what kubesched's
	// preemption decision must agree with.
	Reference *PreemptionReference `json:",omitempty"`
}

// TimingRound is one round of timed calls.
type TimingRound struct {
	Calls int
	Spent time.Duration
}

// timer is the server's upstream side of the timings.
type timer struct {
	// upstreams are by percentageOfNodesToScore, -1 for the default.
	upstreams map[int32]*Upstream
	current   *Upstream
	call      func() error
	// sim and pending are the installed simulation and the pods each of
	// its rounds places.
	sim     *UpstreamSim
	pending []*v1.Pod
}

func (t *timer) setup(ctx context.Context, percentage *int32, preempt bool, s *Scenario) (*TimingSetup, error) {
	u, err := t.install(ctx, percentage, s)
	if err != nil {
		return nil, err
	}
	if !preempt {
		res, err := u.Schedule(ctx, s.Pod)
		if err != nil {
			return nil, err
		}
		t.call = func() error { _, err := u.Schedule(ctx, s.Pod); return err }
		return &TimingSetup{Feasible: res.FeasibleNodes, Evaluated: res.EvaluatedNodes}, nil
	}
	p, err := NewUpstreamPreemption(u)
	if err != nil {
		return nil, err
	}
	ref, err := p.Reference(ctx, s.Pod)
	if err != nil {
		return nil, err
	}
	t.call = func() error { _, err := p.Schedule(ctx, s.Pod); return err }
	return &TimingSetup{Evaluated: len(s.Nodes), Reference: ref}, nil
}

// install lets the installed workload go and installs s's nodes, pods
// and objects in the Upstream for percentage, building it the first time.
func (t *timer) install(ctx context.Context, percentage *int32, s *Scenario) (*Upstream, error) {
	key := int32(-1)
	if percentage != nil {
		key = *percentage
	}
	if t.upstreams == nil {
		t.upstreams = map[int32]*Upstream{}
	}
	u := t.upstreams[key]
	if u == nil {
		var err error
		if u, err = NewUpstream(percentage); err != nil {
			return nil, err
		}
		t.upstreams[key] = u
	}
	if err := t.clear(ctx); err != nil {
		return nil, err
	}
	t.current = u
	if err := u.SetObjects(ctx, s.Objects); err != nil {
		return nil, err
	}
	if err := u.SetCluster(s.Nodes, s.Pods); err != nil {
		return nil, err
	}
	return u, nil
}

// round calls the installed workload's pod for about d, at least once,
// after a garbage collection, as the caller's rounds do.
func (t *timer) round(d time.Duration) (*TimingRound, error) {
	if t.call == nil {
		return nil, errors.New("no workload is installed")
	}
	runtime.GC()
	start := time.Now()
	calls := 0
	for {
		if err := t.call(); err != nil {
			return nil, fmt.Errorf("after %d calls: %w", calls, err)
		}
		calls++
		if time.Since(start) >= d {
			return &TimingRound{Calls: calls, Spent: time.Since(start)}, nil
		}
	}
}

func (t *timer) clear(ctx context.Context) error {
	t.call, t.sim, t.pending = nil, nil, nil
	if t.current == nil {
		return nil
	}
	u := t.current
	t.current = nil
	if err := u.SetCluster(nil, nil); err != nil {
		return err
	}
	return u.SetObjects(ctx, nil)
}

func (t *timer) close() {
	for _, u := range t.upstreams {
		u.Close()
	}
}

// SetUpTiming installs a workload (s's nodes, pods and objects) in the
// oracle's Upstream for percentage (nil: kube-scheduler's default), and
// returns upstream's verdict on s.Pod: its counts, or, with preempt, its
// preemption reference.
func (r *RemoteOracle) SetUpTiming(ctx context.Context, percentage *int32, preempt bool, s *Scenario) (*TimingSetup, error) {
	w, err := toWire(s)
	if err != nil {
		return nil, err
	}
	res := &TimingSetup{}
	return res, r.call(&request{Kind: "time-setup", Scenario: w, Percentage: percentage, Preempt: preempt}, res)
}

// TimeRound schedules the installed workload's pod in the oracle's
// process for about d.
func (r *RemoteOracle) TimeRound(d time.Duration) (*TimingRound, error) {
	res := &TimingRound{}
	return res, r.call(&request{Kind: "time", Duration: d}, res)
}

// ClearTiming lets the installed workload go.
func (r *RemoteOracle) ClearTiming() error {
	var ok bool
	return r.call(&request{Kind: "time-clear"}, &ok)
}
