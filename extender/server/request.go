package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"os"
	"strings"
	"sync"

	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/nodeinfo"
)

// refusal is a request the handler does not answer as the protocol
// says, with the status and reason it gets instead.
type refusal struct {
	code   int
	reason string
}

func (r *refusal) Error() string { return r.reason }

func refuse(code int, format string, args ...any) *refusal {
	return &refusal{code: code, reason: fmt.Sprintf(format, args...)}
}

// checkContentType returns the refusal of a request that is not
// application/json (in UTF-8, the only encoding JSON has), or nil.
// kube-scheduler always says application/json; a missing or other type
// is a caller that is not a scheduler.
func checkContentType(header string) *refusal {
	if header == "" {
		return refuse(http.StatusUnsupportedMediaType, "request has no Content-Type; extender calls are application/json")
	}
	mt, params, err := mime.ParseMediaType(header)
	if err != nil || mt != "application/json" {
		return refuse(http.StatusUnsupportedMediaType, "Content-Type %q is not application/json", header)
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		return refuse(http.StatusUnsupportedMediaType, "Content-Type %q: JSON is UTF-8", header)
	}
	return nil
}

// admission counts the calls a Handler is serving and the body bytes
// they may hold, and refuses a call beyond either limit rather than
// queueing it: a scheduler waiting on a queue would time out anyway, and
// a refusal tells it at once.
type admission struct {
	mu          sync.Mutex
	calls       int
	bytes       int64
	maxCalls    int
	maxInFlight int64
}

// take reserves room for one call with a body of up to n bytes, or
// returns why there is none.
func (a *admission) take(n int64) *refusal {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case a.calls >= a.maxCalls:
		return refuse(http.StatusServiceUnavailable, "extender busy: it serves at most %d calls at once; retry later", a.maxCalls)
	case a.bytes+n > a.maxInFlight:
		return refuse(http.StatusServiceUnavailable,
			"extender busy: the calls in progress hold %d of the %d bytes allowed for request bodies at once, this one needs %d; retry later",
			a.bytes, a.maxInFlight, n)
	}
	a.calls++
	a.bytes += n
	return nil
}

// give returns what take reserved.
func (a *admission) give(n int64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.calls--
	a.bytes -= n
}

// Requests from a scheduler spend tens of bytes per JSON object or array.
// A body far denser than that ("{},{},{},...") would decode into hundreds
// of times its size in Go values: one v1.Node is 784 bytes. Once
// densityCheckFrom bytes are read, every prefix of a body must have
// minBytesPerObject bytes per '{' or '[' on average.
//
// Whole nodes cost more: a v1.Node and its NodeInfo take about 2 KB
// however short their JSON. A Node as json.Marshal writes it is at least
// 265 bytes (its status.nodeInfo and daemonEndpoints have no omitempty),
// a kubelet's several kilobytes; so a call may carry one node per
// minBytesPerNode bytes of its body, which keeps the nodes within about
// 8 times the body's size.
const (
	densityCheckFrom  = 1 << 10
	minBytesPerObject = 12
	minBytesPerNode   = 256
)

// body reads a request body, checking as it goes that it is not denser
// in JSON objects than a scheduler's, and translating read errors into
// refusals.
type body struct {
	r     io.Reader // the http.MaxBytesReader
	n     int64
	opens int64
}

func (b *body) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.n += int64(n)
	b.opens += int64(bytes.Count(p[:n], []byte("{")) + bytes.Count(p[:n], []byte("[")))
	if b.n >= densityCheckFrom && b.opens*minBytesPerObject > b.n {
		return n, refuse(http.StatusBadRequest,
			"request body has %d JSON objects and arrays in its first %d bytes; a scheduler's requests have a few per hundred bytes", b.opens, b.n)
	}
	return n, err
}

// malformed turns an error of decoding the body into its refusal: the
// body reader's own, 413 past the size limit, 408 past the read
// deadline, 400 for the rest. what names the part of the body being read.
func malformed(err error, what string) *refusal {
	var r *refusal
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &r):
		return r
	case errors.As(err, &tooBig):
		return refuse(http.StatusRequestEntityTooLarge, "request body larger than %d bytes", tooBig.Limit)
	case errors.Is(err, os.ErrDeadlineExceeded):
		return refuse(http.StatusRequestTimeout, "reading the request body took longer than the read timeout")
	}
	if err == io.EOF {
		// The body ended where a value should have begun.
		err = io.ErrUnexpectedEOF
	}
	if what != "" {
		return refuse(http.StatusBadRequest, "malformed request body: %s: %v", what, err)
	}
	return refuse(http.StatusBadRequest, "malformed request body: %v", err)
}

// decode reads exactly one JSON value from b into v.
func decode(b *body, v any) *refusal {
	dec := json.NewDecoder(b)
	if err := dec.Decode(v); err != nil {
		return malformed(err, "")
	}
	return end(dec)
}

// end checks that nothing but white space follows the JSON value.
func end(dec *json.Decoder) *refusal {
	switch _, err := dec.Token(); {
	case err == io.EOF:
		return nil
	case err != nil:
		return malformed(err, "")
	}
	return refuse(http.StatusBadRequest, "malformed request body: data after the JSON value")
}

