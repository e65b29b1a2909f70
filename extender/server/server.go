package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/go-logr/logr"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"

	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/nodeinfo"
)

// Limits applied unless changed with [WithMaxRequestBytes],
// [WithMaxConcurrentCalls], [WithMaxInFlightBytes] and [WithTimeouts].
// kube-scheduler calls its extenders one at a time for the pod it is
// scheduling, and binds in the background, so a few calls at once is its
// normal load; it gives an extender 5 seconds by default.
const (
	DefaultMaxRequestBytes    int64 = 64 << 20
	DefaultMaxConcurrentCalls       = 8
	DefaultReadTimeout              = 10 * time.Second
	DefaultWriteTimeout             = 10 * time.Second
)

// writeGrace is how long after the functions' context ends an answer may
// still be written, so that a function that stops when its context ends
// gets its answer (its error) to the scheduler rather than a closed
// connection.
const writeGrace = time.Second

// FilterFunc answers a filter call: the nodes among nodes where pod may
// run, and the Diagnosis of the others, whose Unschedulable and
// UnschedulableAndUnresolvable statuses become the answer's FailedNodes and
// FailedAndUnresolvableNodes (with the status message). Nodes in neither
// are left out without a reason. An error becomes the answer's Error: the
// scheduler then fails the pod, or skips the extender if it is ignorable.
//
// [framework.Framework.Filter] is a FilterFunc: a framework's method value
// serves its plugins. [EachNode] makes one from a check of one node.
type FilterFunc func(ctx context.Context, pod *v1.Pod, nodes []*nodeinfo.NodeInfo) ([]*nodeinfo.NodeInfo, framework.Diagnosis, error)

// PrioritizeFunc answers a prioritize call with scores of nodes, which
// must lie in [extenderv1.MinExtenderPriority, extenderv1.MaxExtenderPriority]
// (0 to 10): the scheduler multiplies them by the extender's weight and by
// 10 (MaxNodeScore / MaxExtenderPriority) and adds them to its totals
// without checking them, so a score out of range would outweigh every
// plugin or overflow the totals. The handler answers such a score clamped
// into the range and logs it, once per call. An error is answered with
// status 500; the scheduler then ignores this extender's scores.
type PrioritizeFunc func(ctx context.Context, pod *v1.Pod, nodes []*nodeinfo.NodeInfo) (extenderv1.HostPriorityList, error)

// BindFunc binds a pod to binding.Target.Name, typically by creating the
// Binding with client-go: clientset.CoreV1().Pods(ns).Bind(ctx, binding,
// metav1.CreateOptions{}). An error becomes the answer's Error.
type BindFunc func(ctx context.Context, binding *v1.Binding) error

// PreemptFunc answers a preempt call. victims maps each node where the
// scheduler would preempt to the pods it would evict there; the function
// returns the nodes it accepts, each with the pods to evict, which the
// answer names by UID. The scheduler drops the nodes left out, and fails
// the preemption when a node comes back without victims (an ignorable
// extender's such node is dropped instead). An error is answered with
// status 500: the scheduler then fails the preemption, or skips this
// extender if it is ignorable. The map and its Victims are the call's
// own; the pods are too, except those of a nodeCacheCapable call, which
// are the node source's and must not be modified.
type PreemptFunc func(ctx context.Context, pod *v1.Pod, victims map[string]*extenderv1.Victims) (map[string]*extenderv1.Victims, error)

// NodeSource returns what the extender knows of a node: its Node object and
// pods. Schedulers configured with nodeCacheCapable send node names only,
// and the pods to preempt by UID, and the handler needs a source to answer
// them. For calls that carry whole nodes, a source, if set, contributes the
// node's pods (the call's Node object wins); a node it does not know then
// counts as empty. It must be safe for concurrent use.
type NodeSource func(ctx context.Context, name string) (*nodeinfo.NodeInfo, error)

// Handler serves the extender verbs it was built with. Build it with
// [New]; it is safe for concurrent use.
type Handler struct {
	routes       map[string]route
	nodes        NodeSource
	maxBytes     int64
	readTimeout  time.Duration
	writeTimeout time.Duration
	log          *logr.Logger // nil: slog's default
	admission    admission
}

