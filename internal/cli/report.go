package cli

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	corev1helpers "k8s.io/component-helpers/scheduling/corev1"

	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/fwk"
)

// podReport is one pod's explanation as the command prints it; its JSON
// form is the -o json output, documented in docs/command.md.
type podReport struct {
	Pod     string `json:"pod"`
	Profile string `json:"profile"`
	// KubeScheduler is the kube-scheduler release decided as, such as
	// "v1.37.2".
	KubeScheduler string `json:"kubeScheduler"`
	// Node is the node kube-scheduler would choose; empty when none fits.
	Node string `json:"node,omitempty"`
	// Tied are the other nodes with the chosen node's total score, any of
	// which kube-scheduler could pick at random.
	Tied []string `json:"tied,omitempty"`
	// Message is kube-scheduler's message when no node fits.
	Message        string          `json:"message,omitempty"`
	EvaluatedNodes int             `json:"evaluatedNodes"`
	FeasibleNodes  int             `json:"feasibleNodes"`
	PreFilter      []verdictReport `json:"preFilter"`
	Filters        []string        `json:"filters"`
	Scores         []pluginWeight  `json:"scores"`
	Nodes          []nodeReport    `json:"nodes"`
	// Closest names the nodes nearest to fitting, nearest first.
	Closest []string `json:"closest,omitempty"`
	// NotTried is set for a pod kube-scheduler does not try to schedule;
	// such a pod has no node verdicts.
	NotTried *notTriedReport `json:"notTried,omitempty"`
	// Preemption is what DefaultPreemption decided for a pod no node
	// fits, when it found room by evicting pods.
	Preemption *preemptionReport `json:"preemption,omitempty"`
}

// notTriedReport says why kube-scheduler does not try a pod: the
// PreEnqueue plugin that turns it down (none for a pod being deleted)
// and its message.
type notTriedReport struct {
	Plugin  string `json:"plugin,omitempty"`
	Message string `json:"message"`
}

// notTriedOf returns the report of err when it is a *NotTriedError.
func notTriedOf(err error) *notTriedReport {
	var nt *framework.NotTriedError
	if !errors.As(err, &nt) {
		return nil
	}
	return &notTriedReport{Plugin: nt.Plugin, Message: nt.Error()}
}

// preemptionReport is DefaultPreemption's decision: the node the pod is
// nominated to and the pods evicted there first.
type preemptionReport struct {
	NominatedNode string         `json:"nominatedNode"`
	Victims       []victimReport `json:"victims"`
	// PDBViolations counts the victims whose eviction a
	// PodDisruptionBudget does not allow.
	PDBViolations int `json:"pdbViolations"`
	// NominationsCleared are the lower-priority pods nominated to that
	// node that lose their nomination.
	NominationsCleared []string `json:"nominationsCleared,omitempty"`
}

type victimReport struct {
	Pod      string `json:"pod"`
	Priority int32  `json:"priority"`
}

// preemptionOf returns the report of fe's preemption, nil without one.
func preemptionOf(fe *framework.FitError) *preemptionReport {
	if fe == nil || fe.Preemption == nil {
		return nil
	}
	p := fe.Preemption
	r := &preemptionReport{NominatedNode: p.NominatedNodeName, Victims: []victimReport{}, PDBViolations: p.NumPDBViolations}
	for _, v := range p.Victims {
		r.Victims = append(r.Victims, victimReport{Pod: v.Namespace + "/" + v.Name, Priority: corev1helpers.PodPriority(v)})
	}
	for _, n := range p.NominationsToClear {
		r.NominationsCleared = append(r.NominationsCleared, n.Namespace+"/"+n.Name)
	}
	return r
}

// Sentence says what kube-scheduler does about the preemption, for
// people.
func (p *preemptionReport) Sentence() string {
	victims := make([]string, len(p.Victims))
	for i, v := range p.Victims {
		victims[i] = fmt.Sprintf("%s (priority %d)", v.Pod, v.Priority)
	}
	s := fmt.Sprintf("preempts: nominates the pod to %s and evicts %d pod(s) there: %s", p.NominatedNode, len(p.Victims), summarize(victims, 20))
	if p.PDBViolations > 0 {
		s += fmt.Sprintf("; %d of them against a PodDisruptionBudget", p.PDBViolations)
	}
	if len(p.NominationsCleared) > 0 {
		s += fmt.Sprintf("; %s lose their nomination", summarize(p.NominationsCleared, 10))
	}
	return s
}

