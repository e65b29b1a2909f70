package loader

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/rand"

	"github.com/kubesched/kubesched/internal/nodeaffinity"
	"github.com/kubesched/kubesched/internal/taints"
)

// MaxExpandedPods is the most pods [Cluster.ExpandWorkloads] creates in
// one call, all workloads together: a bound on the memory a mistyped
// replica count can take.
const MaxExpandedPods = 100_000

// ExpandReport says what [Cluster.ExpandWorkloads] created.
type ExpandReport struct {
	// Workloads are the workloads that pods were created for, in the
	// order they were expanded.
	Workloads []ExpandedWorkload
	// ResourceClaims are the claims created from ResourceClaimTemplates
	// for pending pods, as namespace/name, in pod order.
	ResourceClaims []string
}

// ExpandedWorkload is what was created for one workload.
type ExpandedWorkload struct {
	// Kind, Namespace and Name name the workload, such as Deployment
	// default/web.
	Kind, Namespace, Name string
	// Pods are the names of the pods created, in the workload's
	// namespace, in the order they were appended to Cluster.Pods.
	Pods []string
	// PersistentVolumeClaims are the names of the claims created for a
	// StatefulSet's pods, in the workload's namespace.
	PersistentVolumeClaims []string
}

// Pods is the number of pods created for all workloads.
func (r ExpandReport) Pods() int {
	n := 0
	for _, w := range r.Workloads {
		n += len(w.Pods)
	}
	return n
}