type route struct {
	filter     FilterFunc
	prioritize PrioritizeFunc
	bind       BindFunc
	preempt    PreemptFunc
}

// Option configures a Handler.
type Option func(*Handler) error

// Filter serves fn at "/" + verb, the extender's filterVerb.
func Filter(verb string, fn FilterFunc) Option {
	return addRoute(verb, fn == nil, route{filter: fn})
}

// Prioritize serves fn at "/" + verb, the extender's prioritizeVerb.
func Prioritize(verb string, fn PrioritizeFunc) Option {
	return addRoute(verb, fn == nil, route{prioritize: fn})
}

// Bind serves fn at "/" + verb, the extender's bindVerb.
func Bind(verb string, fn BindFunc) Option {
	return addRoute(verb, fn == nil, route{bind: fn})
}

// Preempt serves fn at "/" + verb, the extender's preemptVerb.
func Preempt(verb string, fn PreemptFunc) Option {
	return addRoute(verb, fn == nil, route{preempt: fn})
}

func addRoute(verb string, nilFunc bool, r route) Option {
	return func(h *Handler) error {
		switch {
		case verb == "" || strings.HasPrefix(verb, "/"):
			return fmt.Errorf("verb %q: must be non-empty and not start with '/'", verb)
		case nilFunc:
			return fmt.Errorf("verb %q: nil function", verb)
		}
		path := "/" + verb
		if _, dup := h.routes[path]; dup {
			return fmt.Errorf("verb %q served twice", verb)
		}
		h.routes[path] = r
		return nil
	}
}

// WithNodes sets the handler's node source, needed to answer schedulers
// that send node names and pod UIDs (nodeCacheCapable).
func WithNodes(src NodeSource) Option {
	return func(h *Handler) error {
		if src == nil {
			return errors.New("WithNodes: nil source")
		}
		h.nodes = src
		return nil
	}
}

// WithMaxRequestBytes limits request bodies to n bytes (default
// [DefaultMaxRequestBytes]); a larger one is refused with 413, before it
// is read when its Content-Length says so. A scheduler that is not
// nodeCacheCapable sends every candidate Node object, a few kilobytes
// each: 64 MiB is some 10,000 nodes as kubelets report them.
//
// A call holds about 3 times its body in memory while it is answered
// with nodes as kubelets report them, and at most about 9 times with the
// smallest nodes the handler accepts (bodies denser in nodes or JSON
// objects than a scheduler's are refused with 400).
func WithMaxRequestBytes(n int64) Option {
	return func(h *Handler) error {
		if n <= 0 {
			return fmt.Errorf("WithMaxRequestBytes: %d; need at least 1", n)
		}
		h.maxBytes = n
		return nil
	}
}

// WithMaxConcurrentCalls limits the calls served at once to n (default
// [DefaultMaxConcurrentCalls]); one more is refused at once with 503 and
// Retry-After. GET /healthz is not counted.
func WithMaxConcurrentCalls(n int) Option {
	return func(h *Handler) error {
		if n <= 0 {
			return fmt.Errorf("WithMaxConcurrentCalls: %d; need at least 1", n)
		}
		h.admission.maxCalls = n
		return nil
	}
}

// WithMaxInFlightBytes limits the request bodies of the calls served at
// once to n bytes together (default twice the request limit, 128 MiB with
// [DefaultMaxRequestBytes]): with the memory a call holds per byte of
// body (see [WithMaxRequestBytes]), it bounds the handler's memory. A
// call counts with its Content-Length, or the request limit if it has
// none (a chunked body); one that does not fit in what the others leave
// is refused at once with 503 and Retry-After, before its body is read.
// n must be at least the request limit, or the largest calls could never
// be served.
func WithMaxInFlightBytes(n int64) Option {
	return func(h *Handler) error {
		if n <= 0 {
			return fmt.Errorf("WithMaxInFlightBytes: %d; need at least 1", n)
		}
		h.admission.maxInFlight = n
		return nil
	}
}