// summarize joins names, the first most of them and how many more.
func summarize(names []string, most int) string {
	if len(names) <= most {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:most], ", "), len(names)-most)
}

type pluginWeight struct {
	Plugin string `json:"plugin"`
	Weight int32  `json:"weight"`
}

type nodeReport struct {
	Name     string `json:"name"`
	Feasible bool   `json:"feasible"`
	// KubeScheduler is kube-scheduler's verdict on a node that does not
	// fit: the first rejection.
	KubeScheduler *verdictReport `json:"kubeScheduler,omitempty"`
	// ExcludedByPreFilter: a PreFilter plugin left the node out.
	ExcludedByPreFilter bool `json:"excludedByPreFilter,omitempty"`
	// Filters holds every filter's verdict (kubesched's extra).
	Filters    []verdictReport `json:"filters"`
	Rejections int             `json:"rejections"`
	Scores     []scoreReport   `json:"scores,omitempty"`
	Total      int64           `json:"total,omitempty"`
}

type verdictReport struct {
	Plugin string `json:"plugin"`
	// Verdict is pass, skip, reject or error.
	Verdict string   `json:"verdict"`
	Code    string   `json:"code,omitempty"`
	Reasons []string `json:"reasons,omitempty"`
	Details []string `json:"details,omitempty"`
	// Shortfalls are the resources a node lacks, in base units
	// (millicores, bytes, counts).
	Shortfalls []shortfallReport `json:"shortfalls,omitempty"`
}

// jsonAPIVersion is the version of the -o json output's form; it changes
// when a field changes meaning or goes.
const jsonAPIVersion = "kubesched/v1"

type shortfallReport struct {
	Resource v1.ResourceName `json:"resource"`
	// Unit is the unit of the three amounts: millicores for cpu, bytes
	// for memory, ephemeral storage and huge pages, a count otherwise.
	Unit        string `json:"unit"`
	Requested   int64  `json:"requested"`
	Allocatable int64  `json:"allocatable"`
	Used        int64  `json:"used"`
}

type scoreReport struct {
	Plugin     string `json:"plugin"`
	Raw        int64  `json:"raw"`
	Normalized int64  `json:"normalized"`
	Weighted   int64  `json:"weighted"`
}

// unitOf is the unit a resource's amounts are reported in.
func unitOf(name v1.ResourceName) string {
	switch {
	case name == v1.ResourceCPU:
		return "millicores"
	case name == v1.ResourceMemory || name == v1.ResourceEphemeralStorage || strings.HasPrefix(string(name), v1.ResourceHugePagesPrefix):
		return "bytes"
	}
	return "count"
}

// verdictOf turns a plugin's verdict into its report.
func verdictOf(plugin string, s *fwk.Status, details []fwk.Detail) verdictReport {
	v := verdictReport{Plugin: plugin, Verdict: "pass"}
	switch {
	case s.IsSuccess():
	case s.IsSkip():
		v.Verdict = "skip"
	case s.IsRejected():
		v.Verdict = "reject"
	default:
		v.Verdict = "error"
	}
	if !s.IsSuccess() && !s.IsSkip() {
		v.Code, v.Reasons = s.Code().String(), s.Reasons()
	}
	for _, d := range details {
		v.Details = append(v.Details, d.Message)
		if sf := d.Shortfall; sf != nil {
			v.Shortfalls = append(v.Shortfalls, shortfallReport{Resource: sf.Resource, Unit: unitOf(sf.Resource), Requested: sf.Requested, Allocatable: sf.Allocatable, Used: sf.Used})
		}
	}
	return v
}