// String is the report in one line, for people: "created 20 pods for 2
// workloads as their controllers would: Deployment default/web 17,
// StatefulSet default/db 3 (3 PVCs)", naming ten workloads at most; ""
// when nothing was created.
func (r ExpandReport) String() string {
	if len(r.Workloads) == 0 {
		if len(r.ResourceClaims) > 0 {
			return "created " + r.claims()
		}
		return ""
	}
	const named = 10
	var b strings.Builder
	fmt.Fprintf(&b, "created %s for %s as their controllers would: ",
		plural(r.Pods(), "pod", "pods"), plural(len(r.Workloads), "workload", "workloads"))
	for i, w := range r.Workloads {
		if i == named {
			fmt.Fprintf(&b, " and %d more", len(r.Workloads)-named)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %s/%s %d", w.Kind, w.Namespace, w.Name, len(w.Pods))
		if n := len(w.PersistentVolumeClaims); n > 0 {
			fmt.Fprintf(&b, " (%s)", plural(n, "PVC", "PVCs"))
		}
	}
	if len(r.ResourceClaims) > 0 {
		b.WriteString("; " + r.claims())
	}
	return b.String()
}

// claims says what ResourceClaims were created.
func (r ExpandReport) claims() string {
	return plural(len(r.ResourceClaims), "ResourceClaim", "ResourceClaims") + " from templates, as the resource claim controller would"
}

// ExpandWorkloads creates the pods that c's workloads' controllers
// would create and c lacks, as those controllers would, and appends
// them to c.Pods, pending; with them, the ReplicaSets of Deployments
// and the PersistentVolumeClaims of StatefulSets, appended to
// c.Objects. Then every pending pod whose claims name a template of c
// and no claim gets the ResourceClaims the resource claim controller
// would create, appended to c.Objects. The workloads are the Deployments, DaemonSets and Jobs of
// c.Workloads and the ReplicaSets, ReplicationControllers and
// StatefulSets of c.Objects; the package documentation says how each is
// expanded.
//
// A workload gets only what it lacks: its pods already in c (those
// whose controller reference names it, and orphans its selector
// matches in its namespace) count, so that a dump of a live cluster
// gains nothing and expanding twice creates nothing the second time.
// What is created is deterministic: the same input gives the same
// names. The pods get what the API server would set on them (see
// [Cluster.Default]); a workload without a namespace gives its pods
// none, so call Default first.
//
// The error names the workload and what is wrong with it: a negative
// count, a ReplicationController without a template, more than
// [MaxExpandedPods] pods in all. On error, c is unchanged.
// ExpandWorkloads must not run concurrently with anything else reading
// c.
func (c *Cluster) ExpandWorkloads() (ExpandReport, error) {
	ws := c.workloads()
	x := newExpander(c)
	x.assign(ws)
	for _, w := range ws {
		created := ExpandedWorkload{Kind: w.kind, Namespace: w.meta.GetNamespace(), Name: w.meta.GetName()}
		x.out = &created
		if err := x.expand(w); err != nil {
			return ExpandReport{}, fmt.Errorf("%s %s/%s: %w", w.kind, created.Namespace, created.Name, err)
		}
		if len(created.Pods) > 0 || len(created.PersistentVolumeClaims) > 0 {
			x.report.Workloads = append(x.report.Workloads, created)
		}
	}
	c.Pods = append(c.Pods, x.pods...)
	c.Objects = append(c.Objects, x.objects...)
	for _, claim := range x.claimsFromTemplates() {
		c.Objects = append(c.Objects, claim)
		x.report.ResourceClaims = append(x.report.ResourceClaims, claim.Namespace+"/"+claim.Name)
	}
	return x.report, nil
}

// workload is one controller of pods.
type workload struct {
	obj  runtime.Object
	meta metav1.Object
	kind string
	uid  types.UID
	// selector adopts orphans; nil adopts none.
	selector labels.Selector
	// active are its pods neither terminated nor being deleted, and
	// succeeded those that succeeded, in input order.
	active, succeeded []*v1.Pod
}

// owner is what a controller reference may name: a workload, or a
// ReplicaSet of a Deployment, which stands for the Deployment.
type owner struct {
	w   *workload
	uid types.UID
}

type ownerKey struct{ kind, namespace, name string }

// workloads returns c's workloads in the order they are expanded:
// Deployments first, so that their ReplicaSets are known as theirs,
// then ReplicaSets, ReplicationControllers, StatefulSets, DaemonSets
// and Jobs, each kind in input order. ReplicaSets a Deployment of c
// controls are not workloads of their own, nor is an object of the
// kind, namespace and name of one before it, which would stand for the
// same.
func (c *Cluster) workloads() []*workload {
	var ws []*workload
	seen := map[ownerKey]bool{}
	add := func(obj runtime.Object, kind string, sel *metav1.LabelSelector) *workload {
		m := obj.(metav1.Object)
		key := ownerKey{kind, m.GetNamespace(), m.GetName()}
		if seen[key] {
			return &workload{} // expanded by no one
		}
		seen[key] = true
		w := &workload{obj: obj, meta: m, kind: kind, uid: uidOf(kind, m)}
		if sel != nil {
			if s, err := metav1.LabelSelectorAsSelector(sel); err == nil && !s.Empty() {
				w.selector = s
			}
		}
		ws = append(ws, w)
		return w
	}
	for _, o := range c.Workloads {
		if d, ok := o.(*appsv1.Deployment); ok && d != nil {
			add(d, "Deployment", d.Spec.Selector)
		}
	}
	deployments := slices.Clone(ws)
	for _, o := range c.Objects {
		if rs, ok := o.(*appsv1.ReplicaSet); ok && rs != nil && controllerIn(rs, "Deployment", deployments) == nil {
			add(rs, "ReplicaSet", rs.Spec.Selector)
		}
	}
	for _, o := range c.Objects {
		if rc, ok := o.(*v1.ReplicationController); ok && rc != nil {
			sel := rc.Spec.Selector
			if len(sel) == 0 && rc.Spec.Template != nil {
				sel = rc.Spec.Template.Labels
			}
			add(rc, "ReplicationController", &metav1.LabelSelector{MatchLabels: sel})
		}
	}
	for _, o := range c.Objects {
		if s, ok := o.(*appsv1.StatefulSet); ok && s != nil {
			add(s, "StatefulSet", s.Spec.Selector)
		}
	}
	for _, o := range c.Workloads {
		if ds, ok := o.(*appsv1.DaemonSet); ok && ds != nil {
			add(ds, "DaemonSet", ds.Spec.Selector)
		}
	}
	for _, o := range c.Workloads {
		if j, ok := o.(*batchv1.Job); ok && j != nil {
			w := add(j, "Job", j.Spec.Selector)
			if j.Spec.Selector == nil && !manualSelector(j) {
				// The selector the API server generates.
				w.selector = labels.SelectorFromSet(labels.Set{batchv1.ControllerUidLabel: string(w.uid)})
			}
		}
	}
	return ws
}

func manualSelector(j *batchv1.Job) bool {
	return j.Spec.ManualSelector != nil && *j.Spec.ManualSelector
}

// uidOf returns m's UID, or for an object without one, one made up of
// its kind, namespace and name, for its children's references to it.
func uidOf(kind string, m metav1.Object) types.UID {
	if uid := m.GetUID(); uid != "" {
		return uid
	}
	return madeUpUID(kind, m.GetNamespace(), m.GetName())
}

// madeUpUID is a UID that is the same for the same kind, namespace and
// name, written as UIDs are.
func madeUpUID(kind, namespace, name string) types.UID {
	h := fnv.New128a()
	h.Write([]byte(kind + "\x00" + namespace + "\x00" + name))
	b := h.Sum(nil)
	return types.UID(fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16]))
}

