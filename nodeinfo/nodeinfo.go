package nodeinfo

import (
	"fmt"
	"sync/atomic"

	v1 "k8s.io/api/core/v1"
	ndf "k8s.io/component-helpers/nodedeclaredfeatures"

	"github.com/kubesched/kubesched/internal/podaffinity"
	"github.com/kubesched/kubesched/internal/podcount"
)

// PodInfo is a bound pod with the request totals the plugins need, computed
// once when the pod is added.
type PodInfo struct {
	// Pod is the pod itself, not a copy; Requests and the rest were read
	// from it when the PodInfo was made, so it must not change after.
	Pod *v1.Pod
	// Requests is what the pod asks of its node (see [PodRequests]).
	Requests Resource
	// NonZeroCPU and NonZeroMem are the cpu and memory requests with
	// kube-scheduler's defaults standing in for unset ones.
	NonZeroCPU, NonZeroMem int64

	affinity *podaffinity.Terms // parsed once, for pods with pod affinity

	// facts is what a NodeInfo's bookkeeping reads of the pod, computed
	// by NewPodInfo so that adding and removing the pod, as a dry run of
	// preemption does for each victim, need not read it again. A PodInfo
	// built otherwise has none (known is false), and the pod is read.
	facts podFacts
}

// podFacts is what a NodeInfo's bookkeeping reads of a pod.
type podFacts struct {
	known                  bool
	hostPorts              []v1.ContainerPort
	claims                 bool // some volume is a PersistentVolumeClaim
	affinity, antiAffinity bool // hasAffinity, hasRequiredAntiAffinity
}

// factsOf returns pi's facts, reading the pod when NewPodInfo did not.
func (pi *PodInfo) factsOf() podFacts {
	if pi.facts.known {
		return pi.facts
	}
	return readFacts(pi.Pod)
}

func readFacts(pod *v1.Pod) podFacts {
	f := podFacts{known: true, hostPorts: HostPorts(pod), affinity: hasAffinity(pod), antiAffinity: hasRequiredAntiAffinity(pod)}
	for _, vol := range pod.Spec.Volumes {
		if vol.PersistentVolumeClaim != nil {
			f.claims = true
			break
		}
	}
	return f
}

// NewPodInfo computes a pod's request totals and parses its pod affinity.
func NewPodInfo(pod *v1.Pod) *PodInfo {
	req, cpu, mem := PodRequests(pod)
	facts := readFacts(pod)
	pi := &PodInfo{Pod: pod, Requests: req, NonZeroCPU: cpu, NonZeroMem: mem, facts: facts}
	if facts.affinity {
		pi.affinity = parseAffinity(pod)
	}
	return pi
}

// AffinityTerms returns the pod's parsed pod affinity and anti-affinity
// terms, for kubesched's InterPodAffinity plugins and queueing hints;
// their type is internal to kubesched. They are parsed once, when the
// PodInfo is made, so that the affinity plugins do not parse every
// running pod in every cycle; callers must not modify them. Lists that
// fail to parse are empty, as in kube-scheduler's cache.
func (pi *PodInfo) AffinityTerms() *podaffinity.Terms {
	switch {
	case pi.affinity != nil:
		return pi.affinity
	case pi.facts.known && !pi.facts.affinity:
		// Most pods: nothing to parse, and nothing to allocate.
		return &noTerms
	}
	return parseAffinity(pi.Pod)
}

// noTerms are the terms of every pod without pod affinity; shared, so
// never modified.
var noTerms podaffinity.Terms

func parseAffinity(pod *v1.Pod) *podaffinity.Terms {
	t, _ := podaffinity.Parse(pod)
	return &t
}

// ImageStateSummary describes an image present on a node.
type ImageStateSummary struct {
	// Size is the image's size in bytes as the node reports it.
	Size int64
	// NumNodes is how many nodes of the cluster hold the image; filled in
	// by [Build], 1 for a NodeInfo made alone with [New].
	NumNodes int
}

