package filter

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	ndf "k8s.io/component-helpers/nodedeclaredfeatures"

	"github.com/kubesched/kubesched/feature"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/internal/nodeaffinity"
	"github.com/kubesched/kubesched/internal/taints"
	"github.com/kubesched/kubesched/internal/volumebinding"
	"github.com/kubesched/kubesched/nodeinfo"
)

// The plugins that can say more than their reasons, for Framework.Explain.
var (
	_ fwk.FilterExplainer = (*NodeResourcesFit)(nil)
	_ fwk.FilterExplainer = &TaintToleration{}
	_ fwk.FilterExplainer = &NodePorts{}
	_ fwk.FilterExplainer = (*NodeAffinity)(nil)
	_ fwk.FilterExplainer = (*PodTopologySpread)(nil)
	_ fwk.FilterExplainer = (*DynamicResources)(nil)
	_ fwk.FilterExplainer = &VolumeBinding{}
	_ fwk.FilterExplainer = &VolumeZone{}
	_ fwk.FilterExplainer = &NodeVolumeLimits{}
	_ fwk.FilterExplainer = &NodeName{}
	_ fwk.FilterExplainer = &NodeUnschedulable{}
	_ fwk.FilterExplainer = &NodeDeclaredFeatures{}
	_ fwk.FilterExplainer = &VolumeRestrictions{}
)

// ExplainFilter lists each resource ni lacks for pod with the amounts:
// the pod's request, the node's allocatable, and what its pods request.
func (pl *NodeResourcesFit) ExplainFilter(_ context.Context, state *fwk.CycleState, pod *v1.Pod, ni *nodeinfo.NodeInfo) []fwk.Detail {
	st, ok := resourcesFitStateKey.Read(state)
	if !ok {
		var err error
		if st, err = pl.newState(state, pod); err != nil {
			return nil
		}
	}
	var out []fwk.Detail
	for _, m := range st.appendInsufficient(nil, ni) {
		s := fwk.Shortfall{Resource: m.ResourceName, Requested: m.Requested, Allocatable: m.Capacity, Used: m.Used}
		msg := fmt.Sprintf("%s: the pod requests %s, the node has %s allocatable of which its pods request %s: %s short",
			m.ResourceName, s.Format(s.Requested), s.Format(s.Allocatable), s.Format(s.Used), s.Format(s.Missing()))
		if m.Unresolvable {
			msg += "; more than the node's allocatable: no eviction would help"
		}
		out = append(out, fwk.Detail{Message: msg, Shortfall: &s})
	}
	return out
}

// ExplainFilter names each NoSchedule or NoExecute taint of ni that pod
// does not tolerate.
func (pl *TaintToleration) ExplainFilter(_ context.Context, _ *fwk.CycleState, pod *v1.Pod, ni *nodeinfo.NodeInfo) []fwk.Detail {
	var out []fwk.Detail
	nodeTaints := ni.Taints()
	for i := range nodeTaints {
		t := &nodeTaints[i]
		if t.Effect != v1.TaintEffectNoSchedule && t.Effect != v1.TaintEffectNoExecute {
			continue
		}
		if !taints.Tolerated(pod.Spec.Tolerations, t, feature.Of(pl.Features).TaintTolerationComparisonOperators) {
			out = append(out, fwk.Detail{Message: fmt.Sprintf("taint %s is not tolerated", t.ToString())})
		}
	}
	return out
}

// ExplainFilter names each host port of pod already in use on ni, with
// the pods holding it.
func (*NodePorts) ExplainFilter(_ context.Context, _ *fwk.CycleState, pod *v1.Pod, ni *nodeinfo.NodeInfo) []fwk.Detail {
	var out []fwk.Detail
	for _, p := range nodeinfo.HostPorts(pod) {
		if !ni.UsedPorts().CheckConflict(p.HostIP, string(p.Protocol), p.HostPort) {
			continue
		}
		want := nodeinfo.HostPortInfo{}
		want.Add(p.HostIP, string(p.Protocol), p.HostPort)
		var holders []string
		for _, pi := range ni.Pods() {
			for _, q := range nodeinfo.HostPorts(pi.Pod) {
				if want.CheckConflict(q.HostIP, string(q.Protocol), q.HostPort) {
					holders = append(holders, pi.Pod.Namespace+"/"+pi.Pod.Name)
					break
				}
			}
		}
		msg := fmt.Sprintf("host port %s is in use", portString(p))
		if len(holders) > 0 {
			msg += " by " + strings.Join(holders, ", ")
		}
		out = append(out, fwk.Detail{Message: msg})
	}
	return out
}

