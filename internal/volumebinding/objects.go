package volumebinding

import (
	"fmt"
	"slices"
	"strings"
	"sync"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"

	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/internal/nodeaffinity"
	"github.com/kubesched/kubesched/names"
)

// snapshot lists each kind of object at most once per NewClaims and
// indexes it the way kube-scheduler's informers look objects up: claims
// by namespace and name, cluster-scoped objects by their cache key (the
// name, or namespace/name for an object that wrongly has a namespace).
// Where several objects share a key, the first listed wins. A failing
// List gives Error.
type snapshot struct {
	l fwk.Listers

	volumes        map[string]*v1.PersistentVolume
	volumesInOrder []*v1.PersistentVolume
	volumesByClass map[string][]*v1.PersistentVolume
	classes        map[string]*storagev1.StorageClass
	drivers        map[string]*storagev1.CSIDriver
	capacities     []*storagev1.CSIStorageCapacity
	listedCaps     bool
	affinities     map[*v1.PersistentVolume]*lazyAffinity
}

func cacheKey(m *metav1.ObjectMeta) string {
	if m.Namespace == "" {
		return m.Name
	}
	return m.Namespace + "/" + m.Name
}

func listError(err error) *fwk.Status {
	return fwk.AsStatus(err).WithPlugin(names.VolumeBinding)
}

// claimsIn returns the claims of namespace by name.
func (s *snapshot) claimsIn(namespace string) (map[string]*v1.PersistentVolumeClaim, *fwk.Status) {
	out := map[string]*v1.PersistentVolumeClaim{}
	if s.l.PersistentVolumeClaims == nil {
		return out, nil
	}
	all, err := s.l.PersistentVolumeClaims.List(labels.Everything())
	if err != nil {
		return nil, listError(err)
	}
	for _, c := range all {
		if _, dup := out[c.Name]; !dup && c.Namespace == namespace {
			out[c.Name] = c
		}
	}
	return out, nil
}

func (s *snapshot) listVolumes() *fwk.Status {
	if s.volumes != nil {
		return nil
	}
	s.volumes = map[string]*v1.PersistentVolume{}
	s.volumesByClass = map[string][]*v1.PersistentVolume{}
	if s.l.PersistentVolumes == nil {
		return nil
	}
	all, err := s.l.PersistentVolumes.List(labels.Everything())
	if err != nil {
		return listError(err)
	}
	s.volumesInOrder = all
	for _, pv := range all {
		if k := cacheKey(&pv.ObjectMeta); s.volumes[k] == nil {
			s.volumes[k] = pv
		}
	}
	return nil
}

// volume returns the PersistentVolume name, or nil if there is none.
func (s *snapshot) volume(name string) (*v1.PersistentVolume, *fwk.Status) {
	if status := s.listVolumes(); status != nil {
		return nil, status
	}
	return s.volumes[name], nil
}

// volumesOfClass returns the volumes of class, in list order.
func (s *snapshot) volumesOfClass(class string) ([]*v1.PersistentVolume, *fwk.Status) {
	if status := s.listVolumes(); status != nil {
		return nil, status
	}
	if out, ok := s.volumesByClass[class]; ok {
		return out, nil
	}
	var out []*v1.PersistentVolume
	for _, pv := range s.volumesInOrder {
		if volumeClass(pv) == class {
			out = append(out, pv)
		}
	}
	s.volumesByClass[class] = out
	return out, nil
}

// class returns the StorageClass name, or nil if there is none.
func (s *snapshot) class(name string) (*storagev1.StorageClass, *fwk.Status) {
	if s.classes == nil {
		s.classes = map[string]*storagev1.StorageClass{}
		if s.l.StorageClasses != nil {
			all, err := s.l.StorageClasses.List(labels.Everything())
			if err != nil {
				s.classes = nil
				return nil, listError(err)
			}
			for _, sc := range all {
				if k := cacheKey(&sc.ObjectMeta); s.classes[k] == nil {
					s.classes[k] = sc
				}
			}
		}
	}
	return s.classes[name], nil
}