// controllerIn returns the workload of ws of that kind that controls o,
// or nil.
func controllerIn(o metav1.Object, kind string, ws []*workload) *workload {
	ref := metav1.GetControllerOfNoCopy(o)
	if ref == nil || ref.Kind != kind {
		return nil
	}
	for _, w := range ws {
		if w.meta.GetName() == ref.Name && w.meta.GetNamespace() == o.GetNamespace() && (ref.UID == "" || ref.UID == w.uid) {
			return w
		}
	}
	return nil
}

// expander creates the objects workloads lack.
type expander struct {
	c *Cluster
	d *defaulter
	// owners are the objects controller references may name.
	owners map[ownerKey]owner
	// byNamespace are the workloads that may adopt orphans, by
	// namespace, in order.
	byNamespace map[string][]*workload
	// names are the names taken, read or created.
	names *names
	// replicaSets are the ReplicaSets read, in order.
	replicaSets []*appsv1.ReplicaSet
	// pods and objects are what was created, out what was created for
	// the workload being expanded.
	pods    []*v1.Pod
	objects []runtime.Object
	out     *ExpandedWorkload
	report  ExpandReport
}

func newExpander(c *Cluster) *expander {
	x := &expander{
		c: c,
		// Namespaces are the workloads', given or not.
		d:           newDefaulter(c, ""),
		owners:      map[ownerKey]owner{},
		byNamespace: map[string][]*workload{},
		names:       newNames(c),
	}
	for _, o := range c.Objects {
		if rs, ok := o.(*appsv1.ReplicaSet); ok && rs != nil {
			x.replicaSets = append(x.replicaSets, rs)
		}
	}
	return x
}

// assign gives each workload its pods: those whose controller
// reference names it (or names a ReplicaSet of it, for a Deployment),
// then orphans that its selector matches in its namespace, and for a
// Deployment also the pods of ReplicaSets the input lacks named after
// it.
func (x *expander) assign(ws []*workload) {
	for _, w := range ws {
		ns := w.meta.GetNamespace()
		x.owners[ownerKey{w.kind, ns, w.meta.GetName()}] = owner{w, w.uid}
		if w.selector != nil {
			x.byNamespace[ns] = append(x.byNamespace[ns], w)
		}
	}
	deployments := slices.DeleteFunc(slices.Clone(ws), func(w *workload) bool { return w.kind != "Deployment" })
	for _, rs := range x.replicaSets {
		if d := controllerIn(rs, "Deployment", deployments); d != nil {
			x.owners[ownerKey{"ReplicaSet", rs.Namespace, rs.Name}] = owner{d, uidOf("ReplicaSet", rs)}
		}
	}
	for _, p := range x.c.Pods {
		if p == nil || p.DeletionTimestamp != nil {
			continue
		}
		w := x.ownerOf(p)
		if w == nil {
			continue
		}
		switch p.Status.Phase {
		case v1.PodSucceeded:
			w.succeeded = append(w.succeeded, p)
		case v1.PodFailed:
		default:
			w.active = append(w.active, p)
		}
	}
}

// ownerOf returns the workload p belongs to, or nil.
func (x *expander) ownerOf(p *v1.Pod) *workload {
	ref := metav1.GetControllerOfNoCopy(p)
	if ref != nil {
		if o, ok := x.owners[ownerKey{ref.Kind, p.Namespace, ref.Name}]; ok && (ref.UID == "" || ref.UID == o.uid) {
			return o.w
		}
	}
	for _, w := range x.byNamespace[p.Namespace] {
		adoptable := ref == nil ||
			w.kind == "Deployment" && ref.Kind == "ReplicaSet" && strings.HasPrefix(ref.Name, w.meta.GetName()+"-")
		if adoptable && w.selector.Matches(labels.Set(p.Labels)) {
			return w
		}
	}
	return nil
}