// portString writes a host port as ip:port/protocol with the API
// server's defaults.
func portString(p v1.ContainerPort) string {
	ip, protocol := p.HostIP, string(p.Protocol)
	if ip == "" {
		ip = nodeinfo.DefaultBindAllHostIP
	}
	if protocol == "" {
		protocol = string(v1.ProtocolTCP)
	}
	return fmt.Sprintf("%s:%d/%s", ip, p.HostPort, protocol)
}

// ExplainFilter names what of pod's node selection ni does not match:
// each nodeSelector label, and for each required term of its node
// affinity the requirements the node fails.
func (pl *NodeAffinity) ExplainFilter(_ context.Context, _ *fwk.CycleState, pod *v1.Pod, ni *nodeinfo.NodeInfo) []fwk.Detail {
	node := ni.Node()
	if node == nil {
		return nil
	}
	var out []fwk.Detail
	if pl.added != nil && !pl.added.Matches(node) {
		out = append(out, fwk.Detail{Message: "the profile's addedAffinity does not match the node"})
	}
	for _, k := range slices.Sorted(maps.Keys(pod.Spec.NodeSelector)) {
		want := pod.Spec.NodeSelector[k]
		if got, ok := node.Labels[k]; !ok || got != want {
			out = append(out, fwk.Detail{Message: fmt.Sprintf("nodeSelector %s=%s: the node has %s", k, want, nodeaffinity.LabelValue(node.Labels, k))})
		}
	}
	a := pod.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return out
	}
	for _, term := range nodeaffinity.Unmet(a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution, node) {
		out = append(out, fwk.Detail{Message: "required node affinity " + term})
	}
	return out
}

// ExplainFilter says which topology label ni lacks, or the skew placing
// pod on it would make, constraint by constraint.
func (pl *PodTopologySpread) ExplainFilter(_ context.Context, state *fwk.CycleState, _ *v1.Pod, ni *nodeinfo.NodeInfo) []fwk.Detail {
	d, ok := spreadDomainsKey.Read(state)
	if !ok {
		return nil
	}
	var out []fwk.Detail
	for _, msg := range d.Explain(ni.Labels()) {
		out = append(out, fwk.Detail{Message: msg})
	}
	return out
}

var _ fwk.FilterExplainer = (*InterPodAffinity)(nil)

// ExplainFilter says which of pod's affinity terms finds no matching pod
// in ni's domain, which of its anti-affinity terms finds some, and how
// many placed pods' anti-affinity rules out ni's domain.
func (pl *InterPodAffinity) ExplainFilter(_ context.Context, state *fwk.CycleState, _ *v1.Pod, ni *nodeinfo.NodeInfo) []fwk.Detail {
	s, ok := interPodAffinityKey.Read(state)
	if !ok {
		return nil
	}
	nodeLabels := ni.Labels()
	var out []fwk.Detail
	add := func(format string, args ...any) {
		out = append(out, fwk.Detail{Message: fmt.Sprintf(format, args...)})
	}
	if !s.satisfiesAffinity(nodeLabels) {
		for i := range s.affinity {
			key := s.affinity[i].TopologyKey
			v, ok := nodeLabels[key]
			switch {
			case !ok:
				add("pod affinity term %d: the node has no %s label", i+1, key)
			case s.affinityCounts.Get(key, v) <= 0:
				add("pod affinity term %d: no pod matching the pod's affinity terms runs in %s=%s", i+1, key, v)
			}
		}
	}
	for i := range s.antiAffinity {
		key := s.antiAffinity[i].TopologyKey
		if v, ok := nodeLabels[key]; ok {
			if n := s.antiAffinityCounts.Get(key, v); n > 0 {
				add("pod anti-affinity term %d: %d matching pod(s) run in %s=%s", i+1, n, key, v)
			}
		}
	}
	var existing []string // by key, which the counts keep in no order
	s.existingAnti.Each(func(key, value string, n int64) {
		if v, ok := nodeLabels[key]; ok && v == value && n > 0 {
			existing = append(existing, fmt.Sprintf("%d running pod(s) in %s=%s have required anti-affinity against this pod", n, key, value))
		}
	})
	slices.Sort(existing)
	for _, msg := range existing {
		out = append(out, fwk.Detail{Message: msg})
	}
	return out
}

