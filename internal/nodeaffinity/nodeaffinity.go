// Package nodeaffinity compiles a pod's node selector and node affinity once
// per pod into matchers that test a node without allocating. Both the
// NodeAffinity filter and its scorer use it, so their notion of "matches"
// cannot drift apart.
//
// Semantics are those of k8s.io/component-helpers/scheduling/corev1/nodeaffinity:
// terms are ORed, requirements within a term ANDed; an empty term matches
// nothing; a term that fails to parse never matches; matchFields compare
// the node's metadata.name (other field keys read as empty) and are ignored
// for a node without a name.
package nodeaffinity

import (
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

const nameField = "metadata.name"

type fieldRequirement struct {
	key, value string
	equal      bool // In when true, NotIn when false
}

// term is one compiled NodeSelectorTerm.
type term struct {
	labels labels.Selector // nil when the term has no matchExpressions
	fields []fieldRequirement
	err    error
}

func (t *term) matches(node *v1.Node) bool {
	if t.err != nil {
		return false
	}
	if t.labels != nil && !t.labels.Matches(labels.Set(node.Labels)) {
		return false
	}
	if len(t.fields) > 0 && node.Name != "" {
		for _, f := range t.fields {
			v := ""
			if f.key == nameField {
				v = node.Name
			}
			if (v == f.value) != f.equal {
				return false
			}
		}
	}
	return true
}

var selectorOps = map[v1.NodeSelectorOperator]selection.Operator{
	v1.NodeSelectorOpIn:           selection.In,
	v1.NodeSelectorOpNotIn:        selection.NotIn,
	v1.NodeSelectorOpExists:       selection.Exists,
	v1.NodeSelectorOpDoesNotExist: selection.DoesNotExist,
	v1.NodeSelectorOpGt:           selection.GreaterThan,
	v1.NodeSelectorOpLt:           selection.LessThan,
}

// compileTerm compiles t. path gives t's place for error messages; it is
// only called on an error, since building paths costs more than a valid
// term's compilation.
func compileTerm(t *v1.NodeSelectorTerm, path func() *field.Path) term {
	var out term
	var errs []error
	if len(t.MatchExpressions) > 0 {
		sel := labels.NewSelector()
		at := func(i int) *field.Path { return path().Child("matchExpressions").Index(i) }
		for i, expr := range t.MatchExpressions {
			op, ok := selectorOps[expr.Operator]
			if !ok {
				errs = append(errs, field.NotSupported(at(i).Child("operator"), expr.Operator,
					[]v1.NodeSelectorOperator{v1.NodeSelectorOpIn, v1.NodeSelectorOpNotIn, v1.NodeSelectorOpExists, v1.NodeSelectorOpDoesNotExist, v1.NodeSelectorOpGt, v1.NodeSelectorOpLt}))
				continue
			}
			r, err := labels.NewRequirement(expr.Key, op, expr.Values)
			if err != nil {
				// Again, for the message with the requirement's path.
				_, err = labels.NewRequirement(expr.Key, op, expr.Values, field.WithPath(at(i)))
				errs = append(errs, err)
				continue
			}
			sel = sel.Add(*r)
		}
		out.labels = sel
	}
	at := func(i int) *field.Path { return path().Child("matchFields").Index(i) }
	for i, expr := range t.MatchFields {
		switch expr.Operator {
		case v1.NodeSelectorOpIn, v1.NodeSelectorOpNotIn:
			if len(expr.Values) != 1 {
				errs = append(errs, field.Invalid(at(i).Child("values"), expr.Values, "must have one element"))
				continue
			}
			out.fields = append(out.fields, fieldRequirement{key: expr.Key, value: expr.Values[0], equal: expr.Operator == v1.NodeSelectorOpIn})
		default:
			errs = append(errs, field.NotSupported(at(i).Child("operator"), expr.Operator,
				[]v1.NodeSelectorOperator{v1.NodeSelectorOpIn, v1.NodeSelectorOpNotIn}))
		}
	}
	out.err = errors.Join(errs...)
	return out
}

func isEmpty(t *v1.NodeSelectorTerm) bool {
	return len(t.MatchExpressions) == 0 && len(t.MatchFields) == 0
}

// Selector is a compiled v1.NodeSelector.
type Selector struct {
	terms []term
}

// NewSelector compiles ns. Terms that fail to parse are kept and never
// match; Err reports them.
func NewSelector(ns *v1.NodeSelector) *Selector {
	s := &Selector{}
	for i := range ns.NodeSelectorTerms {
		t := &ns.NodeSelectorTerms[i]
		if isEmpty(t) {
			continue
		}
		s.terms = append(s.terms, compileTerm(t, func() *field.Path { return field.NewPath("nodeSelectorTerms").Index(i) }))
	}
	return s
}

// Err returns the parse errors of all terms, or nil.
func (s *Selector) Err() error {
	var errs []error
	for _, t := range s.terms {
		if t.err != nil {
			errs = append(errs, t.err)
		}
	}
	return errors.Join(errs...)
}

// Matches reports whether any term matches node.
func (s *Selector) Matches(node *v1.Node) bool {
	for i := range s.terms {
		if s.terms[i].matches(node) {
			return true
		}
	}
	return false
}

// Required is a pod's hard node constraints: spec.nodeSelector and the
// required node affinity, both of which must match.
type Required struct {
	nodeSelector labels.Selector // nil when the pod has none
	affinity     *Selector       // nil when the pod has none
}

// RequiredOf compiles pod's required node constraints.
func RequiredOf(pod *v1.Pod) Required {
	var r Required
	if len(pod.Spec.NodeSelector) > 0 {
		r.nodeSelector = labels.SelectorFromSet(pod.Spec.NodeSelector)
	}
	if a := pod.Spec.Affinity; a != nil && a.NodeAffinity != nil && a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution != nil {
		r.affinity = NewSelector(a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution)
	}
	return r
}

// Matches reports whether node satisfies the pod's required constraints.
func (r Required) Matches(node *v1.Node) bool {
	if r.nodeSelector != nil && !r.nodeSelector.Matches(labels.Set(node.Labels)) {
		return false
	}
	return r.affinity == nil || r.affinity.Matches(node)
}

type weightedTerm struct {
	term
	weight int64
}

// Preferred is a compiled list of preferred scheduling terms.
type Preferred struct {
	terms []weightedTerm
}

// NewPreferred compiles terms, skipping those with weight 0 or no
// requirements. Unlike required terms, a term that fails to parse is an
// error, as in kube-scheduler, where it fails the scheduling attempt.
func NewPreferred(terms []v1.PreferredSchedulingTerm) (*Preferred, error) {
	p := &Preferred{terms: make([]weightedTerm, 0, len(terms))}
	var errs []error
	for i := range terms {
		t := &terms[i]
		if t.Weight == 0 || isEmpty(&t.Preference) {
			continue
		}
		c := compileTerm(&t.Preference, func() *field.Path {
			return field.NewPath("preferredDuringSchedulingIgnoredDuringExecution").Index(i)
		})
		if c.err != nil {
			errs = append(errs, c.err)
			continue
		}
		p.terms = append(p.terms, weightedTerm{term: c, weight: int64(t.Weight)})
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("parsing preferred node affinity: %w", errors.Join(errs...))
	}
	return p, nil
}

// Score returns the sum of the weights of the terms node matches.
func (p *Preferred) Score(node *v1.Node) int64 {
	var score int64
	for i := range p.terms {
		if p.terms[i].matches(node) {
			score += p.terms[i].weight
		}
	}
	return score
}

// PreferredOf compiles pod's preferred node affinity; nil when the pod has
// none (not even an empty list).
func PreferredOf(pod *v1.Pod) (*Preferred, error) {
	a := pod.Spec.Affinity
	if a == nil || a.NodeAffinity == nil || a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution == nil {
		return nil, nil
	}
	return NewPreferred(a.NodeAffinity.PreferredDuringSchedulingIgnoredDuringExecution)
}

// Match is [Required.Matches] with kube-scheduler's error: when no term
// of the required node affinity matches and some term does not parse, it
// returns false and the parse errors.
func (r Required) Match(node *v1.Node) (bool, error) {
	if r.Matches(node) {
		return true, nil
	}
	if r.nodeSelector != nil && !r.nodeSelector.Matches(labels.Set(node.Labels)) {
		return false, nil
	}
	if r.affinity == nil {
		return false, nil
	}
	return false, r.affinity.Err()
}