// expand creates what w lacks.
func (x *expander) expand(w *workload) error {
	switch o := w.obj.(type) {
	case *appsv1.Deployment:
		return x.deployment(w, o)
	case *appsv1.ReplicaSet:
		return x.replicated(w, o.Spec.Replicas, &o.Spec.Template, appsv1.SchemeGroupVersion.String())
	case *v1.ReplicationController:
		return x.replicated(w, o.Spec.Replicas, o.Spec.Template, "v1")
	case *appsv1.StatefulSet:
		return x.statefulSet(w, o)
	case *appsv1.DaemonSet:
		return x.daemonSet(w, o)
	case *batchv1.Job:
		return x.job(w, o)
	}
	return nil
}

// reserve checks that n pods more may be created: no more than
// MaxExpandedPods in all.
func (x *expander) reserve(n int64) error {
	before := int64(len(x.pods))
	if before+n <= MaxExpandedPods {
		return nil
	}
	if before > 0 {
		return fmt.Errorf("%d pods to create after %d for other workloads, more than MaxExpandedPods (%d) in all", n, before, MaxExpandedPods)
	}
	return fmt.Errorf("%d pods to create, more than MaxExpandedPods (%d)", n, MaxExpandedPods)
}

// missing is how many pods a workload of replicas (nil: 1) lacks.
func missing(w *workload, replicas *int32) (int64, error) {
	want := int64(1)
	if replicas != nil {
		want = int64(*replicas)
	}
	if want < 0 {
		return 0, fmt.Errorf("spec.replicas %d is negative", want)
	}
	return max(want-int64(len(w.active)), 0), nil
}

// replicated expands a ReplicaSet or ReplicationController: the pods
// its replicas lack, named after it, of its template.
func (x *expander) replicated(w *workload, replicas *int32, template *v1.PodTemplateSpec, apiVersion string) error {
	n, err := missing(w, replicas)
	if err != nil || n == 0 {
		return err
	}
	if template == nil {
		return fmt.Errorf("spec.template is missing")
	}
	if err := x.reserve(n); err != nil {
		return err
	}
	ref := controllerRef(apiVersion, w.kind, w.meta.GetName(), w.uid)
	for range n {
		x.addPod(newPod(template, w.meta.GetNamespace(), ref), x.names.generate("Pod", w.meta.GetNamespace(), w.meta.GetName()+"-"))
	}
	return nil
}

// deployment expands a Deployment through its ReplicaSet for its
// current template: the one of the input it controls with that template,
// else one created, named <deployment>-<pod-template-hash>.
func (x *expander) deployment(w *workload, d *appsv1.Deployment) error {
	n, err := missing(w, d.Spec.Replicas)
	if err != nil || n == 0 {
		return err
	}
	if err := x.reserve(n); err != nil {
		return err
	}
	rs := x.currentReplicaSet(w, d)
	if rs == nil {
		// A name taken by another ReplicaSet is a collision, which the
		// controller counts in the hash until the name is free.
		collisions := d.Status.CollisionCount
		hash := templateHash(&d.Spec.Template, collisions)
		for x.replicaSetNamed(d.Namespace, replicaSetName(d.Name, hash)) {
			n := int32(1)
			if collisions != nil {
				n = *collisions + 1
			}
			collisions = &n
			hash = templateHash(&d.Spec.Template, collisions)
		}
		template := d.Spec.Template.DeepCopy()
		template.Labels = withLabel(template.Labels, appsv1.DefaultDeploymentUniqueLabelKey, hash)
		selector := d.Spec.Selector.DeepCopy()
		if selector == nil {
			selector = &metav1.LabelSelector{}
		}
		selector.MatchLabels = withLabel(selector.MatchLabels, appsv1.DefaultDeploymentUniqueLabelKey, hash)
		replicas := int32(1)
		if d.Spec.Replicas != nil {
			replicas = *d.Spec.Replicas
		}
		name := replicaSetName(d.Name, hash)
		rs = &appsv1.ReplicaSet{
			TypeMeta: metav1.TypeMeta{APIVersion: appsv1.SchemeGroupVersion.String(), Kind: "ReplicaSet"},
			ObjectMeta: metav1.ObjectMeta{
				Name:            name,
				Namespace:       d.Namespace,
				UID:             madeUpUID("ReplicaSet", d.Namespace, name),
				Labels:          maps.Clone(template.Labels),
				OwnerReferences: []metav1.OwnerReference{controllerRef(appsv1.SchemeGroupVersion.String(), "Deployment", d.Name, w.uid)},
			},
			Spec: appsv1.ReplicaSetSpec{
				Replicas:        &replicas,
				MinReadySeconds: d.Spec.MinReadySeconds,
				Selector:        selector,
				Template:        *template,
			},
		}
		x.objects = append(x.objects, rs)
	}
	ref := controllerRef(appsv1.SchemeGroupVersion.String(), "ReplicaSet", rs.Name, uidOf("ReplicaSet", rs))
	for range n {
		x.addPod(newPod(&rs.Spec.Template, d.Namespace, ref), x.names.generate("Pod", d.Namespace, rs.Name+"-"))
	}
	return nil
}

