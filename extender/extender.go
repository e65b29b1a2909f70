package extender

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	configv1 "k8s.io/kube-scheduler/config/v1"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"

	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/nodeinfo"
)

// DefaultHTTPTimeout is kube-scheduler's limit on one extender call when
// httpTimeout is not set.
const DefaultHTTPTimeout = 5 * time.Second

// maxErrorBody bounds how much of a non-200 answer a StatusError keeps.
const maxErrorBody = 512

// StatusError is an extender's answer with a status other than 200 OK.
// Its message is kube-scheduler's, word for word, since it reaches the
// pod's events and conditions; the start of the answer's body, which
// often says why, is kept beside it.
type StatusError struct {
	// Verb is the verb called, URL the address called.
	Verb, URL string
	// Code is the answer's HTTP status code.
	Code int
	// Body is the start of the answer's body, at most 512 bytes, with
	// surrounding space trimmed.
	Body string
}

// Error returns "failed <verb> with extender at URL <url>, code <code>".
func (e *StatusError) Error() string {
	return fmt.Sprintf("failed %s with extender at URL %s, code %d", e.Verb, e.URL, e.Code)
}

var (
	_ fwk.Extender           = (*Client)(nil)
	_ fwk.PreemptionExtender = (*Client)(nil)
)

// Client calls one HTTP scheduler extender. Build it with [New]; it is
// safe for concurrent use. With a preemptVerb it is a
// [fwk.PreemptionExtender], which DefaultPreemption asks to narrow
// its candidate nodes.
type Client struct {
	urlPrefix        string
	filterVerb       string
	prioritizeVerb   string
	bindVerb         string
	preemptVerb      string
	weight           int64
	nodeCacheCapable bool
	ignorable        bool
	managed          sets.Set[string]
	timeout          time.Duration
	http             *http.Client
}

// Option configures a Client; New returns its error, as every option
// of kubesched does.
type Option func(*Client) error

// WithTransport makes the client send its requests through rt instead of
// the transport built from the configuration's TLS settings, for example
// to trace them. httpTimeout still applies. A nil rt is an error.
func WithTransport(rt http.RoundTripper) Option {
	return func(c *Client) error {
		if rt == nil {
			return errors.New("extender: WithTransport: nil transport")
		}
		c.http.Transport = rt
		return nil
	}
}

