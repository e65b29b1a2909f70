package framework

import (
	"sync"

	"github.com/kubesched/kubesched/fwk"
	v1 "k8s.io/api/core/v1"
)

// cyclePlugins are the plugins a cycle runs after PreFilter, as the
// PreFilter plugins' Skips leave them: the Filter plugins not skipped, and
// the PreFilterExtensions of the PreFilter plugins that did not skip,
// which keep the cycle state in step when pods are added to or removed
// from a node (nominated pods, preemption's dry run). A cycle's are
// computed once, so that the per-node and per-victim loops need not ask
// each plugin again.
type cyclePlugins struct {
	filters    []fwk.FilterPlugin
	extensions []namedExtensions
	// at[i] is filters[i]'s position in Framework.filters, and local[i]
	// its node-locality (see NodeLocalPlugin), nil for a filter never
	// node-local.
	at    []int
	local []func(*v1.Pod) bool
}

// namedExtensions is a PreFilter plugin's extensions, with its name.
type namedExtensions struct {
	name string
	fwk.PreFilterExtensions
}

// skipSet records which PreFilter plugins returned Skip, by position.
type skipSet struct {
	// bits holds the first 64 positions; more are in rest.
	bits uint64
	rest map[int]bool
}

func (s *skipSet) add(i int) {
	if i < 64 {
		s.bits |= 1 << i
		return
	}
	if s.rest == nil {
		s.rest = map[int]bool{}
	}
	s.rest[i] = true
}

func (s *skipSet) has(i int) bool {
	if i < 64 {
		return s.bits&(1<<i) != 0
	}
	return s.rest[i]
}

// cyclePluginsCache maps a skipSet's bits to its cyclePlugins: a profile's
// PreFilter plugins skip in few combinations, so cycles share them.
type cyclePluginsCache struct {
	m sync.Map // uint64 -> *cyclePlugins
}

// cyclePlugins returns the plugins a cycle runs when the PreFilter plugins
// in skip returned Skip. A Filter plugin is skipped when a PreFilter
// plugin of its name skipped, as in kube-scheduler, whose cycle state
// holds the names.
func (f *Framework) cyclePlugins(skip skipSet) *cyclePlugins {
	if skip.rest == nil {
		if cp, ok := f.active.m.Load(skip.bits); ok {
			return cp.(*cyclePlugins)
		}
	}
	skipped := map[string]bool{}
	cp := &cyclePlugins{}
	for i, pl := range f.preFilters {
		if skip.has(i) {
			skipped[pl.Name()] = true
			continue
		}
		if ext, ok := pl.(fwk.PreFilterExtensions); ok {
			cp.extensions = append(cp.extensions, namedExtensions{name: pl.Name(), PreFilterExtensions: ext})
		}
	}
	for i, pl := range f.filters {
		if !skipped[pl.Name()] {
			cp.filters = append(cp.filters, pl)
			cp.at = append(cp.at, i)
			cp.local = append(cp.local, nodeLocality(pl))
		}
	}
	if skip.rest == nil {
		if prev, loaded := f.active.m.LoadOrStore(skip.bits, cp); loaded {
			return prev.(*cyclePlugins)
		}
	}
	return cp
}

// nodeLocality returns pl's NodeLocal, or nil when pl never is node-local.
func nodeLocality(pl fwk.Plugin) func(*v1.Pod) bool {
	if nl, ok := pl.(fwk.NodeLocalPlugin); ok {
		return nl.NodeLocal
	}
	return nil
}