// NodeInfo is a node and the pods bound to it, with totals derived from them.
// The exported fields are maintained by [NodeInfo.AddPod] and
// [NodeInfo.RemovePod]; plugins only read them.
//
// Fields are ordered so that what every scheduling cycle reads for every
// node sits in the first few cache lines.
type NodeInfo struct {
	node *v1.Node
	// Copies of the node fields every cycle reads for every node, kept here
	// so that the hot path touches one object per node instead of two.
	name          string
	labels        map[string]string
	taints        []v1.Taint
	unschedulable bool
	// features are the node's declared features (status.declaredFeatures)
	// that kube-scheduler knows of.
	features ndf.FeatureSet

	// See the accessors of the same names. Only the NodeInfo's own
	// methods change them, keeping them consistent with its pods and
	// node and advancing generation on every change: the memos and
	// aggregates of the framework and plugins trust that a generation
	// names one content.
	generation                   int64
	requested                    Resource
	nonZeroRequested             Resource
	allocatable                  Resource
	pods                         []*PodInfo
	imageStates                  map[string]*ImageStateSummary
	usedPorts                    HostPortInfo
	pvcRefCounts                 map[string]int
	podsWithAffinity             []*PodInfo
	podsWithRequiredAntiAffinity []*PodInfo

	// memo remembers plugins' counts of matching pods for the current
	// Generation (package internal/podcount); nil in a NodeInfo built as a
	// literal, which is then counted afresh every time.
	memo *podcount.Memo
	// changes are the last changes that brought the NodeInfo to its
	// Generation, oldest first, when they only added or removed pods
	// (see PodChangesSince), and steps the generations each went from
	// and to; any other change forgets them.
	changes  [maxPodChanges]PodChange
	steps    [maxPodChanges]step
	nchanges int
}

// maxPodChanges is how many of its last changes a NodeInfo remembers.
const maxPodChanges = 3

// PodChange is a pod added to a NodeInfo (Sign 1) or removed from it
// (Sign -1).
type PodChange struct {
	// Pod is the pod added or removed.
	Pod *PodInfo
	// Sign is 1 for a pod added, -1 for one removed.
	Sign int
}

// step is the generations a PodChange took a NodeInfo from and to.
type step struct{ from, to int64 }

// logPodChange records that n went from generation from to its
// Generation by adding or removing pi.
func (n *NodeInfo) logPodChange(from int64, pi *PodInfo, sign int) {
	if from == 0 || n.nchanges > 0 && n.steps[n.nchanges-1].to != from {
		n.forgetChanges()
	}
	if n.nchanges == maxPodChanges {
		copy(n.changes[:], n.changes[1:])
		copy(n.steps[:], n.steps[1:])
		n.nchanges--
	}
	n.changes[n.nchanges] = PodChange{Pod: pi, Sign: sign}
	n.steps[n.nchanges] = step{from: from, to: n.generation}
	n.nchanges++
}

// forgetChanges forgets how n came to its Generation.
func (n *NodeInfo) forgetChanges() {
	n.changes, n.steps, n.nchanges = [maxPodChanges]PodChange{}, [maxPodChanges]step{}, 0
}

// PodChangesSince returns the pods added to n and removed from it since
// its generation since, oldest first, and true, when n knows them (they
// are among its last few changes) and nothing else changed: not its
// node, nor any pod in place. A plugin that counted n at since can then
// bring its counts up to date from these pods alone. It returns false
// otherwise. The slice is n's own, allocated once: it must not be
// modified, and it is valid until n changes.
func (n *NodeInfo) PodChangesSince(since int64) ([]PodChange, bool) {
	k := n.nchanges
	if since == 0 || k == 0 || n.steps[k-1].to != n.generation {
		return nil, false
	}
	for i := k - 1; i >= 0; i-- {
		if n.steps[i].from == since {
			return n.changes[i:k], true
		}
		if i > 0 && n.steps[i-1].to != n.steps[i].from {
			break
		}
	}
	return nil, false
}

// CountMemo returns the memo in which kubesched's plugins remember, for
// n's current Generation, how many of its pods match what they count
// (its type is internal to kubesched); nil for a NodeInfo not made by
// this package's constructors, whose pods are then counted afresh.
func (n *NodeInfo) CountMemo() *podcount.Memo { return n.memo }

var generation atomic.Int64

func nextGeneration() int64 { return generation.Add(1) }

