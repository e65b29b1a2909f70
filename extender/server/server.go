package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"

	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/nodeinfo"
)

// Limits applied unless changed with [WithMaxRequestBytes] and
// [WithTimeouts]. kube-scheduler gives an extender 5 seconds by default.
const (
	DefaultMaxRequestBytes int64 = 64 << 20
	DefaultReadTimeout           = 10 * time.Second
	DefaultWriteTimeout          = 10 * time.Second
)

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

// PrioritizeFunc answers a prioritize call with scores of nodes, meant to
// lie in [extenderv1.MinExtenderPriority, extenderv1.MaxExtenderPriority]:
// the scheduler multiplies them by the extender's weight and by 10, and
// does not check them. An error is answered with status 500; the
// scheduler then ignores this extender's scores.
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
// [DefaultMaxRequestBytes]). A scheduler that is not nodeCacheCapable sends
// every candidate Node object, several kilobytes each. A request may
// allocate a few hundred times its size while it is answered (bodies
// unusually dense in JSON objects are refused), so keep the limit no larger
// than the node lists need.
func WithMaxRequestBytes(n int64) Option {
	return func(h *Handler) error {
		if n <= 0 {
			return fmt.Errorf("WithMaxRequestBytes: %d; need at least 1", n)
		}
		h.maxBytes = n
		return nil
	}
}

// WithTimeouts sets how long reading a request body and producing the
// answer may take (defaults [DefaultReadTimeout], [DefaultWriteTimeout]).
// The functions' context ends when the write timeout does.
func WithTimeouts(read, write time.Duration) Option {
	return func(h *Handler) error {
		if read <= 0 || write <= 0 {
			return fmt.Errorf("WithTimeouts: read %v, write %v; both must be positive", read, write)
		}
		h.readTimeout, h.writeTimeout = read, write
		return nil
	}
}

// New returns a handler serving the given verbs. It returns an error for a
// bad option or when no verb is served.
func New(opts ...Option) (*Handler, error) {
	h := &Handler{
		routes:       map[string]route{},
		maxBytes:     DefaultMaxRequestBytes,
		readTimeout:  DefaultReadTimeout,
		writeTimeout: DefaultWriteTimeout,
	}
	for _, o := range opts {
		if err := o(h); err != nil {
			return nil, fmt.Errorf("extender server: %w", err)
		}
	}
	if len(h.routes) == 0 {
		return nil, errors.New("extender server: no verb to serve; add Filter, Prioritize, Bind or Preempt")
	}
	return h, nil
}

// HTTPServer returns an http.Server for h listening on addr, with the
// handler's timeouts also applied to reading headers and to the whole
// connection: use it rather than http.ListenAndServe, which sets none.
func (h *Handler) HTTPServer(addr string) *http.Server {
	return &http.Server{
		Addr:              addr,
		Handler:           h,
		ReadHeaderTimeout: h.readTimeout,
		ReadTimeout:       h.readTimeout,
		WriteTimeout:      h.writeTimeout,
		IdleTimeout:       2 * h.readTimeout,
		MaxHeaderBytes:    1 << 20,
	}
}

// ServeHTTP answers one extender call. GET /healthz, unless a verb is
// served there, answers 200 "ok" for a liveness or readiness probe: the
// handler keeps nothing between calls, so serving is all there is to
// being healthy.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rt, ok := h.routes[r.URL.Path]
	if !ok && r.URL.Path == "/healthz" && (r.Method == http.MethodGet || r.Method == http.MethodHead) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		_, _ = io.WriteString(w, "ok\n")
		return
	}
	if !ok {
		writeError(w, http.StatusNotFound, fmt.Sprintf("no extender verb at %s", r.URL.Path))
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeError(w, http.StatusMethodNotAllowed, fmt.Sprintf("method %s not allowed; extender calls are POST", r.Method))
		return
	}
	// Servers built elsewhere may set no timeouts: apply ours to this
	// request. Recorders and some transports cannot; then the server's own
	// settings are all there is.
	rc := http.NewResponseController(w)
	_ = rc.SetReadDeadline(time.Now().Add(h.readTimeout))
	_ = rc.SetWriteDeadline(time.Now().Add(h.writeTimeout))
	ctx, cancel := context.WithTimeout(r.Context(), h.writeTimeout)
	defer cancel()
	body := http.MaxBytesReader(w, r.Body, h.maxBytes)
	switch {
	case rt.filter != nil:
		h.serveFilter(ctx, w, body, rt.filter)
	case rt.prioritize != nil:
		h.servePrioritize(ctx, w, body, rt.prioritize)
	case rt.preempt != nil:
		h.servePreempt(ctx, w, body, rt.preempt)
	default:
		h.serveBind(ctx, w, body, rt.bind)
	}
}

