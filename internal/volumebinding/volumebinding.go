// Package volumebinding holds what the VolumeBinding plugins of packages
// filter and score share: sorting out a pod's PersistentVolumeClaims once
// per cycle ([NewClaims]), deciding on each node whether they can all be
// bound or provisioned there ([Claims.Check]), and the optional
// storage-capacity scorer ([Scorer]).
//
// The rules are those of kube-scheduler's VolumeBinding plugin with
// its default feature gates (VolumeAttributesClass on, StorageCapacityScoring
// off). kube-scheduler reads claims and volumes through an assume cache that
// also holds the bindings it has decided but not yet written; kubesched is
// stateless, so that cache is just the listers.
package volumebinding

import (
	"fmt"
	"sort"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/component-helpers/storage/ephemeral"

	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/internal/csimigration"
	"github.com/kubesched/kubesched/internal/nodeaffinity"
	"github.com/kubesched/kubesched/names"
)

// kube-scheduler's reasons, in the order Check reports them.
const (
	ReasonNodeConflict   = "node(s) didn't match PersistentVolume's node affinity"
	ReasonBindConflict   = "node(s) didn't find available persistent volumes to bind"
	ReasonNotEnoughSpace = "node(s) did not have enough free storage"
	ReasonPVNotExist     = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
	// ReasonUnboundImmediate rejects a pod in PreFilter.
	ReasonUnboundImmediate = "pod has unbound immediate PersistentVolumeClaims"
)

// Annotations and the provisioner name kube-scheduler reads.
const (
	annBindCompleted = "pv.kubernetes.io/bind-completed"
	annSelectedNode  = "volume.kubernetes.io/selected-node"
	noProvisioner    = "kubernetes.io/no-provisioner"
)

// Conflicts is the set of reasons a node cannot hold the pod's volumes.
// The zero value means none: the node fits.
type Conflicts uint8

// The conflicts, one bit each.
const (
	// NodeConflict: a bound volume's node affinity excludes the node.
	NodeConflict Conflicts = 1 << iota
	// BindConflict: an unbound claim finds no volume to bind and cannot be
	// provisioned for the node.
	BindConflict
	// NotEnoughSpace: no CSIStorageCapacity reachable from the node has room
	// for a claim to provision.
	NotEnoughSpace
	// PVNotExist: a claim is bound to a volume that does not exist.
	PVNotExist
)

var conflictReasons = [...]string{ReasonNodeConflict, ReasonBindConflict, ReasonNotEnoughSpace, ReasonPVNotExist}

// Reasons returns the reason strings of c in kube-scheduler's order.
func (c Conflicts) Reasons() []string {
	var out []string
	for i, r := range conflictReasons {
		if c&(1<<i) != 0 {
			out = append(out, r)
		}
	}
	return out
}

// conflictStatuses holds, for every set of conflicts, the Filter status
// kube-scheduler returns, so that Filter allocates nothing.
var conflictStatuses = func() (s [1 << len(conflictReasons)]*fwk.Status) {
	for c := 1; c < len(s); c++ {
		s[c] = fwk.NewStatus(fwk.UnschedulableAndUnresolvable, Conflicts(c).Reasons()...).WithPlugin(names.VolumeBinding)
	}
	return s
}()

// Status returns the rejection for c, UnschedulableAndUnresolvable with
// its reasons, or nil for none. The statuses are shared: do not modify.
func (c Conflicts) Status() *fwk.Status { return conflictStatuses[c&(1<<len(conflictReasons)-1)] }

var unboundImmediate = fwk.NewStatus(fwk.UnschedulableAndUnresolvable, ReasonUnboundImmediate).WithPlugin(names.VolumeBinding)

// ClaimsKey is where the VolumeBinding plugins keep a pod's [Claims] for
// the cycle. Both packages use it, so the scorer reuses what the filter's
// PreFilter found.
var ClaimsKey = fwk.NewStateKey[*Claims]()

// ClaimsOf returns the claims in state, or computes them with [NewClaims]
// when no PreFilter or PreScore has stored them.
func ClaimsOf(state *fwk.CycleState, pod *v1.Pod) (*Claims, *fwk.Status) {
	if c, ok := ClaimsKey.Read(state); ok {
		return c, nil
	}
	return NewClaims(state.Listers(), pod)
}

// Claims is a pod's PersistentVolumeClaims sorted out once per cycle, with
// everything [Claims.Check] needs from the cluster objects, so that Check
// lists nothing. It is immutable and safe for concurrent use.
type Claims struct {
	// bound are the fully bound claims' volumes, in the pod's volume order.
	bound []*boundVolume
	// selected are unbound claims a previous scheduling attempt chose a
	// node for (to provision there), in the pod's volume order.
	selected []*unboundClaim
	// toMatch are the other unbound claims, smallest request first: the
	// order in which they pick volumes.
	toMatch []*unboundClaim
	// matchErr is the Error of the first claim in toMatch whose selector
	// does not parse: matching volumes fails on it whatever the node.
	matchErr *fwk.Status
	// migrated maps a node name to the in-tree plugins its CSINode says
	// are migrated to CSI; filled only if a bound volume is of such a kind.
	migrated map[string][]string
}