// New returns a client for the extender cfg describes. It validates cfg
// as [Validate] does for a one-entry list (the paths start at "extender")
// and reads the TLS files, and returns an error saying what is wrong. An
// unset httpTimeout means [DefaultHTTPTimeout].
func New(cfg configv1.Extender, opts ...Option) (*Client, error) {
	if err := validateOne(&cfg); err != nil {
		return nil, err
	}
	tc, err := tlsConfig(&cfg)
	if err != nil {
		return nil, fmt.Errorf("extender %s: %w", cfg.URLPrefix, err)
	}
	transport := http.DefaultTransport.(*http.Transport).Clone()
	transport.TLSClientConfig = tc
	timeout := cfg.HTTPTimeout.Duration
	if timeout == 0 {
		timeout = DefaultHTTPTimeout
	}
	c := &Client{
		urlPrefix:        cfg.URLPrefix,
		filterVerb:       cfg.FilterVerb,
		prioritizeVerb:   cfg.PrioritizeVerb,
		bindVerb:         cfg.BindVerb,
		preemptVerb:      cfg.PreemptVerb,
		weight:           cfg.Weight,
		nodeCacheCapable: cfg.NodeCacheCapable,
		ignorable:        cfg.Ignorable,
		managed:          sets.New[string](),
		timeout:          timeout,
		http:             &http.Client{Transport: transport, Timeout: timeout},
	}
	for _, r := range cfg.ManagedResources {
		c.managed.Insert(r.Name)
	}
	for _, o := range opts {
		if err := o(c); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// Name returns the URL prefix, which is how kube-scheduler names an
// extender, in NodePluginScores too.
func (c *Client) Name() string { return c.urlPrefix }

// IsIgnorable reports whether the configuration says ignorable.
func (c *Client) IsIgnorable() bool { return c.ignorable }

// IsFilter reports whether a filterVerb is configured.
func (c *Client) IsFilter() bool { return c.filterVerb != "" }

// IsPrioritizer reports whether a prioritizeVerb is configured.
func (c *Client) IsPrioritizer() bool { return c.prioritizeVerb != "" }

// IsBinder reports whether a bindVerb is configured.
func (c *Client) IsBinder() bool { return c.bindVerb != "" }

// SupportsPreemption reports whether a preemptVerb is configured.
func (c *Client) SupportsPreemption() bool { return c.preemptVerb != "" }

// IsInterested reports whether the extender wants pod: always when it
// manages no resources, otherwise when a container or init container
// requests or limits one of them. Pod-level resources and ephemeral
// containers do not count, as in kube-scheduler.
func (c *Client) IsInterested(pod *v1.Pod) bool {
	if c.managed.Len() == 0 {
		return true
	}
	if pod == nil {
		return false
	}
	return c.managesAny(pod.Spec.Containers) || c.managesAny(pod.Spec.InitContainers)
}

func (c *Client) managesAny(containers []v1.Container) bool {
	for i := range containers {
		r := &containers[i].Resources
		for name := range r.Requests {
			if c.managed.Has(string(name)) {
				return true
			}
		}
		for name := range r.Limits {
			if c.managed.Has(string(name)) {
				return true
			}
		}
	}
	return false
}

// Filter asks the extender which of nodes pod may use. It sends node names
// if the extender is nodeCacheCapable, whole Node objects otherwise.
//
// As in kube-scheduler: a nodeCacheCapable extender's NodeNames answer
// must name only nodes it was given, and the result holds those nodes'
// own NodeInfos; otherwise the answer's Node objects are used, each in a
// new NodeInfo with no pods and no images, which is what the score plugins
// then see (kubernetes/kubernetes#141781). An answer with neither keeps no
// node. The answer's Error field, a failed call or a bad answer is an
// error. Without a filterVerb, nodes are returned unchanged.
func (c *Client) Filter(ctx context.Context, pod *v1.Pod, nodes []*nodeinfo.NodeInfo) (fwk.ExtenderFilterResult, error) {
	if !c.IsFilter() {
		return fwk.ExtenderFilterResult{Nodes: nodes}, nil
	}
	var res extenderv1.ExtenderFilterResult
	if err := c.send(ctx, c.filterVerb, c.args(pod, nodes), &res); err != nil {
		return fwk.ExtenderFilterResult{}, err
	}
	if res.Error != "" {
		return fwk.ExtenderFilterResult{}, errors.New(res.Error)
	}
	out := fwk.ExtenderFilterResult{Failed: res.FailedNodes, FailedAndUnresolvable: res.FailedAndUnresolvableNodes}
	switch {
	case c.nodeCacheCapable && res.NodeNames != nil:
		given := make(map[string]*nodeinfo.NodeInfo, len(nodes))
		for _, ni := range nodes {
			given[ni.Name()] = ni
		}
		out.Nodes = make([]*nodeinfo.NodeInfo, len(*res.NodeNames))
		for i, name := range *res.NodeNames {
			ni, ok := given[name]
			if !ok {
				return fwk.ExtenderFilterResult{}, fmt.Errorf("extender %q claims a filtered node %q which is not found in the input node list", c.urlPrefix, name)
			}
			out.Nodes[i] = ni
		}
	case res.Nodes != nil:
		out.Nodes = make([]*nodeinfo.NodeInfo, len(res.Nodes.Items))
		for i := range res.Nodes.Items {
			ni := nodeinfo.New(&res.Nodes.Items[i])
			ni.SetImageStates(map[string]*nodeinfo.ImageStateSummary{})
			out.Nodes[i] = ni
		}
	}
	return out, nil
}

// Prioritize asks the extender for its scores of nodes and returns them
// with the configured weight. Without a prioritizeVerb every node scores 0
// with weight 0, as in kube-scheduler.
func (c *Client) Prioritize(ctx context.Context, pod *v1.Pod, nodes []*nodeinfo.NodeInfo) (extenderv1.HostPriorityList, int64, error) {
	if !c.IsPrioritizer() {
		zero := make(extenderv1.HostPriorityList, len(nodes))
		for i, ni := range nodes {
			zero[i].Host = ni.Name()
		}
		return zero, 0, nil
	}
	var res extenderv1.HostPriorityList
	if err := c.send(ctx, c.prioritizeVerb, c.args(pod, nodes), &res); err != nil {
		return nil, 0, err
	}
	return res, c.weight, nil
}

// Bind asks the extender to bind the pod binding names to
// binding.Target.Name. The answer's Error field is returned as an error.
func (c *Client) Bind(ctx context.Context, binding *v1.Binding) error {
	if !c.IsBinder() {
		return fmt.Errorf("extender %s has no bindVerb", c.urlPrefix)
	}
	if binding == nil {
		return fmt.Errorf("extender %s: nil binding", c.urlPrefix)
	}
	args := &extenderv1.ExtenderBindingArgs{
		PodName:      binding.Name,
		PodNamespace: binding.Namespace,
		PodUID:       binding.UID,
		Node:         binding.Target.Name,
	}
	var res extenderv1.ExtenderBindingResult
	if err := c.send(ctx, c.bindVerb, args, &res); err != nil {
		return err
	}
	if res.Error != "" {
		return errors.New(res.Error)
	}
	return nil
}

// ProcessPreemption asks the extender which of DefaultPreemption's
// candidate nodes it accepts, and which pods to evict on each. victims
// maps every candidate node to the pods preemption would evict there. A
// nodeCacheCapable extender is sent the victims' UIDs
// (NodeNameToMetaVictims), any other the whole pods (NodeNameToVictims).
//
// As in kube-scheduler, the extender answers with UIDs, which are turned
// back into pods through nodeInfo, the cycle's nodes: a node nodeInfo does
// not know, or a UID that is none of that node's pods, is an error. So the
// pods need the UIDs pods from an API server have. The answer's
// NumPDBViolations are kept. A node the answer gives no victims is
// returned with none: rejecting it is the caller's business. Nodes are
// converted in name order, so that of several bad ones the error always
// names the same.
//
// It returns an error without a preemptVerb, for a nil entry or a nil pod
// in victims, and for a failed call or a bad answer. It does not modify
// victims; the map it returns is new.
func (c *Client) ProcessPreemption(ctx context.Context, pod *v1.Pod, victims map[string]*extenderv1.Victims, nodeInfo func(name string) (*nodeinfo.NodeInfo, bool)) (map[string]*extenderv1.Victims, error) {
	if !c.SupportsPreemption() {
		return nil, fmt.Errorf("preempt verb is not defined for extender %v but run into ProcessPreemption", c.urlPrefix)
	}
	for name, v := range victims {
		if v == nil || slices.Contains(v.Pods, nil) {
			return nil, fmt.Errorf("extender %s: the victims of node %q are nil or hold a nil pod", c.urlPrefix, name)
		}
	}
	args := &extenderv1.ExtenderPreemptionArgs{Pod: pod}
	if c.nodeCacheCapable {
		args.NodeNameToMetaVictims = make(map[string]*extenderv1.MetaVictims, len(victims))
		for name, v := range victims {
			meta := &extenderv1.MetaVictims{Pods: make([]*extenderv1.MetaPod, len(v.Pods)), NumPDBViolations: v.NumPDBViolations}
			for i, p := range v.Pods {
				meta.Pods[i] = &extenderv1.MetaPod{UID: string(p.UID)}
			}
			args.NodeNameToMetaVictims[name] = meta
		}
	} else {
		args.NodeNameToVictims = victims
	}
	var res extenderv1.ExtenderPreemptionResult
	if err := c.send(ctx, c.preemptVerb, args, &res); err != nil {
		return nil, err
	}
	out := make(map[string]*extenderv1.Victims, len(res.NodeNameToMetaVictims))
	for _, name := range slices.Sorted(maps.Keys(res.NodeNameToMetaVictims)) {
		var ni *nodeinfo.NodeInfo
		if nodeInfo != nil {
			ni, _ = nodeInfo(name)
		}
		if ni == nil || ni.Node() == nil {
			return nil, fmt.Errorf("nodeinfo not found for node name %q", name)
		}
		// kube-scheduler reads a null entry as a nil pointer; here it is
		// a node without victims.
		meta := res.NodeNameToMetaVictims[name]
		if meta == nil {
			meta = &extenderv1.MetaVictims{}
		}
		v := &extenderv1.Victims{Pods: make([]*v1.Pod, 0, len(meta.Pods)), NumPDBViolations: meta.NumPDBViolations}
		for _, mp := range meta.Pods {
			p := podWithUID(ni, mp)
			if p == nil {
				// kube-scheduler prints the MetaPod, not its UID: "(UID: &{...})".
				return nil, fmt.Errorf("extender: %v claims to preempt pod (UID: %v) on node: %v, but the pod is not found on that node", c.urlPrefix, mp, name)
			}
			v.Pods = append(v.Pods, p)
		}
		out[name] = v
	}
	return out, nil
}

// podWithUID returns the pod of ni that mp names, or nil.
func podWithUID(ni *nodeinfo.NodeInfo, mp *extenderv1.MetaPod) *v1.Pod {
	if mp == nil {
		return nil
	}
	for _, pi := range ni.Pods() {
		if string(pi.Pod.UID) == mp.UID {
			return pi.Pod
		}
	}
	return nil
}

// args builds a filter or prioritize request: node names for a
// nodeCacheCapable extender, whole nodes otherwise.
func (c *Client) args(pod *v1.Pod, nodes []*nodeinfo.NodeInfo) *extenderv1.ExtenderArgs {
	args := &extenderv1.ExtenderArgs{Pod: pod}
	if c.nodeCacheCapable {
		names := make([]string, len(nodes))
		for i, ni := range nodes {
			names[i] = ni.Name()
		}
		args.NodeNames = &names
		return args
	}
	list := &v1.NodeList{Items: make([]v1.Node, len(nodes))}
	for i, ni := range nodes {
		list.Items[i] = *ni.Node()
	}
	args.Nodes = list
	return args
}

// send POSTs args as JSON to urlPrefix/verb and decodes the answer into
// result. Errors name the verb and the URL, and say when httpTimeout ran
// out.
func (c *Client) send(ctx context.Context, verb string, args, result any) error {
	body, err := json.Marshal(args)
	if err != nil {
		return fmt.Errorf("encoding the %s request for extender %s: %w", verb, c.urlPrefix, err)
	}
	target := strings.TrimRight(c.urlPrefix, "/") + "/" + verb
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("failed %s with extender at URL %s: %w", verb, target, err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return c.callError(ctx, verb, target, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		quote, _ := io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
		return &StatusError{Verb: verb, URL: target, Code: resp.StatusCode, Body: strings.TrimSpace(string(quote))}
	}
	if err := json.NewDecoder(resp.Body).Decode(result); err != nil {
		if isTimeout(err) {
			return c.callError(ctx, verb, target, err)
		}
		return fmt.Errorf("decoding the %s answer of extender at URL %s: %w", verb, target, err)
	}
	return nil
}

// callError describes a call that got no (whole) answer.
func (c *Client) callError(ctx context.Context, verb, target string, err error) error {
	// The URL is in our own message already.
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if ctx.Err() == nil && isTimeout(err) {
		return fmt.Errorf("failed %s with extender at URL %s: no answer within httpTimeout %v: %w", verb, target, c.timeout, err)
	}
	return fmt.Errorf("failed %s with extender at URL %s: %w", verb, target, err)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout())
}