func (h *Handler) serveFilter(ctx context.Context, w http.ResponseWriter, body io.Reader, fn FilterFunc) {
	var args extenderv1.ExtenderArgs
	if !decode(w, body, &args) {
		return
	}
	nodes, unknown, ok := h.nodeInfos(ctx, w, &args)
	if !ok {
		return
	}
	res := extenderv1.ExtenderFilterResult{
		FailedNodes:                extenderv1.FailedNodesMap{},
		FailedAndUnresolvableNodes: extenderv1.FailedNodesMap{},
	}
	feasible, d, err := fn(ctx, args.Pod, nodes)
	if err != nil {
		res.Error = err.Error()
		writeJSON(w, http.StatusOK, &res)
		return
	}
	names := make([]string, 0, len(feasible))
	for _, ni := range feasible {
		names = append(names, ni.Name())
	}
	res.NodeNames = &names
	// A scheduler that sent whole nodes reads whole nodes back.
	if args.Nodes != nil {
		res.Nodes = &v1.NodeList{Items: make([]v1.Node, 0, len(feasible))}
		for _, ni := range feasible {
			if n := ni.Node(); n != nil {
				res.Nodes.Items = append(res.Nodes.Items, *n)
			}
		}
	}
	for name, s := range d.Rejected() {
		switch s.Code() {
		case framework.Unschedulable:
			res.FailedNodes[name] = s.Message()
		case framework.UnschedulableAndUnresolvable:
			res.FailedAndUnresolvableNodes[name] = s.Message()
		}
	}
	for name, msg := range unknown {
		res.FailedNodes[name] = msg
	}
	writeJSON(w, http.StatusOK, &res)
}

func (h *Handler) servePrioritize(ctx context.Context, w http.ResponseWriter, body io.Reader, fn PrioritizeFunc) {
	var args extenderv1.ExtenderArgs
	if !decode(w, body, &args) {
		return
	}
	nodes, _, ok := h.nodeInfos(ctx, w, &args)
	if !ok {
		return
	}
	list, err := fn(ctx, args.Pod, nodes)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	if list == nil {
		list = extenderv1.HostPriorityList{}
	}
	writeJSON(w, http.StatusOK, list)
}

func (h *Handler) serveBind(ctx context.Context, w http.ResponseWriter, body io.Reader, fn BindFunc) {
	var args extenderv1.ExtenderBindingArgs
	if !decode(w, body, &args) {
		return
	}
	if args.PodName == "" || args.Node == "" {
		writeError(w, http.StatusBadRequest, "bind request must name the pod (PodName) and the node (Node)")
		return
	}
	var res extenderv1.ExtenderBindingResult
	err := fn(ctx, &v1.Binding{
		ObjectMeta: metav1.ObjectMeta{Namespace: args.PodNamespace, Name: args.PodName, UID: args.PodUID},
		Target:     v1.ObjectReference{Kind: "Node", Name: args.Node},
	})
	if err != nil {
		res.Error = err.Error()
	}
	writeJSON(w, http.StatusOK, &res)
}

func (h *Handler) servePreempt(ctx context.Context, w http.ResponseWriter, body io.Reader, fn PreemptFunc) {
	var args extenderv1.ExtenderPreemptionArgs
	if !decode(w, body, &args) {
		return
	}
	victims, ok := h.victims(ctx, w, &args)
	if !ok {
		return
	}
	got, err := fn(ctx, args.Pod, victims)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
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
					writeError(w, http.StatusInternalServerError, fmt.Sprintf("preempt function returned a nil pod for node %q", name))
					return
				}
				meta.Pods = append(meta.Pods, &extenderv1.MetaPod{UID: string(p.UID)})
			}
		}
		res.NodeNameToMetaVictims[name] = meta
	}
	writeJSON(w, http.StatusOK, &res)
}