// waitsForConsumer reports whether the claim's class delays binding until
// a pod uses it. A claim without a class, or of a class that does not
// exist, binds immediately; a class without volumeBindingMode is an Error.
func (s *snapshot) waitsForConsumer(c *v1.PersistentVolumeClaim) (bool, *fwk.Status) {
	name := ClaimClass(c)
	if name == "" {
		return false, nil
	}
	class, status := s.class(name)
	if status != nil || class == nil {
		return false, status
	}
	if class.VolumeBindingMode == nil {
		return false, fwk.NewStatus(fwk.Error, fmt.Sprintf("VolumeBindingMode not set for StorageClass %q", name)).WithPlugin(names.VolumeBinding)
	}
	return *class.VolumeBindingMode == storagev1.VolumeBindingWaitForFirstConsumer, nil
}

// provisioning returns what provisioning in class className takes. The
// class exists: only claims of existing WaitForFirstConsumer classes get
// here. CSIDrivers and capacities are read only if some claim of the
// class has a size to check.
func (s *snapshot) provisioning(className string, claims []*v1.PersistentVolumeClaim) (*provisioning, *fwk.Status) {
	sc, status := s.class(className)
	if status != nil {
		return nil, status
	}
	p := &provisioning{
		class:       sc,
		provisioner: sc.Provisioner != "" && sc.Provisioner != noProvisioner,
		anyTopology: len(sc.AllowedTopologies) == 0,
	}
	if !p.provisioner {
		return p, nil
	}
	for i := range sc.AllowedTopologies {
		if sel, ok := topologySelector(&sc.AllowedTopologies[i]); ok {
			p.topologies = append(p.topologies, sel)
		}
	}
	sized := false
	for _, c := range claims {
		if _, ok := c.Spec.Resources.Requests[v1.ResourceStorage]; ok && ClaimClass(c) == className {
			sized = true
		}
	}
	if !sized {
		return p, nil
	}
	driver, status := s.driver(sc.Provisioner)
	if status != nil {
		return nil, status
	}
	// Only CSI drivers that opt in publish capacities.
	if driver == nil || driver.Spec.StorageCapacity == nil || !*driver.Spec.StorageCapacity {
		return p, nil
	}
	p.checkCapacity = true
	all, status := s.allCapacities()
	if status != nil {
		return nil, status
	}
	for _, c := range all {
		if c.StorageClassName == sc.Name {
			p.capacities = append(p.capacities, newCapacity(c))
		}
	}
	return p, nil
}

func (s *snapshot) driver(name string) (*storagev1.CSIDriver, *fwk.Status) {
	if s.drivers == nil {
		s.drivers = map[string]*storagev1.CSIDriver{}
		if s.l.CSIDrivers != nil {
			all, err := s.l.CSIDrivers.List(labels.Everything())
			if err != nil {
				s.drivers = nil
				return nil, listError(err)
			}
			for _, d := range all {
				if k := cacheKey(&d.ObjectMeta); s.drivers[k] == nil {
					s.drivers[k] = d
				}
			}
		}
	}
	return s.drivers[name], nil
}

func (s *snapshot) allCapacities() ([]*storagev1.CSIStorageCapacity, *fwk.Status) {
	if !s.listedCaps && s.l.CSIStorageCapacities != nil {
		all, err := s.l.CSIStorageCapacities.List(labels.Everything())
		if err != nil {
			return nil, listError(err)
		}
		s.capacities, s.listedCaps = all, true
	}
	return s.capacities, nil
}