// WithTimeouts sets how long reading a request body and producing the
// answer may take (defaults [DefaultReadTimeout], [DefaultWriteTimeout]).
// The functions' context ends when the write timeout does; the answer may
// still be written for a second after that. A body not read in time is
// refused with 408; a call answered after its write timeout is logged.
func WithTimeouts(read, write time.Duration) Option {
	return func(h *Handler) error {
		if read <= 0 || write <= 0 {
			return fmt.Errorf("WithTimeouts: read %v, write %v; both must be positive", read, write)
		}
		h.readTimeout, h.writeTimeout = read, write
		return nil
	}
}

// WithLogger sets where the handler logs (default: slog's default logger,
// [slog.Default], at the time of logging). It logs every call it refuses
// (statuses 4xx and 503) once, with the reason it answers; a call answered
// after its write timeout; an answer it could not write; a prioritize or
// preempt function's failure (answered 500); and a prioritize call whose
// scores it clamped. Other answers, a filter or bind function's error
// among them (the answer's Error field), are not logged. A slog.Handler
// becomes a logr.Logger with [logr.FromSlogHandler]; [logr.Discard] logs
// nothing.
func WithLogger(l logr.Logger) Option {
	return func(h *Handler) error {
		h.log = &l
		return nil
	}
}

// New returns a handler serving the given verbs. It returns an error for a
// bad option, when no verb is served, or when the in-flight limit is below
// the request limit.
func New(opts ...Option) (*Handler, error) {
	h := &Handler{
		routes:       map[string]route{},
		maxBytes:     DefaultMaxRequestBytes,
		readTimeout:  DefaultReadTimeout,
		writeTimeout: DefaultWriteTimeout,
		admission:    admission{maxCalls: DefaultMaxConcurrentCalls},
	}
	for _, o := range opts {
		if err := o(h); err != nil {
			return nil, fmt.Errorf("extender server: %w", err)
		}
	}
	if len(h.routes) == 0 {
		return nil, errors.New("extender server: no verb to serve; add Filter, Prioritize, Bind or Preempt")
	}
	if h.admission.maxInFlight == 0 {
		h.admission.maxInFlight = 2 * h.maxBytes
	}
	if h.admission.maxInFlight < h.maxBytes {
		return nil, fmt.Errorf("extender server: WithMaxInFlightBytes(%d) is below the request limit %d: the largest calls could never be served", h.admission.maxInFlight, h.maxBytes)
	}
	return h, nil
}

// HTTPServer returns an http.Server for h listening on addr, with the
// handler's timeouts also applied to reading headers and to the whole
// connection, and the server's own errors logged where the handler logs:
// use it rather than http.ListenAndServe, which sets no timeouts.
func (h *Handler) HTTPServer(addr string) *http.Server {
	var errorLog *log.Logger // nil: the log package's, where slog's default writes too
	if h.log != nil {
		errorLog = slog.NewLogLogger(logr.ToSlogHandler(*h.log), slog.LevelError)
	}
	return &http.Server{
		Addr:              addr,
		Handler:           h,
		ReadHeaderTimeout: h.readTimeout,
		ReadTimeout:       h.readTimeout,
		WriteTimeout:      h.writeTimeout + writeGrace,
		IdleTimeout:       2 * h.readTimeout,
		MaxHeaderBytes:    1 << 20,
		ErrorLog:          errorLog,
	}
}

// logger is where the handler logs.
func (h *Handler) logger() logr.Logger {
	if h.log == nil {
		return logr.FromSlogHandler(slog.Default().Handler())
	}
	return *h.log
}