// args is a filter or prioritize call (extenderv1.ExtenderArgs) as the
// handler reads it.
type args struct {
	pod *v1.Pod
	// whole is set when the call carries whole nodes (Nodes), in nodes,
	// as NodeInfos, in the order sent; otherwise names holds NodeNames.
	whole bool
	nodes []*nodeinfo.NodeInfo
	names *[]string
}

// readArgs decodes a filter or prioritize call from b. Unlike decoding
// an ExtenderArgs whole, it never holds the body (the decoder buffers one
// value at a time) nor a []v1.Node (each node is decoded on its own and
// turned into a NodeInfo at once), and it refuses a node named twice or
// not at all. Keys match as encoding/json matches them, ignoring case;
// unknown keys are skipped.
func (h *Handler) readArgs(ctx context.Context, b *body) (*args, *refusal) {
	a := &args{}
	dec := json.NewDecoder(b)
	tok, err := dec.Token()
	switch {
	case err != nil:
		return nil, malformed(err, "")
	case tok == nil: // null: a call without anything, refused below
		return a, end(dec)
	case tok != json.Delim('{'):
		return nil, refuse(http.StatusBadRequest, "malformed request body: not a JSON object")
	}
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, malformed(err, "")
		}
		key, _ := tok.(string)
		field := ""
		for _, f := range []string{"Pod", "Nodes", "NodeNames"} {
			if strings.EqualFold(key, f) {
				field = f
			}
		}
		if field != "" {
			if seen[field] {
				return nil, refuse(http.StatusBadRequest, "malformed request body: %s given twice", field)
			}
			seen[field] = true
		}
		switch field {
		case "Pod":
			err = dec.Decode(&a.pod)
		case "NodeNames":
			err = dec.Decode(&a.names)
		case "Nodes":
			if r := h.readNodes(ctx, dec, b, a); r != nil {
				return nil, r
			}
		default:
			var skip json.RawMessage
			err = dec.Decode(&skip)
		}
		if err != nil {
			return nil, malformed(err, field)
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil, malformed(err, "")
	}
	if r := end(dec); r != nil {
		return nil, r
	}
	if a.names != nil && !a.whole {
		if r := noDuplicates(*a.names); r != nil {
			return nil, r
		}
	}
	return a, nil
}

// readNodes reads the value of Nodes, a v1.NodeList, node by node.
func (h *Handler) readNodes(ctx context.Context, dec *json.Decoder, b *body, a *args) *refusal {
	tok, err := dec.Token()
	switch {
	case err != nil:
		return malformed(err, "Nodes")
	case tok == nil: // null: as if absent
		return nil
	case tok != json.Delim('{'):
		return refuse(http.StatusBadRequest, "malformed request body: Nodes: not a JSON object")
	}
	a.whole = true
	names := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return malformed(err, "Nodes")
		}
		if key, _ := tok.(string); !strings.EqualFold(key, "items") {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return malformed(err, "Nodes")
			}
			continue
		}
		switch tok, err := dec.Token(); {
		case err != nil:
			return malformed(err, "Nodes.items")
		case tok == nil:
			continue
		case tok != json.Delim('['):
			return refuse(http.StatusBadRequest, "malformed request body: Nodes.items: not a JSON array")
		}
		for dec.More() {
			node := &v1.Node{}
			if err := dec.Decode(node); err != nil {
				return malformed(err, fmt.Sprintf("Nodes.items[%d]", len(a.nodes)))
			}
			switch {
			case node.Name == "":
				return refuse(http.StatusBadRequest, "request has a node without a name (Nodes.items[%d])", len(a.nodes))
			case names[node.Name]:
				return refuse(http.StatusBadRequest, "request names node %q twice", node.Name)
			case b.n >= densityCheckFrom && int64(len(a.nodes)+1)*minBytesPerNode > b.n:
				return refuse(http.StatusBadRequest,
					"request body has %d nodes in its first %d bytes; a scheduler's nodes take at least %d bytes each", len(a.nodes)+1, b.n, minBytesPerNode)
			}
			names[node.Name] = true
			a.nodes = append(a.nodes, h.nodeInfo(ctx, node))
		}
		if _, err := dec.Token(); err != nil {
			return malformed(err, "Nodes.items")
		}
	}
	if _, err := dec.Token(); err != nil {
		return malformed(err, "Nodes")
	}
	return nil
}

// nodeInfo is a NodeInfo of a node the call carries whole: with the pods
// the node source knows, if any, and the call's Node object.
func (h *Handler) nodeInfo(ctx context.Context, node *v1.Node) *nodeinfo.NodeInfo {
	if h.nodes != nil {
		if known, err := h.nodes(ctx, node.Name); err == nil && known != nil {
			ni := known.Clone()
			ni.SetNode(node)
			return ni
		}
	}
	return nodeinfo.New(node)
}

// noDuplicates refuses a list of node names with one twice or an empty
// one: an answer could not say which of the two it judged.
func noDuplicates(names []string) *refusal {
	seen := make(map[string]bool, len(names))
	for _, name := range names {
		switch {
		case name == "":
			return refuse(http.StatusBadRequest, "request has an empty node name")
		case seen[name]:
			return refuse(http.StatusBadRequest, "request names node %q twice", name)
		}
		seen[name] = true
	}
	return nil
}