// currentReplicaSet returns the oldest ReplicaSet of the input that d
// controls whose template is d's but for the pod-template-hash label,
// as the deployment controller finds its new ReplicaSet; nil for none.
func (x *expander) currentReplicaSet(w *workload, d *appsv1.Deployment) *appsv1.ReplicaSet {
	var found *appsv1.ReplicaSet
	for _, rs := range x.replicaSets {
		if controllerIn(rs, "Deployment", []*workload{w}) == nil || !sameTemplate(&rs.Spec.Template, &d.Spec.Template) {
			continue
		}
		if found == nil || rs.CreationTimestamp.Before(&found.CreationTimestamp) {
			found = rs
		}
	}
	return found
}

// replicaSetNamed says whether the input has a ReplicaSet of that
// namespace and name.
func (x *expander) replicaSetNamed(namespace, name string) bool {
	return slices.ContainsFunc(x.replicaSets, func(rs *appsv1.ReplicaSet) bool {
		return rs.Namespace == namespace && rs.Name == name
	})
}

// sameTemplate says whether a and b are equal but for the
// pod-template-hash label.
func sameTemplate(a, b *v1.PodTemplateSpec) bool {
	a, b = a.DeepCopy(), b.DeepCopy()
	for _, t := range []*v1.PodTemplateSpec{a, b} {
		delete(t.Labels, appsv1.DefaultDeploymentUniqueLabelKey)
		if len(t.Labels) == 0 {
			t.Labels = nil
		}
	}
	return equality.Semantic.DeepEqual(a, b)
}

// templateHash is a pod template's hash, in the form the deployment and
// DaemonSet controllers give it (digits of a 32-bit FNV-1a hash, spelt
// in the letters of generated names), of the template's JSON and the
// collision count. The controllers hash another printing of the
// template, so the hash is not theirs.
func templateHash(t *v1.PodTemplateSpec, collisionCount *int32) string {
	h := fnv.New32a()
	// Neither encoding these types nor writing to a hash fails.
	_ = json.NewEncoder(h).Encode(t)
	if collisionCount != nil {
		var b [8]byte
		binary.LittleEndian.PutUint32(b[:], uint32(*collisionCount))
		h.Write(b[:])
	}
	return rand.SafeEncodeString(strconv.FormatUint(uint64(h.Sum32()), 10))
}

// replicaSetName is <deployment>-<hash>, the deployment's name cut to
// keep the whole a valid name.
func replicaSetName(deployment, hash string) string {
	const maxName = 253 // a DNS subdomain
	if limit := maxName - 1 - len(hash); len(deployment) > limit {
		deployment = deployment[:limit]
	}
	return deployment + "-" + hash
}

