// Package changelog is the record a node list updated in place keeps of
// itself for the framework and its plugins: each node's generation, and
// which positions changed since an earlier generation of the list. A
// cache.Snapshot embeds a [Log] so that the framework finds its methods,
// while its own documentation shows none of them.
package changelog

// Data is what a [Log] reads. The list's owner writes it.
type Data struct {
	// Generation is the highest NodeInfo generation the list has seen.
	Generation int64
	// Gens[i] is the Generation of the list's node i.
	Gens []int64
	// Updates are the in-place updates kept, oldest first; the positions
	// each changed follow one another in At, from its Start to the next
	// update's.
	Updates []Update
	At      []int32
}

// Update is one in-place update of a list: the positions it changed
// changed since the list's generation was From.
type Update struct {
	From  int64
	Start int
}

// Log reads a list's [Data].
type Log struct {
	d *Data
}

// Of returns the Log of d.
func Of(d *Data) Log { return Log{d: d} }

// ChangedSince returns the positions of the nodes that changed since the
// list's generation was generation, and true; the positions come in no
// particular order and may repeat, and must not be modified. It returns
// false when it cannot tell: generation is older than the updates kept,
// or newer than the list's.
func (l Log) ChangedSince(generation int64) ([]int32, bool) {
	d := l.d
	if d == nil {
		return nil, false
	}
	if generation == d.Generation {
		return nil, true
	}
	if len(d.Updates) == 0 || generation > d.Generation {
		return nil, false
	}
	for i := len(d.Updates) - 1; i >= 0; i-- {
		if d.Updates[i].From <= generation {
			end := len(d.At)
			return d.At[d.Updates[i].Start:end:end], true
		}
	}
	return nil, false
}

// Generations returns the Generation of each node of the list, in
// order; nil when the list keeps none. It must not be modified.
func (l Log) Generations() []int64 {
	if l.d == nil {
		return nil
	}
	return l.d.Gens
}

// Record adds to d the update from generation from that changed
// positions, dropping the oldest updates to keep at most limit
// positions; an update larger than limit empties the log, and callers
// then look at every node.
func (d *Data) Record(from int64, changed []int, limit int) {
	if len(changed) > limit {
		d.Updates, d.At = d.Updates[:0], d.At[:0]
		return
	}
	d.Updates = append(d.Updates, Update{From: from, Start: len(d.At)})
	for _, i := range changed {
		d.At = append(d.At, int32(i))
	}
	drop := 0
	for len(d.At)-d.Updates[drop].Start > limit {
		drop++
	}
	d.Updates = d.Updates[drop:]
	// Move the positions kept down once most of At was dropped.
	if base := d.Updates[0].Start; base > len(d.At)/2 {
		n := copy(d.At, d.At[base:])
		d.At = d.At[:n]
		for k := range d.Updates {
			d.Updates[k].Start -= base
		}
	}
}