// LatestGeneration returns the Generation most recently given to any
// NodeInfo in the process. While it stays the same, no NodeInfo has been
// built or changed through its methods, so a cache keyed by NodeInfo
// pointers is still valid without looking at the NodeInfos themselves.
func LatestGeneration() int64 { return generation.Load() }

// New returns the NodeInfo of node with pods bound to it. Pods are added as
// given; their spec.nodeName is not checked. A nil node is allowed here (a
// NodeInfo may be built before its node is known) but is rejected by the
// framework when scheduling.
func New(node *v1.Node, pods ...*v1.Pod) *NodeInfo {
	n := &NodeInfo{}
	n.init(node, pods)
	return n
}

func (n *NodeInfo) init(node *v1.Node, pods []*v1.Pod) {
	n.usedPorts = HostPortInfo{}
	n.memo = new(podcount.Memo)
	n.SetNode(node)
	for _, p := range pods {
		n.AddPod(p)
	}
}

// Node returns the node object, or nil if none was set.
func (n *NodeInfo) Node() *v1.Node {
	if n == nil {
		return nil
	}
	return n.node
}

// Generation increases on every change, so that caches can tell a
// NodeInfo has changed since they last looked: one generation names one
// content.
func (n *NodeInfo) Generation() int64 { return n.generation }

// Requested returns the sum of the pods' requests, the NodeInfo's own:
// callers must not modify it.
func (n *NodeInfo) Requested() *Resource { return &n.requested }

// NonZeroRequested returns the sum of the pods' requests with defaults
// for unset cpu and memory, the NodeInfo's own: callers must not modify
// it.
func (n *NodeInfo) NonZeroRequested() *Resource { return &n.nonZeroRequested }

// Allocatable returns the node's allocatable resources, the NodeInfo's
// own: callers must not modify it.
func (n *NodeInfo) Allocatable() *Resource { return &n.allocatable }

// Pods returns the pods bound to the node, in the order added. The
// slice is the NodeInfo's own: callers must not modify it or its
// elements; AddPod and RemovePod change the pods.
func (n *NodeInfo) Pods() []*PodInfo { return n.pods }

// ImageStates maps each image name the node reports to its size and
// spread. Names are as the node reports them, not normalized. The map is
// the NodeInfo's own: callers must not modify it ([NodeInfo.SetImageStates]
// replaces it).
func (n *NodeInfo) ImageStates() map[string]*ImageStateSummary { return n.imageStates }

// UsedPorts returns the host ports the pods bind; callers must not
// modify it.
func (n *NodeInfo) UsedPorts() HostPortInfo { return n.usedPorts }

// PVCRefCounts counts, per "namespace/claim", the pods on the node that
// use a PersistentVolumeClaim; nil when none does. Callers must not
// modify it.
func (n *NodeInfo) PVCRefCounts() map[string]int { return n.pvcRefCounts }

// PodsWithAffinity returns the pods that have pod affinity or
// anti-affinity terms; affinity plugins visit only these. Callers must
// not modify the slice.
func (n *NodeInfo) PodsWithAffinity() []*PodInfo { return n.podsWithAffinity }

// PodsWithRequiredAntiAffinity returns the pods with required
// anti-affinity. Callers must not modify the slice.
func (n *NodeInfo) PodsWithRequiredAntiAffinity() []*PodInfo {
	return n.podsWithRequiredAntiAffinity
}

// Name returns the node's name, or "" if no node is set.
func (n *NodeInfo) Name() string { return n.name }

// Labels returns the node's labels. The map is the node's own: read only.
func (n *NodeInfo) Labels() map[string]string { return n.labels }

// Taints returns the node's taints.
func (n *NodeInfo) Taints() []v1.Taint { return n.taints }

// Unschedulable reports whether the node is cordoned (spec.unschedulable).
func (n *NodeInfo) Unschedulable() bool { return n.unschedulable }

// DeclaredFeatures returns the features the node declares
// (status.declaredFeatures) among those kube-scheduler v1.37.2 knows,
// mapped as kube-scheduler maps them: names it does not know are ignored.
// It is empty, not nil, for a node that declares none, and the zero
// FeatureSet without a node. The set is shared: do not modify it.
func (n *NodeInfo) DeclaredFeatures() ndf.FeatureSet { return n.features }