// report builds a pod's report from its explanation, with the closest
// nodes (at most closest of them).
func report(e *framework.Explanation, profile string, closest int) (*podReport, error) {
	r := &podReport{Pod: e.Pod.Namespace + "/" + e.Pod.Name, Profile: profile, Filters: e.Filters}
	var fe *framework.FitError
	switch {
	case e.Err == nil:
		r.Node, r.EvaluatedNodes, r.FeasibleNodes = e.Result.SuggestedHost, e.Result.EvaluatedNodes, e.Result.FeasibleNodes
	case errors.As(e.Err, &fe):
		r.Message = fe.Error()
		r.EvaluatedNodes = fe.NumAllNodes
		r.Preemption = preemptionOf(fe)
	default:
		return nil, e.Err
	}
	for _, v := range e.PreFilter {
		r.PreFilter = append(r.PreFilter, verdictOf(v.Plugin, v.Status, v.Details))
	}
	for _, s := range e.Scores {
		r.Scores = append(r.Scores, pluginWeight{Plugin: s.Name, Weight: s.Weight})
	}
	var chosen int64
	for _, ne := range e.Nodes {
		n := nodeReport{Name: ne.Name, Feasible: ne.Status == nil, ExcludedByPreFilter: ne.ExcludedByPreFilter, Rejections: ne.Rejections, Total: ne.Total}
		if ne.Status != nil {
			v := verdictOf(ne.Status.Plugin(), ne.Status, nil)
			n.KubeScheduler = &v
		}
		for _, f := range ne.Filters {
			n.Filters = append(n.Filters, verdictOf(f.Plugin, f.Status, f.Details))
		}
		for _, s := range ne.Scores {
			n.Scores = append(n.Scores, scoreReport(s))
		}
		if ne.Name == r.Node {
			chosen = ne.Total
		}
		r.Nodes = append(r.Nodes, n)
	}
	if r.Node != "" && r.FeasibleNodes > 1 {
		for _, n := range r.Nodes {
			if n.Feasible && n.Total == chosen && n.Name != r.Node {
				r.Tied = append(r.Tied, n.Name)
			}
		}
	}
	for _, ne := range e.Closest(closest) {
		r.Closest = append(r.Closest, ne.Name)
	}
	return r, nil
}

// node returns the report of the node called name.
func (r *podReport) node(name string) *nodeReport {
	i := slices.IndexFunc(r.Nodes, func(n nodeReport) bool { return n.Name == name })
	if i < 0 {
		return nil
	}
	return &r.Nodes[i]
}

// shown picks the nodes a table shows when there are more than limit:
// always the chosen node, the closest to fitting (of a pod that fits
// nowhere) and the first node of
// each way of being rejected (kube-scheduler's plugin and reasons), so
// that no rejection is hidden; then, up to limit, the nodes tied with
// the chosen one, the best scored, and the rest in order. limit <= 0
// shows all.
func (r *podReport) shown(limit int) []*nodeReport {
	if limit <= 0 || len(r.Nodes) <= limit {
		out := make([]*nodeReport, len(r.Nodes))
		for i := range r.Nodes {
			out[i] = &r.Nodes[i]
		}
		return out
	}
	seen := map[string]bool{}
	var out []*nodeReport
	add := func(name string, always bool) {
		if (always || len(out) < limit) && !seen[name] {
			if n := r.node(name); n != nil {
				seen[name] = true
				out = append(out, n)
			}
		}
	}
	add(r.Node, true)
	if r.Node == "" {
		for _, name := range r.Closest {
			add(name, true)
		}
	}
	for _, c := range r.rejectionClasses() {
		add(c.Nodes[0], true)
	}
	for _, name := range r.Tied {
		add(name, false)
	}
	byScore := make([]*nodeReport, 0, len(r.Nodes))
	for i := range r.Nodes {
		if r.Nodes[i].Feasible {
			byScore = append(byScore, &r.Nodes[i])
		}
	}
	slices.SortStableFunc(byScore, func(a, b *nodeReport) int { return cmp.Compare(b.Total, a.Total) })
	for _, n := range byScore {
		add(n.Name, false)
	}
	for i := range r.Nodes {
		add(r.Nodes[i].Name, false)
	}
	// In the nodes' order, as a table without a limit.
	slices.SortStableFunc(out, func(a, b *nodeReport) int {
		return cmp.Compare(slices.IndexFunc(r.Nodes, func(n nodeReport) bool { return n.Name == a.Name }),
			slices.IndexFunc(r.Nodes, func(n nodeReport) bool { return n.Name == b.Name }))
	})
	return out
}

// rejectionClass is a way kube-scheduler rejects nodes, its verdict, and
// the nodes it rejects so, in order.
type rejectionClass struct {
	Verdict string
	Nodes   []string
}