// statefulSet expands a StatefulSet: the pods <name>-<ordinal> of its
// ordinals that the input has no pod of, each with the
// PersistentVolumeClaims <template>-<name>-<ordinal> of its
// volumeClaimTemplates that the input lacks.
func (x *expander) statefulSet(w *workload, s *appsv1.StatefulSet) error {
	replicas := int64(1)
	if s.Spec.Replicas != nil {
		replicas = int64(*s.Spec.Replicas)
	}
	start := int64(0)
	if s.Spec.Ordinals != nil {
		start = int64(s.Spec.Ordinals.Start)
	}
	switch {
	case replicas < 0:
		return fmt.Errorf("spec.replicas %d is negative", replicas)
	case start < 0:
		return fmt.Errorf("spec.ordinals.start %d is negative", start)
	}
	// Count the ordinals taken first: replicas may be huge.
	taken := map[int64]bool{}
	for _, p := range x.c.Pods {
		if p == nil || p.Namespace != s.Namespace {
			continue
		}
		rest, ok := strings.CutPrefix(p.Name, s.Name+"-")
		if i, err := strconv.ParseInt(rest, 10, 64); ok && err == nil && i >= start && i < start+replicas && strconv.FormatInt(i, 10) == rest {
			taken[i] = true
		}
	}
	if err := x.reserve(replicas - int64(len(taken))); err != nil {
		return err
	}
	ref := controllerRef(appsv1.SchemeGroupVersion.String(), "StatefulSet", s.Name, w.uid)
	for ordinal := start; ordinal < start+replicas; ordinal++ {
		name := s.Name + "-" + strconv.FormatInt(ordinal, 10)
		if x.names.taken("Pod", s.Namespace, name) {
			continue
		}
		p := newPod(&s.Spec.Template, s.Namespace, ref)
		p.Labels = withLabel(p.Labels, appsv1.StatefulSetPodNameLabel, name)
		p.Labels[appsv1.PodIndexLabel] = strconv.FormatInt(ordinal, 10)
		p.Spec.Hostname = name
		p.Spec.Subdomain = s.Spec.ServiceName
		// The claims' volumes first, in the templates' order; then the
		// template's other volumes.
		volumes := make([]v1.Volume, 0, len(s.Spec.VolumeClaimTemplates)+len(p.Spec.Volumes))
		for i := range s.Spec.VolumeClaimTemplates {
			t := &s.Spec.VolumeClaimTemplates[i]
			claim := t.Name + "-" + name
			volumes = append(volumes, v1.Volume{Name: t.Name, VolumeSource: v1.VolumeSource{
				PersistentVolumeClaim: &v1.PersistentVolumeClaimVolumeSource{ClaimName: claim},
			}})
			x.addClaim(s, t, claim)
		}
		for _, v := range p.Spec.Volumes {
			if !slices.ContainsFunc(s.Spec.VolumeClaimTemplates, func(t v1.PersistentVolumeClaim) bool { return t.Name == v.Name }) {
				volumes = append(volumes, v)
			}
		}
		p.Spec.Volumes = volumes
		x.addPod(p, name)
	}
	return nil
}

// addClaim creates the claim name of template t for a pod of s, unless
// the input has it.
func (x *expander) addClaim(s *appsv1.StatefulSet, t *v1.PersistentVolumeClaim, name string) {
	if !x.names.take("PersistentVolumeClaim", s.Namespace, name) {
		return
	}
	c := &v1.PersistentVolumeClaim{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
		ObjectMeta: metav1.ObjectMeta{
			Name:        name,
			Namespace:   s.Namespace,
			UID:         madeUpUID("PersistentVolumeClaim", s.Namespace, name),
			Labels:      maps.Clone(t.Labels),
			Annotations: maps.Clone(t.Annotations),
		},
		Spec: *t.Spec.DeepCopy(),
	}
	if s.Spec.Selector != nil {
		for k, v := range s.Spec.Selector.MatchLabels {
			c.Labels = withLabel(c.Labels, k, v)
		}
	}
	x.d.claim(c)
	x.objects = append(x.objects, c)
	x.out.PersistentVolumeClaims = append(x.out.PersistentVolumeClaims, name)
}

// daemonToleration are the tolerations the DaemonSet controller gives
// its pods, so that node problems neither keep them off nor evict them;
// network-unavailable only to pods on the host's network.
var daemonTolerations = []v1.Toleration{
	{Key: v1.TaintNodeNotReady, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute},
	{Key: v1.TaintNodeUnreachable, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoExecute},
	{Key: v1.TaintNodeDiskPressure, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule},
	{Key: v1.TaintNodeMemoryPressure, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule},
	{Key: v1.TaintNodePIDPressure, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule},
	{Key: v1.TaintNodeUnschedulable, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule},
	{Key: v1.TaintNodeNetworkUnavailable, Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule},
}

// withDaemonTolerations adds the DaemonSet controller's tolerations to
// spec, each replacing one of the same key, operator, value and effect.
func withDaemonTolerations(spec *v1.PodSpec) {
	for _, t := range daemonTolerations {
		if t.Key == v1.TaintNodeNetworkUnavailable && !spec.HostNetwork {
			continue
		}
		i := slices.IndexFunc(spec.Tolerations, func(old v1.Toleration) bool { return t.MatchToleration(&old) })
		if i < 0 {
			spec.Tolerations = append(spec.Tolerations, t)
		} else {
			spec.Tolerations[i] = t
		}
	}
}