// boundVolume is the volume of a bound claim; pv nil means it is missing.
type boundVolume struct {
	claim    *v1.PersistentVolumeClaim
	pv       *v1.PersistentVolume
	affinity *nodeaffinity.Selector // nil: any node
	// plugin is the in-tree plugin whose CSI migration rewrites the
	// volume's topology, "" for none; then csiAffinity or csiErr is the
	// volume as seen on nodes that migrated it.
	plugin      string
	csiAffinity *nodeaffinity.Selector
	csiErr      *fwk.Status
}

// unboundClaim is a claim that waits for its first consumer.
type unboundClaim struct {
	claim *v1.PersistentVolumeClaim
	// request is spec.resources.requests.storage (zero if unset).
	request    resource.Quantity
	hasRequest bool
	// candidates are the volumes of the claim's class that pass every
	// check except node affinity and not being taken by another claim.
	candidates candidateList
	// selectorErr is set, instead of candidates, when the claim's selector
	// does not parse.
	selectorErr *fwk.Status
	class       *provisioning
}

// candidate is a volume an unbound claim could bind.
type candidate struct {
	pv       *v1.PersistentVolume
	affinity *lazyAffinity
	size     resource.Quantity
	// prebound: the volume's claimRef names this claim, so it is the
	// claim's only choice when it is reached.
	prebound bool
}

// provisioning is what provisioning a new volume of a StorageClass needs
// from a node.
type provisioning struct {
	class *storagev1.StorageClass
	// provisioner is false for classes without a provisioner or with
	// kubernetes.io/no-provisioner.
	provisioner bool
	// anyTopology: the class has no allowedTopologies; otherwise
	// topologies are its parsable, non-empty terms.
	anyTopology bool
	topologies  []labels.Selector
	// checkCapacity: the provisioner is a CSIDriver with storageCapacity
	// true, so claims with a size need one of capacities.
	checkCapacity bool
	capacities    []capacity
}

// capacity is a CSIStorageCapacity of the class.
type capacity struct {
	c *storagev1.CSIStorageCapacity
	// limit is maximumVolumeSize, else capacity; hasLimit false if neither.
	limit    int64
	hasLimit bool
	// nodes selects the nodes with access; nil for none (no or a broken
	// nodeTopology).
	nodes labels.Selector
}

// NewClaims sorts out the claims of pod, as kube-scheduler's PreFilter
// does, reading cluster objects from l (nil listers hold nothing). It
// returns nil and nil if the pod uses no claim (neither a
// persistentVolumeClaim nor a generic ephemeral volume). It returns, with
// kube-scheduler's messages, UnschedulableAndUnresolvable for a missing
// claim (client-go's NotFound text, or a wait for the ephemeral volume
// controller), a lost claim, a claim being deleted, an ephemeral claim
// the pod does not own, or an unbound claim that should bind immediately
// (its class binds immediately or does not exist, or it names a volume
// without being fully bound); Error for a class without volumeBindingMode
// or a failing lister. Claims are checked in the pod's volume order, as
// kube-scheduler does: first all lookups, then all binding modes.
func NewClaims(l fwk.Listers, pod *v1.Pod) (*Claims, *fwk.Status) {
	// Most pods mount no claim: answer before listing anything.
	if !usesClaims(pod) {
		return nil, nil
	}
	s := &snapshot{l: l}
	claims, status := s.claimsIn(pod.Namespace)
	if status != nil {
		return nil, status
	}
	used := make([]*v1.PersistentVolumeClaim, 0, len(pod.Spec.Volumes))
	for i := range pod.Spec.Volumes {
		name, isEphemeral, ok := claimName(pod, &pod.Spec.Volumes[i])
		if !ok {
			continue
		}
		c := claims[name]
		if msg := claimProblem(pod, name, c, isEphemeral); msg != "" {
			return nil, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, msg).WithPlugin(names.VolumeBinding)
		}
		used = append(used, c)
	}

	out := &Claims{}
	var bound, delayed []*v1.PersistentVolumeClaim
	immediate := false
	for _, c := range used {
		if c.Spec.VolumeName != "" && metav1.HasAnnotation(c.ObjectMeta, annBindCompleted) {
			bound = append(bound, c)
			continue
		}
		delay, status := s.waitsForConsumer(c)
		if status != nil {
			return nil, status
		}
		// A claim naming a volume it is not yet bound to is the PV
		// controller's business, like an immediate one.
		if delay && c.Spec.VolumeName == "" {
			delayed = append(delayed, c)
		} else {
			immediate = true
		}
	}
	if immediate {
		return nil, unboundImmediate
	}
	if status := out.addBound(s, bound); status != nil {
		return nil, status
	}
	if status := out.addUnbound(s, delayed); status != nil {
		return nil, status
	}
	return out, nil
}