// migratedPlugins maps each CSINode's name to the in-tree plugins its
// migrated-plugins annotation lists.
func (s *snapshot) migratedPlugins() (map[string][]string, *fwk.Status) {
	out := map[string][]string{}
	if s.l.CSINodes == nil {
		return out, nil
	}
	all, err := s.l.CSINodes.List(labels.Everything())
	if err != nil {
		return nil, listError(err)
	}
	seen := map[string]bool{}
	for _, n := range all {
		k := cacheKey(&n.ObjectMeta)
		if seen[k] {
			continue
		}
		seen[k] = true
		if a := n.Annotations[v1.MigratedPluginsAnnotationKey]; a != "" {
			out[k] = strings.Split(a, ",")
		}
	}
	return out, nil
}

func newCapacity(c *storagev1.CSIStorageCapacity) capacity {
	out := capacity{c: c}
	// maximumVolumeSize, when published, is the more precise limit.
	limit := c.MaximumVolumeSize
	if limit == nil {
		limit = c.Capacity
	}
	if limit != nil {
		out.limit, out.hasLimit = limit.Value(), true
	}
	if c.NodeTopology != nil {
		if sel, err := metav1.LabelSelectorAsSelector(c.NodeTopology); err == nil {
			out.nodes = sel
		}
	}
	return out
}

// topologySelector compiles one allowedTopologies term: every expression
// is a key In values. An empty term, or one that does not parse, matches
// no node.
func topologySelector(t *v1.TopologySelectorTerm) (labels.Selector, bool) {
	if len(t.MatchLabelExpressions) == 0 {
		return nil, false
	}
	sel := labels.NewSelector()
	for _, e := range t.MatchLabelExpressions {
		r, err := labels.NewRequirement(e.Key, selection.In, e.Values)
		if err != nil {
			return nil, false
		}
		sel = sel.Add(*r)
	}
	return sel, true
}

// claimSelector parses the claim's volume selector; nil means any volume.
func claimSelector(c *v1.PersistentVolumeClaim) (labels.Selector, error) {
	if c.Spec.Selector == nil {
		return nil, nil
	}
	return metav1.LabelSelectorAsSelector(c.Spec.Selector)
}

// lazyAffinity is a volume's node affinity, compiled on first use: a
// cluster of local volumes has one or more per node, and Filter visits
// only those of the nodes it filters. Safe for concurrent use.
type lazyAffinity struct {
	once     sync.Once
	affinity *v1.VolumeNodeAffinity
	compiled *nodeaffinity.Selector
}

func (a *lazyAffinity) compile() { a.compiled = compileAffinity(a.affinity) }

// admits reports whether the volume may be used on node.
func (a *lazyAffinity) admits(node *v1.Node) bool {
	a.once.Do(a.compile)
	return a.compiled == nil || a.compiled.Matches(node)
}

// affinityOf returns pv's lazily compiled affinity, one per volume however
// many claims consider it.
func (s *snapshot) affinityOf(pv *v1.PersistentVolume) *lazyAffinity {
	if a, ok := s.affinities[pv]; ok {
		return a
	}
	if s.affinities == nil {
		s.affinities = map[*v1.PersistentVolume]*lazyAffinity{}
	}
	a := &lazyAffinity{affinity: pv.Spec.NodeAffinity}
	s.affinities[pv] = a
	return a
}

// compileAffinity compiles a volume's required node affinity; nil means
// any node.
func compileAffinity(a *v1.VolumeNodeAffinity) *nodeaffinity.Selector {
	if a == nil || a.Required == nil {
		return nil
	}
	return nodeaffinity.NewSelector(a.Required)
}

// candidateList is the volumes a claim could bind on some node: those
// passing every check that does not depend on the node, in list order. A
// volume pre-bound to the claim (its claimRef names it) skips the checks
// of phase, selector and access modes, as in kube-scheduler.
//
// Clusters with local volumes have one or more per node, each pinned to
// its node by hostname: indexing them by host lets a node visit only its
// own and the unpinned ones, in the same order, with the same outcome.
type candidateList struct {
	all []candidate
	// anyHost indexes the candidates not pinned to hosts, and the
	// pre-bound ones, which end the search on whatever node they are met.
	anyHost []int
	// onHost indexes the others by the hostname label values they require.
	onHost map[string][]int
}