// daemonSet expands a DaemonSet: a pod for each node the controller
// would run one on and that has none of its pods, pinned to the node
// by a required node affinity for its name.
func (x *expander) daemonSet(w *workload, ds *appsv1.DaemonSet) error {
	template := ds.Spec.Template.DeepCopy()
	withDaemonTolerations(&template.Spec)
	template.Labels = withLabel(template.Labels, appsv1.DefaultDaemonSetUniqueLabelKey, templateHash(&ds.Spec.Template, ds.Status.CollisionCount))
	if g, ok := ds.Annotations[appsv1.DeprecatedTemplateGeneration]; ok {
		template.Labels[extensionsTemplateGeneration] = g
	}
	required := nodeaffinity.RequiredOf(&v1.Pod{Spec: template.Spec})
	has := map[string]bool{}
	for _, p := range w.active {
		if node, ok := targetNode(p); ok {
			has[node] = true
		}
	}
	var nodes []string
	for _, n := range x.c.Nodes {
		if n == nil || has[n.Name] || template.Spec.NodeName != "" && template.Spec.NodeName != n.Name {
			continue
		}
		// The controller's own test: the template's required node
		// constraints, and the node's NoSchedule and NoExecute taints
		// tolerated.
		if required.Matches(n) && taints.FirstUntolerated(n.Spec.Taints, template.Spec.Tolerations, false) < 0 {
			nodes = append(nodes, n.Name)
			has[n.Name] = true
		}
	}
	if err := x.reserve(int64(len(nodes))); err != nil {
		return err
	}
	ref := controllerRef(appsv1.SchemeGroupVersion.String(), "DaemonSet", ds.Name, w.uid)
	for _, node := range nodes {
		p := newPod(template, ds.Namespace, ref)
		pinTo(&p.Spec, node)
		x.addPod(p, x.names.generate("Pod", ds.Namespace, ds.Name+"-"))
	}
	return nil
}

// extensionsTemplateGeneration is the label the DaemonSet controller
// gives pods of a DaemonSet annotated with its template generation.
const extensionsTemplateGeneration = "pod-template-generation"

// pinTo makes spec's required node affinity the node's name alone, as
// the DaemonSet controller does: any required terms of the template
// are replaced.
func pinTo(spec *v1.PodSpec, node string) {
	pinned := []v1.NodeSelectorTerm{{MatchFields: []v1.NodeSelectorRequirement{{
		Key: metav1.ObjectNameField, Operator: v1.NodeSelectorOpIn, Values: []string{node},
	}}}}
	if spec.Affinity == nil {
		spec.Affinity = &v1.Affinity{}
	}
	if spec.Affinity.NodeAffinity == nil {
		spec.Affinity.NodeAffinity = &v1.NodeAffinity{}
	}
	if spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution = &v1.NodeSelector{}
	}
	spec.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms = pinned
}

// targetNode is the node a DaemonSet pod is for: its node, or the one
// its required node affinity names by name; false for none.
func targetNode(p *v1.Pod) (string, bool) {
	if p.Spec.NodeName != "" {
		return p.Spec.NodeName, true
	}
	a := p.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		return "", false
	}
	for _, t := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
		for _, r := range t.MatchFields {
			if r.Key == metav1.ObjectNameField && r.Operator == v1.NodeSelectorOpIn && len(r.Values) == 1 {
				return r.Values[0], true
			}
		}
	}
	return "", false
}