// ServeHTTP answers one extender call. GET /healthz, unless a verb is
// served there, answers 200 "ok" for a liveness or readiness probe: the
// handler keeps nothing between calls, so serving is all there is to
// being healthy.
//
// Calls are refused, each with a JSON {"Error": "..."} giving the reason
// and logged once: an unknown path with 404, another method than POST
// with 405, a Content-Type other than application/json with 415, a body
// over the request limit with 413, a call beyond the concurrency or
// in-flight limits with 503 (and Retry-After: 1), a body not read within
// the read timeout with 408, a malformed one, or one naming a node twice,
// with 400. All but the last two (and a chunked body's 413) are refused
// before the body is read, so that a client waiting on "Expect:
// 100-continue" is not asked to send it. A function's error is answered
// as its [FilterFunc], [PrioritizeFunc], [BindFunc] or [PreemptFunc]
// says. ServeHTTP may run concurrently; it never modifies what the
// functions return.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rt, ok := h.routes[r.URL.Path]
	if !ok && r.URL.Path == "/healthz" && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, "ok\n")
		return
	}
	c := &call{h: h, w: w, r: r, start: time.Now()}
	// The cheap checks first, and all of them before the body is read.
	if !ok {
		c.refuse(refuse(http.StatusNotFound, "no extender verb at %s", r.URL.Path))
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		c.refuse(refuse(http.StatusMethodNotAllowed, "method %s not allowed; extender calls are POST", r.Method))
		return
	}
	if ref := checkContentType(r.Header.Get("Content-Type")); ref != nil {
		c.refuse(ref)
		return
	}
	if r.ContentLength > h.maxBytes {
		c.refuse(refuse(http.StatusRequestEntityTooLarge, "request body of %d bytes is larger than the limit of %d", r.ContentLength, h.maxBytes))
		return
	}
	reserve := r.ContentLength
	if reserve < 0 {
		reserve = h.maxBytes
	}
	if ref := h.admission.take(reserve); ref != nil {
		w.Header().Set("Retry-After", "1")
		c.refuse(ref)
		return
	}
	defer h.admission.give(reserve)

	// Servers built elsewhere may set no timeouts: apply ours to this
	// request. Recorders and some transports cannot; then the server's own
	// settings are all there is.
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(c.start.Add(h.readTimeout))
	_ = rc.SetWriteDeadline(c.start.Add(h.writeTimeout + writeGrace))
	ctx, cancel := context.WithTimeout(r.Context(), h.writeTimeout)
	defer cancel()
	c.ctx = ctx
	b := &body{r: http.MaxBytesReader(w, r.Body, h.maxBytes)}
	switch {
	case rt.filter != nil:
		c.filter(b, rt.filter)
	case rt.prioritize != nil:
		c.prioritize(b, rt.prioritize)
	case rt.preempt != nil:
		c.preempt(b, rt.preempt)
	default:
		c.bind(b, rt.bind)
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		c.logger().Info("Extender call answered after its write timeout; the scheduler may have given up on it",
			"writeTimeout", h.writeTimeout, "took", time.Since(c.start).Round(time.Millisecond))
	}
}

// call is one extender call being served.
type call struct {
	h     *Handler
	w     http.ResponseWriter
	r     *http.Request
	ctx   context.Context
	start time.Time
}

func (c *call) logger() logr.Logger {
	return c.h.logger().WithValues("path", c.r.URL.Path, "remote", c.r.RemoteAddr)
}

// refuse answers ref's status with its reason as a JSON {"Error": ...},
// and logs it.
func (c *call) refuse(ref *refusal) {
	c.logger().Info("Refused an extender call", "status", ref.code, "reason", ref.reason)
	c.answer(ref.code, struct{ Error string }{ref.reason})
}

// fail answers 500 with the reason a function failed, and logs it.
func (c *call) fail(reason string) {
	c.logger().Info("Extender function failed; answered 500", "reason", reason)
	c.answer(http.StatusInternalServerError, struct{ Error string }{reason})
}

// answer writes v as the answer, logging a failure to.
func (c *call) answer(code int, v any) {
	c.delivered(writeJSON(c.w, code, v))
}

// delivered logs err, an answer's write error: the scheduler is gone, or
// the write deadline has passed.
func (c *call) delivered(err error) {
	if err != nil {
		c.logger().Info("Could not write the answer to an extender call", "err", err, "took", time.Since(c.start).Round(time.Millisecond))
	}
}

