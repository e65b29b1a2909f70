package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/nodeinfo"
)

// explain explains the pods -pod names, or every pending pod, each on
// the cluster as the input has it.
func explain(ctx context.Context, st *state, o *options, stdout, stderr io.Writer) (int, error) {
	pods, err := podsToExplain(st, o)
	if err != nil {
		return 0, err
	}
	if len(pods) == 0 {
		fmt.Fprintln(stderr, "kubesched explain: no pending pod in the input; name one with --pod NAMESPACE/NAME")
	}
	bound := st.cluster.Bound()
	var all []*nodeinfo.NodeInfo // the cluster, built once for the pending pods
	progress := newProgress(stderr, "explained", len(pods), o.quiet)
	reports := []*podReport{}
	status := exitOK
	for _, pod := range pods {
		profile := profileOf(pod)
		fw, ok := st.frameworks[profile]
		if !ok {
			fmt.Fprintf(stderr, "kubesched explain: %s/%s: its schedulerName %q is no profile of the configuration; skipped\n", pod.Namespace, pod.Name, profile)
			continue
		}
		var nodes []*nodeinfo.NodeInfo
		if pod.Spec.NodeName == "" {
			if all == nil {
				all = nodeinfo.Build(st.cluster.Nodes, bound)
			}
			nodes = all
		} else {
			// A bound pod is explained as if it were pending: the
			// cluster without it.
			nodes = nodeinfo.Build(st.cluster.Nodes, without(bound, pod))
			pending := pod.DeepCopy()
			pending.Spec.NodeName = ""
			pod = pending
		}
		var r *podReport
		e, err := fw.Explain(ctx, pod, nodes)
		if nt := notTriedOf(err); nt != nil {
			// Not tried is a verdict: the other pods go on.
			r = &podReport{Pod: pod.Namespace + "/" + pod.Name, Profile: profile, Message: nt.Message, NotTried: nt,
				PreFilter: []verdictReport{}, Filters: []string{}, Scores: []pluginWeight{}, Nodes: []nodeReport{}}
		} else if err != nil {
			return 0, fmt.Errorf("%s/%s: %w", pod.Namespace, pod.Name, err)
		} else if r, err = report(e, profile, o.closest); err != nil {
			return 0, fmt.Errorf("%s/%s: %w", pod.Namespace, pod.Name, err)
		}
		r.KubeScheduler = st.release.Version()
		if r.Node == "" {
			status = exitUnschedulable
		}
		reports = append(reports, r)
		progress.step()
	}
	progress.finish()
	switch o.output {
	case "json":
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return status, enc.Encode(struct {
			APIVersion string       `json:"apiVersion"`
			Kind       string       `json:"kind"`
			Pods       []*podReport `json:"pods"`
		}{jsonAPIVersion, "Explanation", reports})
	case "html":
		return status, writeHTML(stdout, reports)
	}
	for i, r := range reports {
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		writeTable(stdout, r, o.maxNodes)
	}
	return status, nil
}

// podsToExplain returns the pods --pod names, or the pending ones.
func podsToExplain(st *state, o *options) ([]*v1.Pod, error) {
	if len(o.pods) == 0 {
		return st.cluster.Pending(), nil
	}
	var out []*v1.Pod
	for _, name := range o.pods {
		ns, n, ok := strings.Cut(name, "/")
		if !ok {
			ns, n = o.namespace, name
		}
		p, ok := st.cluster.Pod(ns, n)
		if !ok {
			return nil, fmt.Errorf("--pod %s: no such pod in the input", name)
		}
		out = append(out, p)
	}
	return out, nil
}

// without returns pods less pod.
func without(pods []*v1.Pod, pod *v1.Pod) []*v1.Pod {
	out := make([]*v1.Pod, 0, len(pods))
	for _, p := range pods {
		if p != pod {
			out = append(out, p)
		}
	}
	return out
}

// progress reports on stderr, every two seconds, how far a long run is.
type progress struct {
	w           io.Writer
	verb        string
	total, n    int
	last, start time.Time
	quiet       bool
	said        bool
}

func newProgress(w io.Writer, verb string, total int, quiet bool) *progress {
	now := time.Now()
	return &progress{w: w, verb: verb, total: total, last: now, start: now, quiet: quiet}
}

// step counts one pod done.
func (p *progress) step() {
	p.n++
	if p.quiet || time.Since(p.last) < 2*time.Second {
		return
	}
	p.last, p.said = time.Now(), true
	rate := float64(p.n) / time.Since(p.start).Seconds()
	fmt.Fprintf(p.w, "kubesched: %s %d of %d pods (%.0f/s)\n", p.verb, p.n, p.total, rate)
}

// finish closes a run that reported progress.
func (p *progress) finish() {
	if p.said {
		fmt.Fprintf(p.w, "kubesched: %s %d pods in %s\n", p.verb, p.n, time.Since(p.start).Round(time.Millisecond))
	}
}
