package sim

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	v1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/kubesched/kubesched/filter"
	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/fwk"
)

// ErrNoNodeFits is returned, wrapped with the reasons, by
// [Cluster.PlaceFirstFit] for a pod no node fits.
var ErrNoNodeFits = errors.New("no node fits the pod")

// Place schedules pod as kube-scheduler would (filter, score, select, on
// the cluster as it is now) and commits the decision: the pod, a copy
// bound to the chosen node, joins the cluster (a shallow copy: the
// cluster shares the pod's labels, spec and the rest, which the caller
// must not change afterwards, as with a pod given to [Cluster.AddPod] or
// to an informer's cache), and the ResourceClaims the
// placement allocated, the PersistentVolumes it bound and the claims it
// selected for provisioning ([framework.Result]'s Claims, Volumes and
// ProvisionedClaims) replace the cluster's, so the next placement sees
// them. It returns the framework's Result, or its error: a
// *framework.FitError when no node fits (nothing is committed, and no
// preemption is acted on).
func (c *Cluster) Place(ctx context.Context, pod *v1.Pod) (*framework.Result, error) {
	if err := c.placeable(pod); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	res, err := c.fw.ScheduleSnapshot(ctx, pod, c.snapshot())
	if err != nil {
		return nil, err
	}
	if err := c.commit(pod, res); err != nil {
		return nil, err
	}
	return res, nil
}

// PlaceFirstFit places pod as cluster-autoscaler's first-fit search does:
// filters only, on the nodes in the order given to New followed by those
// added, starting just past the node the previous search chose (or
// stopped at), and the first node that fits takes the pod, committed as
// by [Cluster.Place]. It returns the node's name, or an error wrapping
// ErrNoNodeFits with the last node's reasons when none fits, or a
// *framework.NotTriedError for a pod kube-scheduler would not try.
func (c *Cluster) PlaceFirstFit(ctx context.Context, pod *v1.Pod) (string, error) {
	res, err := c.placeFirstFit(ctx, pod)
	if err != nil {
		return "", err
	}
	return res.SuggestedHost, nil
}

func (c *Cluster) placeFirstFit(ctx context.Context, pod *v1.Pod) (*framework.Result, error) {
	if err := c.placeable(pod); err != nil {
		return nil, err
	}
	if err := c.fw.RunPreEnqueuePlugins(ctx, pod); err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	res, i, err := c.firstFit(ctx, pod, c.order, c.nextFit)
	if err != nil {
		return nil, err
	}
	c.nextFit = (i + 1) % len(c.order)
	return res, nil
}