func (c *call) filter(b *body, fn FilterFunc) {
	a, ref := c.args(b)
	if ref != nil {
		c.refuse(ref)
		return
	}
	nodes, unknown := c.nodes(a)
	ans := filterAnswer{whole: a.whole, res: extenderv1.ExtenderFilterResult{
		FailedNodes:                extenderv1.FailedNodesMap{},
		FailedAndUnresolvableNodes: extenderv1.FailedNodesMap{},
	}}
	feasible, d, err := fn(c.ctx, a.pod, nodes)
	if err != nil {
		ans.whole = false
		ans.res.Error = err.Error()
		c.delivered(ans.write(c.w))
		return
	}
	names := make([]string, 0, len(feasible))
	for _, ni := range feasible {
		names = append(names, ni.Name())
		// A scheduler that sent whole nodes reads whole nodes back.
		if n := ni.Node(); a.whole && n != nil {
			ans.nodes = append(ans.nodes, n)
		}
	}
	ans.res.NodeNames = &names
	for name, s := range d.Rejected() {
		switch s.Code() {
		case fwk.Unschedulable:
			ans.res.FailedNodes[name] = s.Message()
		case fwk.UnschedulableAndUnresolvable:
			ans.res.FailedAndUnresolvableNodes[name] = s.Message()
		}
	}
	for name, msg := range unknown {
		ans.res.FailedNodes[name] = msg
	}
	c.delivered(ans.write(c.w))
}

func (c *call) prioritize(b *body, fn PrioritizeFunc) {
	a, ref := c.args(b)
	if ref != nil {
		c.refuse(ref)
		return
	}
	nodes, _ := c.nodes(a)
	list, err := fn(c.ctx, a.pod, nodes)
	if err != nil {
		c.fail(err.Error())
		return
	}
	if list == nil {
		list = extenderv1.HostPriorityList{}
	}
	list, n, first := clampScores(list)
	if n > 0 {
		c.logger().Info("Prioritize function returned scores outside 0..10; answered them clamped",
			"clamped", n, "firstNode", first.Host, "firstScore", first.Score)
	}
	c.answer(http.StatusOK, list)
}

func (c *call) bind(b *body, fn BindFunc) {
	var args extenderv1.ExtenderBindingArgs
	if ref := decode(b, &args); ref != nil {
		c.refuse(ref)
		return
	}
	if args.PodName == "" || args.Node == "" {
		c.refuse(refuse(http.StatusBadRequest, "bind request must name the pod (PodName) and the node (Node)"))
		return
	}
	var res extenderv1.ExtenderBindingResult
	err := fn(c.ctx, &v1.Binding{
		ObjectMeta: metav1.ObjectMeta{Namespace: args.PodNamespace, Name: args.PodName, UID: args.PodUID},
		Target:     v1.ObjectReference{Kind: "Node", Name: args.Node},
	})
	if err != nil {
		res.Error = err.Error()
	}
	c.answer(http.StatusOK, &res)
}

func (c *call) preempt(b *body, fn PreemptFunc) {
	var args extenderv1.ExtenderPreemptionArgs
	if ref := decode(b, &args); ref != nil {
		c.refuse(ref)
		return
	}
	victims, ref := c.h.victims(c.ctx, &args)
	if ref != nil {
		c.refuse(ref)
		return
	}
	got, err := fn(c.ctx, args.Pod, victims)
	if err != nil {
		c.fail(err.Error())
		return
	}
	// The scheduler reads the answer's entries without checking for null:
	// a node without victims is sent with an empty list, which it rejects
	// cleanly.
	res := extenderv1.ExtenderPreemptionResult{NodeNameToMetaVictims: make(map[string]*extenderv1.MetaVictims, len(got))}
	for name, v := range got {
		meta := &extenderv1.MetaVictims{Pods: []*extenderv1.MetaPod{}}
		if v != nil {
			meta.NumPDBViolations = v.NumPDBViolations
			for _, p := range v.Pods {
				if p == nil {
					c.fail(fmt.Sprintf("preempt function returned a nil pod for node %q", name))
					return
				}
				meta.Pods = append(meta.Pods, &extenderv1.MetaPod{UID: string(p.UID)})
			}
		}
		res.NodeNameToMetaVictims[name] = meta
	}
	c.answer(http.StatusOK, &res)
}

