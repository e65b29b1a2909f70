package framework

import (
	"fmt"
	"sort"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
)

// Result is the outcome of scheduling one pod.
type Result struct {
	// SuggestedHost is the chosen node's name.
	SuggestedHost string
	// EvaluatedNodes counts the nodes filtered (feasible or not); with
	// percentageOfNodesToScore below 100 the search may stop early. Nodes a
	// PreFilter plugin excluded up front are not counted.
	EvaluatedNodes int
	// FeasibleNodes counts the nodes that passed every filter.
	FeasibleNodes int
	// NodeScores holds every feasible node's scores, in the order the nodes
	// were given (rotated to where the search started). Empty when only one
	// node was feasible, since then nothing is scored.
	NodeScores []NodePluginScores
	// Diagnosis explains the nodes that were rejected.
	Diagnosis Diagnosis
}

// NodePluginScores is one node's scores.
type NodePluginScores struct {
	Name string
	// Scores holds each scoring plugin's weighted, normalized score, in
	// plugin order. Plugins that skipped this pod (PreScore returned Skip)
	// are absent, as in kube-scheduler. Extenders interested in the pod
	// follow the plugins, named by their URL prefix, with their weighted
	// score scaled to 0-100. Nodes with identical scores may share one
	// slice: treat it as read-only.
	Scores     []PluginScore
	TotalScore int64
}

// PluginScore is one plugin's weighted score for a node.
type PluginScore struct {
	Name  string
	Score int64
}

// Diagnosis records why nodes were rejected.
type Diagnosis struct {
	// NodeToStatus maps each rejected node to its rejection. Nodes that
	// passed every filter are absent.
	NodeToStatus map[string]*Status
	// UnschedulablePlugins are the plugins that rejected at least one node.
	UnschedulablePlugins sets.Set[string]
	// PreFilterMsg is the message of a PreFilter rejection, which applies to
	// every node.
	PreFilterMsg string
}

func (d *Diagnosis) addPluginStatus(s *Status) {
	if s.Plugin() == "" || !s.IsRejected() {
		return
	}
	if d.UnschedulablePlugins == nil {
		d.UnschedulablePlugins = sets.New[string]()
	}
	d.UnschedulablePlugins.Insert(s.Plugin())
}

// FitError is returned by Schedule when no node fits the pod. Use
// errors.As to reach the Diagnosis.
type FitError struct {
	Pod         *v1.Pod
	NumAllNodes int
	Diagnosis   Diagnosis
}

// Error returns kube-scheduler's message, for example
// "0/5 nodes are available: 2 Insufficient cpu, 3 node(s) had untolerated taint(s).":
// the PreFilter message if PreFilter rejected the pod, otherwise each reason
// with the number of nodes that gave it, sorted as strings.
func (f *FitError) Error() string {
	msg := fmt.Sprintf("0/%d nodes are available:", f.NumAllNodes)
	if f.Diagnosis.PreFilterMsg != "" {
		return msg + " " + f.Diagnosis.PreFilterMsg + "."
	}
	counts := map[string]int{}
	for _, s := range f.Diagnosis.NodeToStatus {
		for _, r := range s.Reasons() {
			counts[r]++
		}
	}
	parts := make([]string, 0, len(counts))
	for r, n := range counts {
		parts = append(parts, fmt.Sprintf("%d %s", n, r))
	}
	sort.Strings(parts)
	if len(parts) > 0 {
		msg += " " + strings.Join(parts, ", ") + "."
	}
	return msg
}