// rejectionClasses groups the rejected nodes by kube-scheduler's verdict,
// the largest group first.
func (r *podReport) rejectionClasses() []rejectionClass {
	var out []rejectionClass
	index := map[string]int{}
	for _, n := range r.Nodes {
		if n.KubeScheduler == nil {
			continue
		}
		v := n.KubeScheduler.Plugin + ": " + strings.Join(n.KubeScheduler.Reasons, ", ")
		if n.KubeScheduler.Plugin == "" {
			v = strings.Join(n.KubeScheduler.Reasons, ", ")
		}
		i, ok := index[v]
		if !ok {
			i = len(out)
			index[v] = i
			out = append(out, rejectionClass{Verdict: v})
		}
		out[i].Nodes = append(out[i].Nodes, n.Name)
	}
	slices.SortStableFunc(out, func(a, b rejectionClass) int { return cmp.Compare(len(b.Nodes), len(a.Nodes)) })
	return out
}

// placement is one pod's outcome in a place or whatif run.
type placement struct {
	Pod  string `json:"pod"`
	Node string `json:"node,omitempty"`
	// Message is kube-scheduler's message for a pod that fits nowhere or
	// that it does not try.
	Message string `json:"message,omitempty"`
	// NotTried is set for a pod kube-scheduler does not try.
	NotTried *notTriedReport `json:"notTried,omitempty"`
	// Preemption is what DefaultPreemption decided for a pod that fits
	// nowhere, as the cluster stood when it was tried.
	Preemption *preemptionReport `json:"preemption,omitempty"`
	// Preempted says the preemption was acted on (--preempt): the
	// victims were evicted, and the pod tried again.
	Preempted bool `json:"preempted,omitempty"`
	// Closest names the nodes nearest to fitting a pod that fits nowhere,
	// as the cluster stood when it was tried.
	Closest []closeNode `json:"closest,omitempty"`
}

// workloadReport is a workload whose pods were made from its template,
// and how many of them were placed.
type workloadReport struct {
	Workload string `json:"workload"`
	Pods     int    `json:"pods"`
	Placed   int    `json:"placed"`
}

// closeNode is a node near to fitting, with what stands in the way.
type closeNode struct {
	Name    string   `json:"name"`
	Reasons []string `json:"reasons"`
}

// placeReport is the outcome of a place or whatif run.
type placeReport struct {
	// APIVersion and Kind name the form of the -o json output.
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	// KubeScheduler is the kube-scheduler release decided as.
	KubeScheduler string `json:"kubeScheduler"`
	// Changes lists what whatif changed before placing.
	Changes []string `json:"changes,omitempty"`
	Placed  int      `json:"placed"`
	Pending int      `json:"pending"`
	// NotTried counts the pods kube-scheduler does not try, which
	// Pending counts too.
	NotTried int `json:"notTried"`
	// Evicted counts the pods preemption evicted (--preempt).
	Evicted    int         `json:"evicted"`
	Placements []placement `json:"placements"`
	// Workloads are the workloads whose pods kubesched made, as their
	// controllers would, with how many of those were placed.
	Workloads []workloadReport `json:"workloads,omitempty"`
}

// closeNodes describes the closest nodes of an explanation: what each
// rejecting plugin found, shortfalls in short.
func closeNodes(e *framework.Explanation, n int) []closeNode {
	var out []closeNode
	for _, ne := range e.Closest(n) {
		c := closeNode{Name: ne.Name}
		for _, f := range ne.Filters {
			if !f.Status.IsRejected() {
				continue
			}
			var details []string
			var short []fwk.Shortfall
			for _, d := range f.Details {
				details = append(details, d.Message)
				if d.Shortfall != nil {
					short = append(short, *d.Shortfall)
				}
			}
			c.Reasons = append(c.Reasons, obstacle(f.Plugin, details, short, f.Status.Reasons()))
		}
		if len(c.Reasons) == 0 {
			c.Reasons = []string{ne.Status.Message()}
		}
		out = append(out, c)
	}
	return out
}

// obstacle says in one phrase what a rejecting plugin found on a node:
// the resources it lacks and by how much, else its details, else its
// reasons.
func obstacle(plugin string, details []string, short []fwk.Shortfall, reasons []string) string {
	switch {
	case len(short) > 0:
		parts := make([]string, len(short))
		for i, s := range short {
			parts[i] = s.Format(s.Missing()) + " " + string(s.Resource)
		}
		return plugin + " (" + strings.Join(parts, ", ") + " short)"
	case len(details) > 0:
		return plugin + ": " + strings.Join(details, "; ")
	}
	return plugin + ": " + strings.Join(reasons, ", ")
}
