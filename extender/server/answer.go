package server

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"slices"

	v1 "k8s.io/api/core/v1"
	extenderv1 "k8s.io/kube-scheduler/extender/v1"
)

// writeJSON writes v as the answer, returning the write's error.
func writeJSON(w http.ResponseWriter, code int, v any) error {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	return json.NewEncoder(w).Encode(v)
}

// filterAnswer is an ExtenderFilterResult whose nodes, when the call
// carried whole nodes, are written one at a time rather than copied into
// a NodeList and encoded in one buffer: a scheduler that is not
// nodeCacheCapable reads back every feasible Node, as large as its call.
type filterAnswer struct {
	whole bool       // the call carried whole nodes: answer with them too
	nodes []*v1.Node // the feasible nodes, when whole
	res   extenderv1.ExtenderFilterResult
}

// write writes the answer as json.Marshal writes an ExtenderFilterResult
// with a.nodes as its Nodes, byte for byte.
func (a *filterAnswer) write(w http.ResponseWriter) error {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	bw := bufio.NewWriterSize(w, 32<<10)
	ew := &errWriter{w: bw}
	ew.enc = json.NewEncoder(&ew.buf)
	ew.str(`{"Nodes":`)
	if a.whole {
		ew.str(`{"metadata":{},"items":[`)
		for i, n := range a.nodes {
			if i > 0 {
				ew.str(",")
			}
			ew.json(n)
		}
		ew.str("]}")
	} else {
		ew.str("null")
	}
	ew.str(`,"NodeNames":`)
	ew.json(a.res.NodeNames)
	ew.str(`,"FailedNodes":`)
	ew.json(a.res.FailedNodes)
	ew.str(`,"FailedAndUnresolvableNodes":`)
	ew.json(a.res.FailedAndUnresolvableNodes)
	ew.str(`,"Error":`)
	ew.json(a.res.Error)
	ew.str("}\n")
	if ew.err != nil {
		return ew.err
	}
	return bw.Flush()
}

// errWriter writes until the first error, and keeps it. Values are
// encoded into one buffer, reused, so that writing an answer of many
// nodes allocates for one node at a time.
type errWriter struct {
	w   io.Writer
	err error
	buf bytes.Buffer
	enc *json.Encoder // to buf
}

func (e *errWriter) str(s string) {
	if e.err == nil {
		_, e.err = io.WriteString(e.w, s)
	}
}

func (e *errWriter) json(v any) {
	if e.err != nil {
		return
	}
	e.buf.Reset()
	if e.err = e.enc.Encode(v); e.err == nil {
		// As json.Marshal writes it: without the Encoder's newline.
		_, e.err = e.w.Write(bytes.TrimSuffix(e.buf.Bytes(), []byte("\n")))
	}
}

// clampScores returns list with every score brought into
// [extenderv1.MinExtenderPriority, extenderv1.MaxExtenderPriority], a copy
// if any had to be (the function may share its list), with the number of
// scores clamped and the first of them as it was.
func clampScores(list extenderv1.HostPriorityList) (extenderv1.HostPriorityList, int, extenderv1.HostPriority) {
	var n int
	var first extenderv1.HostPriority
	for i, hp := range list {
		s := min(max(hp.Score, extenderv1.MinExtenderPriority), extenderv1.MaxExtenderPriority)
		if s == hp.Score {
			continue
		}
		if n == 0 {
			first = hp
			list = slices.Clone(list)
		}
		n++
		list[i].Score = s
	}
	return list, n, first
}