// noFeatures is the declared features of the many nodes that declare
// none, shared rather than made for each.
var noFeatures = ndf.DefaultFramework.NewFeatureSet()

// SetNode replaces the node object and recomputes what derives from it:
// allocatable and the images present (each counted on one node; [Build]
// fills in cluster-wide spread). The node must not be modified afterwards;
// to change it, call SetNode with the new object, as an informer delivers it.
func (n *NodeInfo) SetNode(node *v1.Node) {
	n.node = node
	n.name, n.labels, n.taints, n.unschedulable = "", nil, nil, false
	n.features = ndf.FeatureSet{}
	n.forgetChanges()
	n.allocatable = Resource{}
	n.imageStates = nil
	if node != nil {
		n.name, n.labels, n.taints, n.unschedulable = node.Name, node.Labels, node.Spec.Taints, node.Spec.Unschedulable
		n.features = noFeatures
		if len(node.Status.DeclaredFeatures) > 0 {
			// As kube-scheduler does, the list is read as given: the API
			// server keeps it sorted.
			n.features = ndf.DefaultFramework.TryMap(node.Status.DeclaredFeatures)
		}
		n.allocatable = NewResource(node.Status.Allocatable)
		n.imageStates = make(map[string]*ImageStateSummary, len(node.Status.Images))
		for _, img := range node.Status.Images {
			for _, name := range img.Names {
				n.imageStates[name] = &ImageStateSummary{Size: img.SizeBytes, NumNodes: 1}
			}
		}
	}
	n.generation = nextGeneration()
}

// AddPod accounts for a pod bound to the node. A nil pod is ignored.
func (n *NodeInfo) AddPod(pod *v1.Pod) {
	if pod == nil {
		return
	}
	n.AddPodInfo(NewPodInfo(pod))
}

// AddPodInfo is [NodeInfo.AddPod] for a pod whose totals are already computed.
func (n *NodeInfo) AddPodInfo(pi *PodInfo) {
	n.pods = append(n.pods, pi)
	facts := pi.factsOf()
	if facts.affinity {
		n.podsWithAffinity = append(n.podsWithAffinity, pi)
	}
	if facts.antiAffinity {
		n.podsWithRequiredAntiAffinity = append(n.podsWithRequiredAntiAffinity, pi)
	}
	n.update(pi, &facts, 1)
}

// RemovePod removes a pod previously added. Pods are matched by UID when
// both have one, otherwise by namespace and name. It returns an error if
// the pod is nil or not on the node.
func (n *NodeInfo) RemovePod(pod *v1.Pod) error {
	if pod == nil {
		return fmt.Errorf("nodeinfo: cannot remove a nil pod")
	}
	var removed *PodInfo
	n.pods, removed = removePod(n.pods, pod)
	if removed == nil {
		return fmt.Errorf("nodeinfo: pod %s/%s is not on node %q", pod.Namespace, pod.Name, n.name)
	}
	facts := removed.factsOf()
	if facts.affinity {
		n.podsWithAffinity, _ = removePod(n.podsWithAffinity, pod)
	}
	if facts.antiAffinity {
		n.podsWithRequiredAntiAffinity, _ = removePod(n.podsWithRequiredAntiAffinity, pod)
	}
	n.update(removed, &facts, -1)
	return nil
}

// Clone returns a copy that can be changed without affecting n. Pod
// objects and image summaries are shared, not copied.
func (n *NodeInfo) Clone() *NodeInfo {
	c := *n
	// The copy's counts start afresh: the two part ways at the first change.
	c.memo = new(podcount.Memo)
	c.pods = append([]*PodInfo(nil), n.pods...)
	c.podsWithAffinity = append([]*PodInfo(nil), n.podsWithAffinity...)
	c.podsWithRequiredAntiAffinity = append([]*PodInfo(nil), n.podsWithRequiredAntiAffinity...)
	c.requested = n.requested.Clone()
	c.nonZeroRequested = n.nonZeroRequested.Clone()
	c.allocatable = n.allocatable.Clone()
	if n.pvcRefCounts != nil {
		c.pvcRefCounts = make(map[string]int, len(n.pvcRefCounts))
		for k, v := range n.pvcRefCounts {
			c.pvcRefCounts[k] = v
		}
	}
	c.usedPorts = make(HostPortInfo, len(n.usedPorts))
	for ip, ports := range n.usedPorts {
		m := make(map[ProtocolPort]struct{}, len(ports))
		for pp := range ports {
			m[pp] = struct{}{}
		}
		c.usedPorts[ip] = m
	}
	return &c
}

