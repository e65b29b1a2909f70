// Package podaffinity holds what the InterPodAffinity plugins of packages
// filter and score share: a pod's affinity terms parsed once into label
// selectors, the test of whether a term matches a pod, the listing of the
// namespaces an incoming pod's namespaceSelector selects, and per-topology
// counts. Both plugins use it, so their notion of "matches" cannot drift.
//
// Semantics are kube-scheduler's:
//   - a nil labelSelector matches no pod, an empty one every pod;
//   - a term with neither namespaces nor a namespaceSelector applies to the
//     namespace of the pod that owns it; otherwise to the listed namespaces
//     plus those whose labels match namespaceSelector (an empty selector
//     matches every namespace, a nil one none), with the quirk described
//     at [Term.Resolve] for the incoming pod's terms;
//   - matchLabelKeys and mismatchLabelKeys are ignored: the API server
//     merges them into labelSelector when the pod is created, and the
//     scheduler reads only the merged selector;
//   - the topology key is used as given, even when empty.
//
// The package depends on neither the framework nor nodeinfo, so that a
// NodeInfo may one day cache its pods' parsed terms.
package podaffinity

import (
	"fmt"
	"maps"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubesched/kubesched/internal/podcount"
)

// NamespaceLister is the part of a namespace lister this package reads;
// fwk.NamespaceLister satisfies it. A nil lister has no namespaces.
type NamespaceLister interface {
	List(selector labels.Selector) ([]*v1.Namespace, error)
	Get(name string) (*v1.Namespace, error)
}

// Term is one parsed PodAffinityTerm. The zero value matches nothing.
type Term struct {
	// TopologyKey is the node label whose value defines the term's domain.
	TopologyKey string

	selector labels.Selector
	// matchLabels holds the selector's pairs when it has nothing else, so
	// that the common selector is checked with one lookup per pair.
	matchLabels     []labelPair
	onlyMatchLabels bool
	namespaces      sets.Set[string]
	// oneNamespace is the only element of namespaces when it has exactly
	// one, the usual case, which is then compared without hashing.
	oneNamespace string
	nsSelector   labels.Selector
	// listNamespaces is set when nsSelector selects some but not
	// necessarily all namespaces, and the term is not yet resolved: only
	// then does Resolve have names to look up.
	listNamespaces bool
}

type labelPair struct{ key, value string }

// WeightedTerm is a parsed WeightedPodAffinityTerm.
type WeightedTerm struct {
	Term
	Weight int32
}

// Terms are a pod's parsed pod affinity and anti-affinity terms.
type Terms struct {
	RequiredAffinity      []Term
	RequiredAntiAffinity  []Term
	PreferredAffinity     []WeightedTerm
	PreferredAntiAffinity []WeightedTerm
}

// Parse parses the pod affinity and anti-affinity terms of pod. As in
// kube-scheduler, a list holding a term that does not parse is dropped
// whole (left nil) while the other lists are kept, and the error names
// every failing list, aggregated the way kube-scheduler aggregates it.
// A pod without pod affinity costs no allocation.
func Parse(pod *v1.Pod) (Terms, error) {
	var t Terms
	a := pod.Spec.Affinity
	if a == nil || (a.PodAffinity == nil && a.PodAntiAffinity == nil) {
		return t, nil
	}
	var errs []error
	var err error
	if pa := a.PodAffinity; pa != nil {
		if t.RequiredAffinity, err = parseTerms(pod, pa.RequiredDuringSchedulingIgnoredDuringExecution); err != nil {
			errs = append(errs, fmt.Errorf("requiredAffinityTerms: %w", err))
		}
	}
	if pa := a.PodAntiAffinity; pa != nil {
		if t.RequiredAntiAffinity, err = parseTerms(pod, pa.RequiredDuringSchedulingIgnoredDuringExecution); err != nil {
			errs = append(errs, fmt.Errorf("requiredAntiAffinityTerms: %w", err))
		}
	}
	if pa := a.PodAffinity; pa != nil {
		if t.PreferredAffinity, err = parseWeighted(pod, pa.PreferredDuringSchedulingIgnoredDuringExecution); err != nil {
			errs = append(errs, fmt.Errorf("preferredAffinityTerms: %w", err))
		}
	}
	if pa := a.PodAntiAffinity; pa != nil {
		if t.PreferredAntiAffinity, err = parseWeighted(pod, pa.PreferredDuringSchedulingIgnoredDuringExecution); err != nil {
			errs = append(errs, fmt.Errorf("preferredAntiAffinityTerms: %w", err))
		}
	}
	return t, utilerrors.NewAggregate(errs)
}