// usesClaims reports whether pod has a persistentVolumeClaim or generic
// ephemeral volume.
func usesClaims(pod *v1.Pod) bool {
	for i := range pod.Spec.Volumes {
		if _, _, ok := claimName(pod, &pod.Spec.Volumes[i]); ok {
			return true
		}
	}
	return false
}

// claimName returns the name of the claim volume v uses, and whether it
// is a generic ephemeral volume's; ok is false for other volumes.
func claimName(pod *v1.Pod, v *v1.Volume) (name string, isEphemeral, ok bool) {
	switch {
	case v.PersistentVolumeClaim != nil:
		return v.PersistentVolumeClaim.ClaimName, false, true
	case v.Ephemeral != nil:
		return ephemeral.VolumeClaimName(pod, v), true, true
	}
	return "", false, false
}

// claimProblem returns why pod cannot use claim c (nil: missing) named
// name, in kube-scheduler's words, or "".
func claimProblem(pod *v1.Pod, name string, c *v1.PersistentVolumeClaim, isEphemeral bool) string {
	switch {
	case c == nil && isEphemeral:
		// Normal right after the pod is created: say what to wait for.
		return fmt.Sprintf("waiting for ephemeral volume controller to create the persistentvolumeclaim %q", name)
	case c == nil:
		return apierrors.NewNotFound(v1.Resource("persistentvolumeclaim"), name).Error()
	case c.Status.Phase == v1.ClaimLost:
		return fmt.Sprintf("persistentvolumeclaim %q bound to non-existent persistentvolume %q", c.Name, c.Spec.VolumeName)
	case c.DeletionTimestamp != nil:
		return fmt.Sprintf("persistentvolumeclaim %q is being deleted", c.Name)
	case isEphemeral:
		if err := ephemeral.VolumeIsForPod(pod, c); err != nil {
			return err.Error()
		}
	}
	return ""
}

// addBound looks up the bound claims' volumes and, if one would be
// migrated to CSI, the CSINodes saying where.
func (c *Claims) addBound(s *snapshot, claims []*v1.PersistentVolumeClaim) *fwk.Status {
	if len(claims) == 0 {
		return nil
	}
	needCSINodes := false
	for _, claim := range claims {
		pv, status := s.volume(claim.Spec.VolumeName)
		if status != nil {
			return status
		}
		b := &boundVolume{claim: claim, pv: pv}
		if pv != nil {
			b.affinity = compileAffinity(pv.Spec.NodeAffinity)
			if p := csimigration.ForPV(pv); p != nil && p.Migrated() {
				b.plugin, needCSINodes = p.InTreeName, true
				affinity, err := csiNodeAffinity(pv, p)
				if err != nil {
					b.csiErr = fwk.AsStatus(fmt.Errorf("could not translate pv: %w", err)).WithPlugin(names.VolumeBinding)
				} else {
					b.csiAffinity = compileAffinity(affinity)
				}
			}
		}
		c.bound = append(c.bound, b)
	}
	if needCSINodes {
		var status *fwk.Status
		if c.migrated, status = s.migratedPlugins(); status != nil {
			return status
		}
	}
	return nil
}

// addUnbound prepares matching and provisioning for the claims that wait
// for their first consumer.
func (c *Claims) addUnbound(s *snapshot, claims []*v1.PersistentVolumeClaim) *fwk.Status {
	classes := map[string]*provisioning{}
	for _, claim := range claims {
		className := ClaimClass(claim)
		u := &unboundClaim{claim: claim}
		u.request, u.hasRequest = claim.Spec.Resources.Requests[v1.ResourceStorage]
		class, ok := classes[className]
		if !ok {
			var status *fwk.Status
			if class, status = s.provisioning(className, claims); status != nil {
				return status
			}
			classes[className] = class
		}
		u.class = class
		if _, ok := claim.Annotations[annSelectedNode]; ok {
			c.selected = append(c.selected, u)
			continue
		}
		if selector, err := claimSelector(claim); err != nil {
			u.selectorErr = fwk.AsStatus(fmt.Errorf("error creating internal label selector for claim: %s/%s: %w", claim.Namespace, claim.Name, err)).WithPlugin(names.VolumeBinding)
		} else {
			volumes, status := s.volumesOfClass(className)
			if status != nil {
				return status
			}
			u.candidates = s.newCandidateList(claim, u.request, selector, volumes)
		}
		c.toMatch = append(c.toMatch, u)
	}
	// kube-scheduler sorts with sort.Sort, which is not stable; the same
	// algorithm on the same input gives the same order for equal sizes.
	sort.Sort(bySize(c.toMatch))
	for _, u := range c.toMatch {
		if u.selectorErr != nil {
			c.matchErr = u.selectorErr
			break
		}
	}
	return nil
}

// bySize orders claims by requested storage, smallest first.
type bySize []*unboundClaim

func (s bySize) Len() int           { return len(s) }
func (s bySize) Swap(i, j int)      { s[i], s[j] = s[j], s[i] }
func (s bySize) Less(i, j int) bool { return s[i].request.Cmp(s[j].request) < 0 }