func (n *NodeInfo) update(pi *PodInfo, facts *podFacts, sign int64) {
	n.requested.addSigned(&pi.Requests, sign)
	n.nonZeroRequested.MilliCPU += sign * pi.NonZeroCPU
	n.nonZeroRequested.Memory += sign * pi.NonZeroMem
	if n.usedPorts == nil {
		n.usedPorts = HostPortInfo{}
	}
	for _, p := range facts.hostPorts {
		if sign > 0 {
			n.usedPorts.Add(p.HostIP, string(p.Protocol), p.HostPort)
		} else {
			n.usedPorts.Remove(p.HostIP, string(p.Protocol), p.HostPort)
		}
	}
	if facts.claims {
		for _, vol := range pi.Pod.Spec.Volumes {
			if vol.PersistentVolumeClaim == nil {
				continue
			}
			key := pi.Pod.Namespace + "/" + vol.PersistentVolumeClaim.ClaimName
			if n.pvcRefCounts == nil {
				n.pvcRefCounts = map[string]int{}
			}
			n.pvcRefCounts[key] += int(sign)
			if n.pvcRefCounts[key] <= 0 {
				delete(n.pvcRefCounts, key)
			}
		}
	}
	from := n.generation
	n.generation = nextGeneration()
	n.logPodChange(from, pi, int(sign))
}

func samePod(a, b *v1.Pod) bool {
	if a.UID != "" && b.UID != "" {
		return a.UID == b.UID
	}
	return a.Namespace == b.Namespace && a.Name == b.Name
}

func removePod(s []*PodInfo, pod *v1.Pod) ([]*PodInfo, *PodInfo) {
	for i, pi := range s {
		if samePod(pi.Pod, pod) {
			last := len(s) - 1
			s[i] = s[last]
			s[last] = nil
			return s[:last], pi
		}
	}
	return s, nil
}

func hasAffinity(p *v1.Pod) bool {
	a := p.Spec.Affinity
	return a != nil && (a.PodAffinity != nil || a.PodAntiAffinity != nil)
}

func hasRequiredAntiAffinity(p *v1.Pod) bool {
	a := p.Spec.Affinity
	return a != nil && a.PodAntiAffinity != nil && len(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) > 0
}

// Build returns one NodeInfo per node, in input order, with each pod
// attached to the node its spec.nodeName names. Pods naming no given node,
// and nil pods, are ignored. Image spread (how many nodes hold each image)
// is computed across all the nodes, as ImageLocality needs. A nil node
// yields a NodeInfo without a node, which scheduling then reports as an error.
func Build(nodes []*v1.Node, pods []*v1.Pod) []*NodeInfo {
	infos := make([]*NodeInfo, len(nodes))
	// One array for all NodeInfos: a scheduling cycle walks them in order,
	// and adjacent memory lets the CPU prefetch the next node.
	store := make([]NodeInfo, len(nodes))
	byName := make(map[string]*NodeInfo, len(nodes))
	imageNodes := map[string]int{}
	for i, node := range nodes {
		infos[i] = &store[i]
		infos[i].init(node, nil)
		if node == nil {
			continue
		}
		if _, dup := byName[node.Name]; !dup {
			byName[node.Name] = infos[i]
			// ImageStates already holds each name once per node.
			for name := range infos[i].imageStates {
				imageNodes[name]++
			}
		}
	}
	for _, pod := range pods {
		if pod == nil || pod.Spec.NodeName == "" {
			continue
		}
		if ni, ok := byName[pod.Spec.NodeName]; ok {
			ni.AddPod(pod)
		}
	}
	for _, ni := range infos {
		for name, st := range ni.imageStates {
			st.NumNodes = imageNodes[name]
		}
	}
	return infos
}