func (s *snapshot) newCandidateList(c *v1.PersistentVolumeClaim, request resource.Quantity, selector labels.Selector, volumes []*v1.PersistentVolume) candidateList {
	var out candidateList
	claimVAC := deref(c.Spec.VolumeAttributesClassName)
	for _, pv := range volumes {
		prebound := boundToClaim(pv, c)
		if pv.Spec.ClaimRef != nil && !prebound {
			continue
		}
		size := pv.Spec.Capacity[v1.ResourceStorage]
		if size.Cmp(request) < 0 ||
			volumeMode(c.Spec.VolumeMode) != volumeMode(pv.Spec.VolumeMode) ||
			claimVAC != deref(pv.Spec.VolumeAttributesClassName) ||
			pv.DeletionTimestamp != nil {
			continue
		}
		if !prebound && (pv.Status.Phase != v1.VolumeAvailable ||
			selector != nil && !selector.Matches(labels.Set(pv.Labels)) ||
			!hasAccessModes(pv, c)) {
			continue
		}
		i := len(out.all)
		out.all = append(out.all, candidate{pv: pv, affinity: s.affinityOf(pv), size: size, prebound: prebound})
		hosts := pinnedHosts(pv)
		if prebound || hosts == nil {
			out.anyHost = append(out.anyHost, i)
			continue
		}
		if out.onHost == nil {
			out.onHost = map[string][]int{}
		}
		for _, h := range hosts {
			// A value listed twice must not visit the volume twice.
			if l := out.onHost[h]; len(l) == 0 || l[len(l)-1] != i {
				out.onHost[h] = append(l, i)
			}
		}
	}
	return out
}

// pinnedHosts returns the hostnames a volume's node affinity restricts it
// to when it is one term of one "kubernetes.io/hostname In" expression,
// else nil.
func pinnedHosts(pv *v1.PersistentVolume) []string {
	terms := terms(pv.Spec.NodeAffinity)
	if len(terms) != 1 || len(terms[0].MatchFields) != 0 || len(terms[0].MatchExpressions) != 1 {
		return nil
	}
	e := &terms[0].MatchExpressions[0]
	if e.Key != v1.LabelHostname || e.Operator != v1.NodeSelectorOpIn || len(e.Values) == 0 {
		return nil
	}
	return e.Values
}

// boundToClaim reports whether the volume's claimRef names the claim
// (and its UID, if the reference has one).
func boundToClaim(pv *v1.PersistentVolume, c *v1.PersistentVolumeClaim) bool {
	ref := pv.Spec.ClaimRef
	return ref != nil && ref.Name == c.Name && ref.Namespace == c.Namespace && (ref.UID == "" || ref.UID == c.UID)
}

// volumeMode defaults an unset mode to Filesystem.
func volumeMode(m *v1.PersistentVolumeMode) v1.PersistentVolumeMode {
	if m == nil {
		return v1.PersistentVolumeFilesystem
	}
	return *m
}

// hasAccessModes reports whether the volume offers every access mode the
// claim asks for.
func hasAccessModes(pv *v1.PersistentVolume, c *v1.PersistentVolumeClaim) bool {
	for _, want := range c.Spec.AccessModes {
		if !slices.Contains(pv.Spec.AccessModes, want) {
			return false
		}
	}
	return true
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// ClaimClass returns the claim's storage class name, the beta annotation
// winning over spec.storageClassName, as in Kubernetes. (component-helpers'
// own helper would pull client-go in.)
func ClaimClass(c *v1.PersistentVolumeClaim) string {
	if class, ok := c.Annotations[v1.BetaStorageClassAnnotation]; ok {
		return class
	}
	return deref(c.Spec.StorageClassName)
}

// volumeClass is ClaimClass for a PersistentVolume.
func volumeClass(pv *v1.PersistentVolume) string {
	if class, ok := pv.Annotations[v1.BetaStorageClassAnnotation]; ok {
		return class
	}
	return pv.Spec.StorageClassName
}