// args reads a filter or prioritize call and checks it has what every
// such call needs.
func (c *call) args(b *body) (*args, *refusal) {
	a, ref := c.h.readArgs(c.ctx, b)
	switch {
	case ref != nil:
		return nil, ref
	case a.pod == nil:
		return nil, refuse(http.StatusBadRequest, "request has no Pod")
	case a.whole:
		return a, nil
	case a.names == nil:
		return nil, refuse(http.StatusBadRequest, "request has neither Nodes nor NodeNames")
	case c.h.nodes == nil:
		return nil, refuse(http.StatusBadRequest, "request names nodes (nodeCacheCapable) but this extender has no node source: serve it WithNodes, or configure nodeCacheCapable: false")
	}
	return a, nil
}

// nodes returns the call's NodeInfos: those read with the call's whole
// nodes, or the node source's of the names it sent. Named nodes the
// source does not know are left out and returned with the reason, for the
// filter answer.
func (c *call) nodes(a *args) ([]*nodeinfo.NodeInfo, map[string]string) {
	if a.whole {
		return a.nodes, nil
	}
	nodes := make([]*nodeinfo.NodeInfo, 0, len(*a.names))
	var unknown map[string]string
	for _, name := range *a.names {
		ni, err := c.h.nodes(c.ctx, name)
		if err == nil && ni.Node() == nil {
			err = errors.New("no such node")
		}
		if err != nil {
			if unknown == nil {
				unknown = map[string]string{}
			}
			unknown[name] = fmt.Sprintf("node %q unknown to the extender: %v", name, err)
			continue
		}
		nodes = append(nodes, ni)
	}
	return nodes, unknown
}

// victims turns a preempt request into victims with whole pods, or
// refuses it with 400. A nodeCacheCapable scheduler names the victims by
// UID; a node the source does not know, or with a victim the source does
// not place on it, is left out: the extender cannot judge it, and leaving
// it out of the answer rejects it.
func (h *Handler) victims(ctx context.Context, args *extenderv1.ExtenderPreemptionArgs) (map[string]*extenderv1.Victims, *refusal) {
	if args.Pod == nil {
		return nil, refuse(http.StatusBadRequest, "request has no Pod")
	}
	if args.NodeNameToVictims != nil {
		for name, v := range args.NodeNameToVictims {
			switch {
			case v == nil:
				args.NodeNameToVictims[name] = &extenderv1.Victims{}
			case slices.Contains(v.Pods, nil):
				return nil, refuse(http.StatusBadRequest, "request has a null victim on node %q", name)
			}
		}
		return args.NodeNameToVictims, nil
	}
	if args.NodeNameToMetaVictims == nil {
		return nil, refuse(http.StatusBadRequest, "request has neither NodeNameToVictims nor NodeNameToMetaVictims")
	}
	if h.nodes == nil {
		return nil, refuse(http.StatusBadRequest, "request names pods by UID (nodeCacheCapable) but this extender has no node source: serve it WithNodes, or configure nodeCacheCapable: false")
	}
	victims := make(map[string]*extenderv1.Victims, len(args.NodeNameToMetaVictims))
	for name, meta := range args.NodeNameToMetaVictims {
		if meta != nil && slices.Contains(meta.Pods, nil) {
			return nil, refuse(http.StatusBadRequest, "request has a null victim on node %q", name)
		}
		ni, err := h.nodes(ctx, name)
		if err != nil || ni == nil || ni.Node() == nil {
			continue
		}
		v := &extenderv1.Victims{}
		if meta != nil {
			v.NumPDBViolations = meta.NumPDBViolations
			v.Pods = podsWithUIDs(ni, meta.Pods)
			if v.Pods == nil {
				continue
			}
		}
		victims[name] = v
	}
	return victims, nil
}

// podsWithUIDs returns the pods of ni that metas name, in their order, or
// nil if ni lacks one of them.
func podsWithUIDs(ni *nodeinfo.NodeInfo, metas []*extenderv1.MetaPod) []*v1.Pod {
	byUID := make(map[string]*v1.Pod, len(ni.Pods()))
	// The first of pods sharing a UID, as the scheduler looks them up.
	for _, pi := range slices.Backward(ni.Pods()) {
		byUID[string(pi.Pod.UID)] = pi.Pod
	}
	pods := make([]*v1.Pod, len(metas))
	for i, m := range metas {
		p, ok := byUID[m.UID]
		if !ok {
			return nil
		}
		pods[i] = p
	}
	return pods
}