// ExplainFilter names the pod's claims that stand in the way on ni: an
// allocated claim the node cannot reach, a claim that cannot be allocated
// there even alone (with its requests), or claims that can each be
// allocated but not together.
func (pl *DynamicResources) ExplainFilter(ctx context.Context, state *fwk.CycleState, pod *v1.Pod, ni *nodeinfo.NodeInfo) []fwk.Detail {
	s, status := pl.state(ctx, state, pod)
	if status != nil {
		return nil
	}
	var out []fwk.Detail
	for _, msg := range pl.plugin().Explain(ctx, s, pod, ni) {
		out = append(out, fwk.Detail{Message: msg})
	}
	return out
}

// ExplainFilter names the pod's claims that stand in the way on ni: a
// bound volume whose node affinity excludes the node (with the terms it
// fails) or that is missing, a claim being provisioned for another node,
// a claim that no free volume matches and its class cannot provision
// there.
func (*VolumeBinding) ExplainFilter(_ context.Context, state *fwk.CycleState, pod *v1.Pod, ni *nodeinfo.NodeInfo) []fwk.Detail {
	claims, status := volumebinding.ClaimsOf(state, pod)
	if status != nil || ni.Node() == nil {
		return nil
	}
	var out []fwk.Detail
	for _, msg := range claims.Explain(ni.Name(), ni.Labels()) {
		out = append(out, fwk.Detail{Message: msg})
	}
	return out
}

// ExplainFilter names each bound volume of the pod whose zone or region
// label ni does not match, with the node's label.
func (*VolumeZone) ExplainFilter(_ context.Context, state *fwk.CycleState, pod *v1.Pod, ni *nodeinfo.NodeInfo) []fwk.Detail {
	if ni.Node() == nil || pod == nil || len(pod.Spec.Volumes) == 0 {
		return nil
	}
	topologies, ok := volumeZoneKey.Read(state)
	if !ok {
		var status *fwk.Status
		if topologies, status = podVolumeTopologies(state.Listers(), pod); status != nil {
			return nil
		}
	}
	nodeLabels := ni.Labels()
	if !slices.ContainsFunc(volumeTopologyLabels[:], func(k string) bool { _, ok := nodeLabels[k]; return ok }) {
		return nil
	}
	var out []fwk.Detail
	for _, t := range topologies {
		v, ok := nodeLabels[t.key]
		key := t.key
		if !ok {
			key = gaTopologyLabel(t.key)
			v, ok = nodeLabels[key]
		}
		if ok && t.values.Has(v) {
			continue
		}
		has := nodeaffinity.LabelValue(nodeLabels, t.key)
		if ok {
			has = key + "=" + v
		}
		out = append(out, fwk.Detail{Message: fmt.Sprintf("volume %s is in %s=%s; the node has %s",
			t.volume, t.key, strings.Join(sets.List(t.values), " or "), has)})
	}
	return out
}

// ExplainFilter says, for each CSI driver whose volume limit the pod's
// volumes would break on ni, the limit, the volumes in use and the
// volumes the pod adds.
func (pl *NodeVolumeLimits) ExplainFilter(_ context.Context, state *fwk.CycleState, pod *v1.Pod, ni *nodeinfo.NodeInfo) []fwk.Detail {
	if ni.Node() == nil {
		return nil
	}
	s, _ := pl.stateOf(state, pod)
	if s == nil {
		return nil
	}
	csiNode := s.objects.csiNodes[ni.Name()]
	own := &s.withoutCSINode
	if csiNode != nil {
		own = &s.withCSINode
	}
	for _, d := range own.requiredDrivers {
		if hasDriver(csiNode, d.name) {
			continue
		}
		where := "the node's CSINode does not list it"
		if csiNode == nil {
			where = "the node has no CSINode"
		}
		return []fwk.Detail{{Message: fmt.Sprintf("the pod's volumes need CSI driver %s, whose CSIDriver sets preventPodSchedulingIfMissing, and %s", d.name, where)}}
	}
	if csiNode == nil || !hasVolumeLimits(csiNode) {
		return nil
	}
	drivers, status := s.tally(s.withCSINode.volumes, csiNode, ni, nil, nil)
	if status != nil {
		return nil
	}
	var out []fwk.Detail
	for _, d := range drivers {
		if d.over() {
			out = append(out, fwk.Detail{Message: fmt.Sprintf("driver %s: the node attaches at most %d volumes, %d are in use and the pod adds %d", d.driver, d.limit, d.inUse, d.added)})
		}
	}
	return out
}

// ExplainFilter names the node the pod asks for.
func (*NodeName) ExplainFilter(_ context.Context, _ *fwk.CycleState, pod *v1.Pod, ni *nodeinfo.NodeInfo) []fwk.Detail {
	if pod == nil || ni.Node() == nil || pod.Spec.NodeName == "" || pod.Spec.NodeName == ni.Name() {
		return nil
	}
	return []fwk.Detail{{Message: fmt.Sprintf("the pod's spec.nodeName is %s", pod.Spec.NodeName)}}
}

