package fwk

import (
	"context"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"

	"github.com/kubesched/kubesched/nodeinfo"
)

// FilterExplainer is implemented by Filter plugins that can say more about
// a rejection than their reasons do: by how much a node falls short, which
// taint, term or port is in the way. framework.Framework.Explain asks it about
// each node the plugin rejected, with the cycle's state.
type FilterExplainer interface {
	FilterPlugin
	// ExplainFilter returns the facts behind the plugin's rejection of ni,
	// or nil when it has none to add. It must be safe for concurrent use.
	ExplainFilter(ctx context.Context, state *CycleState, pod *v1.Pod, ni *nodeinfo.NodeInfo) []Detail
}

// Detail is one fact behind a rejection, for people.
type Detail struct {
	// Message says it, for example "cpu: the pod requests 3, the node has
	// 4 allocatable of which its pods request 2: 1 short".
	Message string
	// Shortfall is set when the fact is a resource the node lacks.
	Shortfall *Shortfall
}

// Shortfall is a resource a node lacks for a pod, in the resource's base
// unit: millicores for cpu, bytes for memory and storage, a count
// otherwise (for "pods", the pod counts 1).
type Shortfall struct {
	// Resource names what is short: "cpu", "memory", "pods", an extended
	// resource.
	Resource v1.ResourceName
	// Requested is the incoming pod's request.
	Requested int64
	// Allocatable is the node's allocatable amount.
	Allocatable int64
	// Used is what the node's pods request already.
	Used int64
}

// Missing returns how much more the node would need: Requested + Used -
// Allocatable.
func (s Shortfall) Missing() int64 { return s.Requested + s.Used - s.Allocatable }

// Format writes v, an amount of s.Resource in its base unit, for people:
// cpu below one core in millicores ("250m"), above in cores with up to
// three decimals ("1.5"); memory, storage and hugepages in the largest
// binary unit that keeps the number at least 1, exact when it divides
// ("4Gi") and otherwise rounded to three significant digits ("15.2Gi",
// "2.5Gi", and "4.0Gi" for a little more than 4Gi); anything else as a
// plain count.
func (s Shortfall) Format(v int64) string {
	name := s.Resource
	switch {
	case name == v1.ResourceCPU:
		if v == 0 {
			return "0"
		}
		if v > -1000 && v < 1000 {
			return strconv.FormatInt(v, 10) + "m"
		}
		return strconv.FormatFloat(float64(v)/1000, 'f', -1, 64)
	case name == v1.ResourceMemory, name == v1.ResourceEphemeralStorage, strings.HasPrefix(string(name), v1.ResourceHugePagesPrefix):
		return formatBytes(v)
	}
	return strconv.FormatInt(v, 10)
}

// formatBytes writes a byte count in Ki, Mi, Gi, Ti or Pi.
func formatBytes(v int64) string {
	neg := v < 0
	if neg {
		v = -v
	}
	units := [...]string{"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"}
	u := 0
	for u+1 < len(units) && v>>(10*(u+1)) > 0 {
		u++
	}
	var out string
	if v&(1<<(10*u)-1) == 0 {
		out = strconv.FormatInt(v>>(10*u), 10) + units[u]
	} else {
		f := float64(v) / float64(int64(1)<<(10*u))
		prec := 2
		switch {
		case f >= 100:
			prec = 0
		case f >= 10:
			prec = 1
		}
		out = strconv.FormatFloat(f, 'f', prec, 64)
		if prec > 0 {
			// "2.5Gi", not "2.50Gi"; but "4.0Gi" stays, for it is not exact.
			out = strings.TrimRight(out, "0")
			if strings.HasSuffix(out, ".") {
				out += "0"
			}
		}
		out += units[u]
	}
	if neg {
		return "-" + out
	}
	return out
}