// firstFit places pod on the first of the nodes called names, from
// start round-robin, that it fits, and returns the placement and that
// node's position in names. The caller holds c.mu.
func (c *Cluster) firstFit(ctx context.Context, pod *v1.Pod, names []string, start int) (*framework.Result, int, error) {
	snap := c.snapshot()
	state, status := c.fw.RunPreFilterPlugins(ctx, pod, snap)
	if status != nil {
		return nil, 0, noFit(pod, status)
	}
	n := len(names)
	var last *fwk.Status
	for k := range n {
		i := (start + k) % n
		name := names[i]
		if s := framework.ExcludedByPreFilter(state, name); s != nil {
			last = s
			continue
		}
		ni, ok := snap.Get(name)
		if !ok {
			continue
		}
		s := c.fw.RunFilterPluginsWithNominatedPods(ctx, state, pod, ni)
		if s.Code() == fwk.Error {
			return nil, 0, s.AsError()
		}
		if s != nil {
			last = s
			continue
		}
		res, s := c.fw.RunReservePlugins(ctx, state, pod, name)
		if s != nil {
			return nil, 0, s.AsError()
		}
		if err := c.commit(pod, res); err != nil {
			return nil, 0, err
		}
		return res, i, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	return nil, 0, noFit(pod, last)
}

func noFit(pod *v1.Pod, s *fwk.Status) error {
	if s == nil || s.Code() == fwk.Error {
		if err := s.AsError(); err != nil {
			return err
		}
		return fmt.Errorf("pod %s/%s: %w", pod.Namespace, pod.Name, ErrNoNodeFits)
	}
	return fmt.Errorf("pod %s/%s: %w: %v", pod.Namespace, pod.Name, ErrNoNodeFits, s)
}

// placeable refuses a pod Place cannot take. A pod whose spec.nodeName
// is set is placed as the framework judges it (NodeName's filter keeps
// it to that node), as simulators ask about such pods.
func (c *Cluster) placeable(pod *v1.Pod) error {
	if pod == nil {
		return errors.New("sim: nil pod")
	}
	return nil
}

// commit binds a copy of pod to the node res names, with the
// ResourceClaims res allocated, the volumes it bound and the claims it
// selected for provisioning, as kube-scheduler assumes them.
func (c *Cluster) commit(pod *v1.Pod, res *framework.Result) error {
	if _, dup := c.pods[key(pod.Namespace, pod.Name)]; dup {
		return fmt.Errorf("sim: pod %s is already in the cluster", key(pod.Namespace, pod.Name))
	}
	// A shallow copy: the fields set here are the copy's own.
	bound := new(*pod)
	bound.Spec.NodeName = res.SuggestedHost
	if ext := filter.ExtendedResourceClaimStatus(res); ext != nil {
		bound.Status.ExtendedResourceClaimStatus = ext
	}
	for _, claim := range filter.Claims(res) {
		if err := c.setClaim(claim); err != nil {
			return err
		}
	}
	for _, pv := range filter.Volumes(res) {
		c.setVolume(pv)
	}
	for _, claim := range filter.ProvisionedClaims(res) {
		c.setVolumeClaim(claim)
	}
	return c.addPod(bound)
}

// PlaceOption changes how [Cluster.PlaceAll] places its pods; one that
// cannot apply makes PlaceAll return its error before placing any pod.
type PlaceOption func(*placeConfig) error

type placeConfig struct {
	queueOrder   bool
	firstFit     bool
	preempt      bool
	onPreemption func(i int, p *fwk.Preemption)
	afterEach    func(i int, res *framework.Result, err error)
}

// InQueueOrder places the pods in kube-scheduler's queue order: higher
// priority first, then older (creation timestamp), the given order
// breaking ties, rather than in the given order.
func InQueueOrder() PlaceOption {
	return func(c *placeConfig) error { c.queueOrder = true; return nil }
}

// FirstFit places each pod as [Cluster.PlaceFirstFit] does, rather than
// as [Cluster.Place].
func FirstFit() PlaceOption {
	return func(c *placeConfig) error { c.firstFit = true; return nil }
}

// AfterEach has fn called after each pod is placed or found to fit
// nowhere, in the order the pods are placed, with the pod's position in
// the list, its Result, and for a pod that fits nowhere the
// *framework.FitError (or ErrNoNodeFits, first fit) that says why, or the
// *framework.NotTriedError of a pod kube-scheduler would not try. The
// cluster is then as that placement left it, so fn may read it, or
// explain the pod on it ([Cluster.Explain]), before the next; fn must not
// change it. Count the calls to report progress on long runs. A nil fn
// is an error.
func AfterEach(fn func(i int, res *framework.Result, err error)) PlaceOption {
	return func(c *placeConfig) error {
		if fn == nil {
			return errors.New("sim: AfterEach: nil function")
		}
		c.afterEach = fn
		return nil
	}
}

// PlaceAll places pods one after the other, each placement committed
// before the next, and returns one Result per pod, in the order given,
// nil for a pod no node fits and for one kube-scheduler would not try (a
// *framework.NotTriedError: scheduling gates, a missing ResourceClaim,
// being deleted), which the other pods do not wait for. It stops at the
// first other error (a cancelled context, a plugin error), naming the
// pod, and returns the results so far.
func (c *Cluster) PlaceAll(ctx context.Context, pods []*v1.Pod, opts ...PlaceOption) ([]*framework.Result, error) {
	var cfg placeConfig
	for _, o := range opts {
		if o == nil {
			return nil, errors.New("sim: PlaceAll: nil PlaceOption")
		}
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	order := make([]int, len(pods))
	for i := range order {
		order[i] = i
	}
	if cfg.queueOrder {
		slices.SortStableFunc(order, func(a, b int) int {
			pa, pb := pods[a], pods[b]
			if pa == nil || pb == nil {
				return 0
			}
			return cmp.Or(
				cmp.Compare(corev1helpers.PodPriority(pb), corev1helpers.PodPriority(pa)),
				pa.CreationTimestamp.Compare(pb.CreationTimestamp.Time))
		})
	}
	results := make([]*framework.Result, len(pods))
	for _, i := range order {
		var res *framework.Result
		var err error
		switch {
		case cfg.firstFit:
			res, err = c.placeFirstFit(ctx, pods[i])
		case cfg.preempt:
			var p *fwk.Preemption
			res, p, err = c.PlacePreempting(ctx, pods[i])
			if p != nil && cfg.onPreemption != nil {
				cfg.onPreemption(i, p)
			}
		default:
			res, err = c.Place(ctx, pods[i])
		}
		var (
			fitErr   *framework.FitError
			notTried *framework.NotTriedError
		)
		switch {
		case err == nil:
			results[i] = res
		case errors.As(err, &fitErr), errors.Is(err, ErrNoNodeFits), errors.As(err, &notTried):
		case pods[i] == nil:
			return results, fmt.Errorf("pod %d: %w", i, err)
		default:
			return results, fmt.Errorf("pod %s/%s: %w", pods[i].Namespace, pods[i].Name, err)
		}
		if cfg.afterEach != nil {
			cfg.afterEach(i, res, err)
		}
	}
	return results, nil
}
