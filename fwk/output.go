package fwk

import "sync/atomic"

// Outputs are what a cycle's Reserve or PostFilter plugins leave for
// the caller besides the placement or the verdict: what they would
// write to the cluster, say. Each value is under an [OutputKey] the
// plugin that writes it owns, with the plugin's own typed accessors on
// top (package filter has them for DynamicResources and VolumeBinding:
// Claims, Volumes and the rest). Any Reserve or PostFilter plugin can
// leave outputs of its own the same way. The zero value is empty and
// ready.
type Outputs struct {
	values []outputValue
}

// outputValue is one value of Outputs, under the key numbered key.
type outputValue struct {
	key int
	v   any
}

// OutputHolder is what holds a cycle's Outputs: framework.Result (from
// Reserve) and framework.FitError (from PostFilter) do. Typed accessors
// such as package filter's Claims take one.
type OutputHolder interface {
	// PluginOutputs returns the outputs held; nil for a nil holder.
	PluginOutputs() *Outputs
}

// OutputKey names one output of type T in [Outputs]. Make each key once,
// with [NewOutputKey], and keep it in a package variable.
type OutputKey[T any] struct {
	id int
}

// outputKeys numbers the keys made, from 1, so that the zero OutputKey
// names none.
var outputKeys atomic.Int64

// NewOutputKey returns a new key for outputs of type T.
func NewOutputKey[T any]() OutputKey[T] {
	return OutputKey[T]{id: int(outputKeys.Add(1))}
}

// Set sets the output under k to v. It does nothing on nil Outputs or
// the zero key.
func (k OutputKey[T]) Set(o *Outputs, v T) {
	if o == nil || k.id == 0 {
		return
	}
	for i := range o.values {
		if o.values[i].key == k.id {
			o.values[i].v = v
			return
		}
	}
	o.values = append(o.values, outputValue{key: k.id, v: v})
}

// Get returns the output under k, and whether there is one.
func (k OutputKey[T]) Get(o *Outputs) (T, bool) {
	if o != nil {
		for _, ov := range o.values {
			if ov.key == k.id {
				return ov.v.(T), true
			}
		}
	}
	var zero T
	return zero, false
}

// Merge sets each of from's outputs in o, replacing the one under the
// same key.
func (o *Outputs) Merge(from *Outputs) {
	if o == nil || from == nil {
		return
	}
	for _, fv := range from.values {
		i := 0
		for i < len(o.values) && o.values[i].key != fv.key {
			i++
		}
		if i == len(o.values) {
			o.values = append(o.values, fv)
		} else {
			o.values[i].v = fv.v
		}
	}
}