// victims turns a preempt request into victims with whole pods, writing a
// 400 and returning false when it cannot. A nodeCacheCapable scheduler
// names the victims by UID; a node the source does not know, or with a
// victim the source does not place on it, is left out: the extender
// cannot judge it, and leaving it out of the answer rejects it.
func (h *Handler) victims(ctx context.Context, w http.ResponseWriter, args *extenderv1.ExtenderPreemptionArgs) (map[string]*extenderv1.Victims, bool) {
	if args.Pod == nil {
		writeError(w, http.StatusBadRequest, "request has no Pod")
		return nil, false
	}
	if args.NodeNameToVictims != nil {
		for name, v := range args.NodeNameToVictims {
			switch {
			case v == nil:
				args.NodeNameToVictims[name] = &extenderv1.Victims{}
			case slices.Contains(v.Pods, nil):
				writeError(w, http.StatusBadRequest, fmt.Sprintf("request has a null victim on node %q", name))
				return nil, false
			}
		}
		return args.NodeNameToVictims, true
	}
	if args.NodeNameToMetaVictims == nil {
		writeError(w, http.StatusBadRequest, "request has neither NodeNameToVictims nor NodeNameToMetaVictims")
		return nil, false
	}
	if h.nodes == nil {
		writeError(w, http.StatusBadRequest, "request names pods by UID (nodeCacheCapable) but this extender has no node source: serve it WithNodes, or configure nodeCacheCapable: false")
		return nil, false
	}
	victims := make(map[string]*extenderv1.Victims, len(args.NodeNameToMetaVictims))
	for name, meta := range args.NodeNameToMetaVictims {
		if meta != nil && slices.Contains(meta.Pods, nil) {
			writeError(w, http.StatusBadRequest, fmt.Sprintf("request has a null victim on node %q", name))
			return nil, false
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
	return victims, true
}

// podsWithUIDs returns the pods of ni that metas name, in their order, or
// nil if ni lacks one of them.
func podsWithUIDs(ni *nodeinfo.NodeInfo, metas []*extenderv1.MetaPod) []*v1.Pod {
	byUID := make(map[string]*v1.Pod, len(ni.Pods))
	// The first of pods sharing a UID, as the scheduler looks them up.
	for _, pi := range slices.Backward(ni.Pods) {
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

// nodeInfos turns a filter or prioritize request into NodeInfos, writing a
// 400 and returning false when it cannot. Named nodes the source does not
// know are left out and returned with the reason, for the filter answer.
func (h *Handler) nodeInfos(ctx context.Context, w http.ResponseWriter, args *extenderv1.ExtenderArgs) ([]*nodeinfo.NodeInfo, map[string]string, bool) {
	if args.Pod == nil {
		writeError(w, http.StatusBadRequest, "request has no Pod")
		return nil, nil, false
	}
	if args.Nodes != nil {
		nodes := make([]*nodeinfo.NodeInfo, len(args.Nodes.Items))
		for i := range args.Nodes.Items {
			node := &args.Nodes.Items[i]
			if h.nodes != nil {
				if known, err := h.nodes(ctx, node.Name); err == nil && known != nil {
					ni := known.Clone()
					ni.SetNode(node)
					nodes[i] = ni
					continue
				}
			}
			nodes[i] = nodeinfo.New(node)
		}
		return nodes, nil, true
	}
	if args.NodeNames == nil {
		writeError(w, http.StatusBadRequest, "request has neither Nodes nor NodeNames")
		return nil, nil, false
	}
	if h.nodes == nil {
		writeError(w, http.StatusBadRequest, "request names nodes (nodeCacheCapable) but this extender has no node source: serve it WithNodes, or configure nodeCacheCapable: false")
		return nil, nil, false
	}
	nodes := make([]*nodeinfo.NodeInfo, 0, len(*args.NodeNames))
	var unknown map[string]string
	for _, name := range *args.NodeNames {
		ni, err := h.nodes(ctx, name)
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
	return nodes, unknown, true
}

// Requests from a scheduler spend tens of bytes per JSON object or array.
// A body far denser than that ("{},{},{},...") would decode into hundreds
// of times its size in Go values: one v1.Node is 768 bytes. Bodies of at
// least densityCheckFrom bytes must have minBytesPerObject bytes per '{' or
// '[' on average, which bounds what a request allocates to a few hundred
// times its size.
const (
	densityCheckFrom  = 1 << 10
	minBytesPerObject = 12
)

// decode reads exactly one JSON value from body into v, writing a 413 or
// 400 and returning false when it cannot.
func decode(w http.ResponseWriter, body io.Reader, v any) bool {
	raw, err := io.ReadAll(body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body larger than %d bytes", tooBig.Limit))
			return false
		}
		writeError(w, http.StatusBadRequest, fmt.Sprintf("reading request body: %v", err))
		return false
	}
	if opens := bytes.Count(raw, []byte("{")) + bytes.Count(raw, []byte("[")); len(raw) >= densityCheckFrom && opens*minBytesPerObject > len(raw) {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("request body has %d JSON objects and arrays in %d bytes; a scheduler's requests have a few per hundred bytes", opens, len(raw)))
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	err = dec.Decode(v)
	if err == nil {
		if _, extra := dec.Token(); extra != io.EOF {
			err = errors.New("data after the JSON value")
		}
	}
	if err != nil {
		writeError(w, http.StatusBadRequest, fmt.Sprintf("malformed request body: %v", err))
		return false
	}
	return true
}

func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, struct{ Error string }{msg})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	// A failed write means the scheduler is gone; there is no one to tell.
	_ = json.NewEncoder(w).Encode(v)
}