func parseTerms(pod *v1.Pod, in []v1.PodAffinityTerm) ([]Term, error) {
	if len(in) == 0 {
		return nil, nil
	}
	out := make([]Term, len(in))
	for i := range in {
		var err error
		if out[i], err = parseTerm(pod, &in[i]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func parseWeighted(pod *v1.Pod, in []v1.WeightedPodAffinityTerm) ([]WeightedTerm, error) {
	if len(in) == 0 {
		return nil, nil
	}
	out := make([]WeightedTerm, len(in))
	for i := range in {
		t, err := parseTerm(pod, &in[i].PodAffinityTerm)
		if err != nil {
			return nil, err
		}
		out[i] = WeightedTerm{Term: t, Weight: in[i].Weight}
	}
	return out, nil
}

func parseTerm(pod *v1.Pod, in *v1.PodAffinityTerm) (Term, error) {
	sel, err := metav1.LabelSelectorAsSelector(in.LabelSelector)
	if err != nil {
		return Term{}, err
	}
	nsSel, err := metav1.LabelSelectorAsSelector(in.NamespaceSelector)
	if err != nil {
		return Term{}, err
	}
	t := Term{TopologyKey: in.TopologyKey, selector: sel, nsSelector: nsSel}
	if ls := in.LabelSelector; ls != nil && len(ls.MatchExpressions) == 0 {
		t.onlyMatchLabels = true
		for k, v := range ls.MatchLabels {
			t.matchLabels = append(t.matchLabels, labelPair{k, v})
		}
	}
	if len(in.Namespaces) == 0 && in.NamespaceSelector == nil {
		t.setNamespaces(sets.New(pod.Namespace))
	} else {
		t.setNamespaces(sets.New(in.Namespaces...))
	}
	// A nil selector parses to Nothing, an empty one to Everything; only
	// the rest name a subset of namespaces.
	t.listNamespaces = in.NamespaceSelector != nil && !nsSel.Empty()
	return t, nil
}

// Matches reports whether pod matches the term's label selector and is in
// one of its namespaces or in a namespace with labels nsLabels that its
// namespaceSelector matches.
func (t *Term) Matches(pod *v1.Pod, nsLabels labels.Set) bool {
	if t.selector == nil {
		return false
	}
	if !t.inNamespace(pod.Namespace) && !t.nsSelector.Matches(nsLabels) {
		return false
	}
	if !t.onlyMatchLabels {
		return t.selector.Matches(labels.Set(pod.Labels))
	}
	for _, p := range t.matchLabels {
		if v, ok := pod.Labels[p.key]; !ok || v != p.value {
			return false
		}
	}
	return true
}

func (t *Term) setNamespaces(namespaces sets.Set[string]) {
	t.namespaces, t.oneNamespace = namespaces, ""
	if len(namespaces) == 1 {
		t.oneNamespace = namespaces.UnsortedList()[0]
	}
}

func (t *Term) inNamespace(ns string) bool {
	if t.oneNamespace != "" {
		return ns == t.oneNamespace
	}
	return t.namespaces.Has(ns)
}

// MatchesAll reports whether pod matches every one of terms, resolved
// terms of the incoming pod, matched with no namespace labels. It is false
// when there are no terms.
func MatchesAll(terms []Term, pod *v1.Pod) bool {
	if len(terms) == 0 {
		return false
	}
	for i := range terms {
		if !terms[i].Matches(pod, nil) {
			return false
		}
	}
	return true
}

// Resolve returns the term with the names of the namespaces lister lists
// for its namespaceSelector added to its namespaces. This is how
// kube-scheduler prepares the incoming pod's own terms, which it then
// matches with no namespace labels (nil). With listedOnly (from v1.37) the
// selector then matches nothing: only the listed names count, and a nil
// lister lists none. Without it, as before v1.37, kube-scheduler keeps the
// selector too, so a selector that matches a namespace without labels
// (NotIn, DoesNotExist) still matches pods of every namespace; a nil
// lister then leaves the term as it is. The terms of pods already placed
// are not resolved; they are matched with the incoming pod's namespace
// labels. An empty selector (every namespace) or a nil one (none) needs
// no lookup. t is not modified; the error is the lister's.
func (t *Term) Resolve(lister NamespaceLister, listedOnly bool) (Term, error) {
	if !t.listNamespaces || (lister == nil && !listedOnly) {
		return *t, nil
	}
	r := *t
	r.listNamespaces = false
	if listedOnly {
		r.nsSelector = labels.Nothing()
	}
	if lister == nil {
		return r, nil
	}
	list, err := lister.List(t.nsSelector)
	if err != nil {
		return Term{}, err
	}
	namespaces := t.namespaces.Clone()
	for _, ns := range list {
		namespaces.Insert(ns.Name)
	}
	r.setNamespaces(namespaces)
	return r, nil
}

// NamespaceLabels returns the labels of namespace name, or nil if lister
// is nil or cannot get it, which kube-scheduler also reads as no labels.
func NamespaceLabels(lister NamespaceLister, name string) labels.Set {
	if lister == nil {
		return nil
	}
	ns, err := lister.Get(name)
	if err != nil || ns == nil {
		return nil
	}
	return ns.Labels
}

// Counts holds a count per topology pair (key, value). Pods use few
// topology keys, so the keys are a short list scanned in order and only
// the values are hashed: Filter and Score ask once per node and key. An
// entry whose count reaches zero is deleted, and its key with it when it
// has no values left, so [Counts.Len] is 0 exactly when every count is.
// The zero value is empty and ready to use; a nil *Counts reads as empty.
type Counts struct {
	keys []string
	// values[k] are the counts of keys[k]. Past len(values), up to its
	// capacity, are empty maps or nil: maps kept for keys to come.
	values []map[string]int64
	// negative is how many counts are below zero. While there are none,
	// adding a positive n cannot reach zero, and Add hashes the value once.
	negative int
}

// Add adds n to the count of (key, value).
func (c *Counts) Add(key, value string, n int64) {
	if n == 0 {
		return
	}
	k := c.index(key)
	if k < 0 {
		c.keys = append(c.keys, key)
		if n := len(c.values); n < cap(c.values) && c.values[:n+1][n] != nil {
			c.values = c.values[:n+1] // an emptied map kept past the end
		} else {
			c.values = append(c.values, map[string]int64{})
		}
		k = len(c.keys) - 1
	}
	values := c.values[k]
	if n > 0 && c.negative == 0 {
		values[value] += n
		return
	}
	old := values[value]
	switch updated := old + n; {
	case updated == 0:
		delete(values, value)
		if len(values) == 0 {
			// The emptied map moves past the end, kept for a key to come.
			last := len(c.values) - 1
			c.keys = append(c.keys[:k], c.keys[k+1:]...)
			copy(c.values[k:], c.values[k+1:])
			c.values[last] = values
			c.values = c.values[:last]
		}
	default:
		values[value] = updated
	}
	if old < 0 {
		c.negative--
	}
	if old+n < 0 {
		c.negative++
	}
}

func (c *Counts) index(key string) int {
	if c == nil {
		return -1
	}
	for i, k := range c.keys {
		if k == key {
			return i
		}
	}
	return -1
}

// Len returns how many keys have counted values.
func (c *Counts) Len() int {
	if c == nil {
		return 0
	}
	return len(c.keys)
}

// Get returns the count of (key, value).
func (c *Counts) Get(key, value string) int64 {
	if k := c.index(key); k >= 0 {
		return c.values[k][value]
	}
	return 0
}

// AnyPositive reports whether some (key, value) of nodeLabels has a
// positive count. It looks up the counted keys in nodeLabels rather than
// the other way round, since there are usually far fewer of them.
func (c *Counts) AnyPositive(nodeLabels map[string]string) bool {
	if c == nil {
		return false
	}
	for k, key := range c.keys {
		if v, ok := nodeLabels[key]; ok && c.values[k][v] > 0 {
			return true
		}
	}
	return false
}

// Sum returns the sum of the counts of the pairs in nodeLabels.
func (c *Counts) Sum(nodeLabels map[string]string) int64 {
	if c == nil {
		return 0
	}
	var n int64
	for k, key := range c.keys {
		if v, ok := nodeLabels[key]; ok {
			n += c.values[k][v]
		}
	}
	return n
}

// Merge adds every count of other to c, as if each had been added to c.
// other must not be used afterwards: c may take over its maps.
func (c *Counts) Merge(other *Counts) {
	if other == nil {
		return
	}
	for k, key := range other.keys {
		if c.index(key) >= 0 || other.negative > 0 {
			for value, n := range other.values[k] {
				c.Add(key, value, n)
			}
			continue
		}
		c.keys = append(c.keys, key)
		c.values = append(c.values, other.values[k])
	}
}

// Each calls fn with every counted pair and its count.
func (c *Counts) Each(fn func(key, value string, n int64)) {
	if c == nil {
		return
	}
	for k, key := range c.keys {
		for value, n := range c.values[k] {
			fn(key, value, n)
		}
	}
}

// Reset empties c. It keeps c's maps, emptied, for the counts to come:
// counting into the same Counts again and again allocates nothing once
// it has counted as many keys.
func (c *Counts) Reset() {
	for _, values := range c.values {
		clear(values)
	}
	c.keys, c.values, c.negative = c.keys[:0], c.values[:0], 0
}

// Clone returns a deep copy.
func (c *Counts) Clone() *Counts {
	out := &Counts{}
	if c == nil {
		return out
	}
	out.negative = c.negative
	out.keys = append([]string(nil), c.keys...)
	out.values = make([]map[string]int64, len(c.values))
	for k, values := range c.values {
		out.values[k] = maps.Clone(values)
	}
	return out
}

// WriteKey writes to b what decides which pods t matches and where, its
// topology key, selector, namespaces and namespace selector, so that two
// terms are written alike only when they match alike (see
// podcount.SelectorText).
func (t *Term) WriteKey(b *strings.Builder) {
	b.WriteString(strconv.Itoa(len(t.TopologyKey)))
	b.WriteByte(':')
	b.WriteString(t.TopologyKey)
	podcount.SelectorText(b, t.selector)
	namespaces := sets.List(t.namespaces)
	b.WriteString(strconv.Itoa(len(namespaces)))
	b.WriteByte('[')
	for _, ns := range namespaces {
		b.WriteString(strconv.Itoa(len(ns)))
		b.WriteByte(':')
		b.WriteString(ns)
	}
	podcount.SelectorText(b, t.nsSelector)
	if t.listNamespaces {
		b.WriteString("unresolved;")
	}
}