// ExplainFilter says the node is cordoned and which toleration would
// admit the pod.
func (pl *NodeUnschedulable) ExplainFilter(_ context.Context, _ *fwk.CycleState, pod *v1.Pod, ni *nodeinfo.NodeInfo) []fwk.Detail {
	if pod == nil || ni.Node() == nil || !ni.Unschedulable() || taints.Tolerated(pod.Spec.Tolerations, &unschedulableTaint, feature.Of(pl.Features).TaintTolerationComparisonOperators) {
		return nil
	}
	return []fwk.Detail{{Message: fmt.Sprintf("the node is cordoned (spec.unschedulable) and the pod does not tolerate %s", unschedulableTaint.ToString())}}
}

// ExplainFilter names the features the pod needs that ni does not
// declare in status.declaredFeatures.
func (*NodeDeclaredFeatures) ExplainFilter(_ context.Context, state *fwk.CycleState, _ *v1.Pod, ni *nodeinfo.NodeInfo) []fwk.Detail {
	reqs, ok := declaredFeaturesKey.Read(state)
	if !ok || ni.Node() == nil {
		return nil
	}
	m, err := ndf.DefaultFramework.MatchNodeFeatureSet(reqs, ni.DeclaredFeatures())
	if err != nil || m.IsMatch {
		return nil
	}
	return []fwk.Detail{{Message: fmt.Sprintf("the node does not declare %s, which the pod needs", strings.Join(m.UnsatisfiedRequirements, ", "))}}
}

// ExplainFilter names the volume of the pod that clashes with a volume of
// a pod on ni, and the pod; or each ReadWriteOncePod claim of the pod
// that a pod already uses, and where.
func (*VolumeRestrictions) ExplainFilter(_ context.Context, state *fwk.CycleState, pod *v1.Pod, ni *nodeinfo.NodeInfo) []fwk.Detail {
	if pod == nil || ni.Node() == nil {
		return nil
	}
	var out []fwk.Detail
	for v, holder := range diskConflicts(pod, ni) {
		out = append(out, fwk.Detail{Message: fmt.Sprintf("volume %s (%s) is mounted by pod %s/%s on the node, and not read-only on both sides", v.Name, diskOf(v), holder.Namespace, holder.Name)})
	}
	if len(out) > 0 {
		return out
	}
	s, status := restrictionsStateOf(state, pod)
	if status != nil {
		return nil
	}
	if s.inUse == 0 {
		return nil
	}
	for _, name := range sets.List(s.rwopClaims) {
		key := pod.Namespace + "/" + name
		for _, other := range state.AllNodes() {
			if other == nil || other.PVCRefCounts()[key] == 0 {
				continue
			}
			holder := "a pod"
			for _, pi := range other.Pods() {
				if usesClaim(pi.Pod, pod.Namespace, name) {
					holder = fmt.Sprintf("pod %s/%s", pi.Pod.Namespace, pi.Pod.Name)
					break
				}
			}
			out = append(out, fwk.Detail{Message: fmt.Sprintf("claim %s is ReadWriteOncePod and %s on node %s uses it", key, holder, other.Name())})
			break
		}
	}
	if len(out) == 0 {
		out = append(out, fwk.Detail{Message: "a ReadWriteOncePod claim of the pod is used by a pod nominated to a node"})
	}
	return out
}

// diskOf names the disk a conflicting volume mounts.
func diskOf(v *v1.Volume) string {
	switch {
	case v.GCEPersistentDisk != nil:
		return "GCE persistent disk " + v.GCEPersistentDisk.PDName
	case v.AWSElasticBlockStore != nil:
		return "AWS EBS volume " + v.AWSElasticBlockStore.VolumeID
	case v.ISCSI != nil:
		return "iSCSI " + v.ISCSI.IQN
	case v.RBD != nil:
		return "RBD image " + v.RBD.RBDPool + "/" + v.RBD.RBDImage
	}
	return "disk"
}

// usesClaim reports whether p mounts the claim namespace/name.
func usesClaim(p *v1.Pod, namespace, name string) bool {
	if p.Namespace != namespace {
		return false
	}
	for i := range p.Spec.Volumes {
		if c := p.Spec.Volumes[i].PersistentVolumeClaim; c != nil && c.ClaimName == name {
			return true
		}
	}
	return false
}