// job expands a Job that is neither suspended nor finished: the pods
// its first wave lacks, parallelism at most, fewer when fewer
// completions remain.
func (x *expander) job(w *workload, j *batchv1.Job) error {
	if j.Spec.Suspend != nil && *j.Spec.Suspend || finished(j) {
		return nil
	}
	parallelism := int64(1)
	if j.Spec.Parallelism != nil {
		parallelism = int64(*j.Spec.Parallelism)
	}
	completions := j.Spec.Completions
	if completions == nil && j.Spec.Parallelism == nil {
		one := int32(1)
		completions = &one
	}
	switch {
	case parallelism < 0:
		return fmt.Errorf("spec.parallelism %d is negative", parallelism)
	case completions != nil && *completions < 0:
		return fmt.Errorf("spec.completions %d is negative", *completions)
	}
	succeeded := max(int64(len(w.succeeded)), int64(j.Status.Succeeded))
	want := parallelism
	switch {
	case completions != nil:
		want = max(min(int64(*completions)-succeeded, parallelism), 0)
	case succeeded > 0:
		// Work without a count is done once a pod succeeds: what runs
		// runs on, and nothing more starts.
		want = int64(len(w.active))
	}
	n := max(want-int64(len(w.active)), 0)
	if n == 0 {
		return nil
	}
	if err := x.reserve(n); err != nil {
		return err
	}
	template := j.Spec.Template.DeepCopy()
	if !manualSelector(j) {
		for _, k := range []string{batchv1.JobNameLabel, legacyJobNameLabel} {
			if _, ok := template.Labels[k]; !ok {
				template.Labels = withLabel(template.Labels, k, j.Name)
			}
		}
		for _, k := range []string{batchv1.ControllerUidLabel, legacyControllerUIDLabel} {
			if _, ok := template.Labels[k]; !ok {
				template.Labels = withLabel(template.Labels, k, string(w.uid))
			}
		}
	}
	if !slices.Contains(template.Finalizers, batchv1.JobTrackingFinalizer) {
		template.Finalizers = append(template.Finalizers, batchv1.JobTrackingFinalizer)
	}
	ref := controllerRef(batchv1.SchemeGroupVersion.String(), "Job", j.Name, w.uid)
	indexed := j.Spec.CompletionMode != nil && *j.Spec.CompletionMode == batchv1.IndexedCompletion && completions != nil
	if !indexed {
		for range n {
			x.addPod(newPod(template, j.Namespace, ref), x.names.generate("Pod", j.Namespace, j.Name+"-"))
		}
		return nil
	}
	// Indexed: the lowest indexes no pod holds or has completed.
	held := map[string]bool{}
	for _, p := range slices.Concat(w.active, w.succeeded) {
		held[p.Annotations[batchv1.JobCompletionIndexAnnotation]] = true
	}
	for i := int64(0); i < int64(*completions) && n > 0; i++ {
		index := strconv.FormatInt(i, 10)
		if held[index] {
			continue
		}
		n--
		p := newPod(template, j.Namespace, ref)
		p.Annotations = withLabel(p.Annotations, batchv1.JobCompletionIndexAnnotation, index)
		p.Labels = withLabel(p.Labels, batchv1.JobCompletionIndexAnnotation, index)
		p.Spec.Hostname = j.Name + "-" + index
		x.addPod(p, x.names.generate("Pod", j.Namespace, j.Name+"-"+index+"-"))
	}
	return nil
}

// The labels the API server gives a Job's template besides those of
// batchv1, for older clients.
const (
	legacyJobNameLabel       = "job-name"
	legacyControllerUIDLabel = "controller-uid"
)

// finished says whether j has completed or failed for good.
func finished(j *batchv1.Job) bool {
	return slices.ContainsFunc(j.Status.Conditions, func(c batchv1.JobCondition) bool {
		return (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == v1.ConditionTrue
	})
}

// newPod is the pod a controller makes of template, owned by ref, not yet
// named: the template's labels, annotations, finalizers and spec.
func newPod(template *v1.PodTemplateSpec, namespace string, ref metav1.OwnerReference) *v1.Pod {
	return &v1.Pod{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       namespace,
			Labels:          maps.Clone(template.Labels),
			Annotations:     maps.Clone(template.Annotations),
			Finalizers:      slices.Clone(template.Finalizers),
			OwnerReferences: []metav1.OwnerReference{ref},
		},
		Spec: *template.Spec.DeepCopy(),
	}
}

// addPod names p, gives it what the API server would, and adds it to
// what is created.
func (x *expander) addPod(p *v1.Pod, name string) {
	p.Name = name
	p.UID = madeUpUID("Pod", p.Namespace, name)
	x.names.take("Pod", p.Namespace, name)
	x.d.pod(p)
	x.pods = append(x.pods, p)
	x.out.Pods = append(x.out.Pods, name)
}

// controllerRef is a controller's reference to what it created.
func controllerRef(apiVersion, kind, name string, uid types.UID) metav1.OwnerReference {
	yes, block := true, true
	return metav1.OwnerReference{APIVersion: apiVersion, Kind: kind, Name: name, UID: uid, Controller: &yes, BlockOwnerDeletion: &block}
}

// withLabel returns m, made if nil, with key set to value.
func withLabel(m map[string]string, key, value string) map[string]string {
	if m == nil {
		m = map[string]string{}
	}
	m[key] = value
	return m
}
