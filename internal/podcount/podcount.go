// Package podcount remembers, per NodeInfo, how many of its pods match a
// selector, so that a simulation placing pod after pod, where one node
// changes per placement, counts the pods of only that node again.
//
// A count is valid for the NodeInfo's generation it was taken at: any
// change to the NodeInfo gives it a new generation, and the counts of the
// old one are ignored. The NodeInfo holds its Memo
// (nodeinfo.NodeInfo.CountMemo); the memo of a NodeInfo built without
// nodeinfo's constructors is nil, and counting then always recounts.
package podcount

import (
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/labels"
)

// slots is how many counts a table holds; a key always goes to the same
// slot (its low bits), so two keys sharing one take turns, as in a
// direct-mapped cache. Keys are handed out in sequence, so that up to
// slots ways of counting never share one; a table is made anew whenever
// its node changes, once per placement in a simulation, so it is kept
// small.
const slots = 32

// Memo is one NodeInfo's remembered counts. The zero value is empty and
// ready; it is safe for concurrent use.
type Memo struct {
	t atomic.Pointer[table]
}

// table is a Memo's counts at one generation. Each slot packs a key (the
// high bits) with its count plus one (the low countBits bits), so that
// a look-up is one atomic load and an empty slot matches no key.
type table struct {
	gen  int64
	slot [slots]atomic.Uint64
}

// countBits is how many low bits of a slot hold the count; keys and
// counts too large to pack are not remembered.
const (
	countBits = 24
	maxCount  = 1<<countBits - 2
	maxKey    = 1<<(64-countBits) - 1
)

// Key names one way of counting: see [KeyOf].
type Key uint64

// maxInterned bounds the texts KeyOf remembers; past it they are
// forgotten and new keys handed out, so that a long-lived process seeing
// ever new selectors does not grow without end. Keys are never reused.
const maxInterned = 1 << 16

var interned struct {
	sync.Mutex
	keys map[string]Key
	next Key
}

// KeyOf returns the key of a way of counting described by text, the same
// key for the same text; 0, which remembers nothing, for the empty text.
func KeyOf(text string) Key {
	if text == "" {
		return 0
	}
	interned.Lock()
	defer interned.Unlock()
	if k, ok := interned.keys[text]; ok {
		return k
	}
	if interned.keys == nil || len(interned.keys) >= maxInterned {
		interned.keys = map[string]Key{}
	}
	interned.next++
	interned.keys[text] = interned.next
	return interned.next
}

// Lookup returns the count remembered under key at generation gen, if
// any. A nil memo and the zero key remember nothing.
func Lookup(m *Memo, gen int64, key Key) (int, bool) {
	if m == nil || key == 0 {
		return 0, false
	}
	t := m.t.Load()
	if t == nil || t.gen != gen {
		return 0, false
	}
	e := t.slot[key%slots].Load()
	if Key(e>>countBits) != key {
		return 0, false
	}
	return int(e&(1<<countBits-1)) - 1, true
}

// Store remembers n under key at generation gen, in place of the key
// sharing its slot, and forgets the counts of other generations.
func Store(m *Memo, gen int64, key Key, n int) {
	if m == nil || key == 0 || key > maxKey || n < 0 || n > maxCount {
		return
	}
	t := m.t.Load()
	if t == nil || t.gen != gen {
		fresh := &table{gen: gen}
		if m.t.CompareAndSwap(t, fresh) {
			t = fresh
		} else if t = m.t.Load(); t == nil || t.gen != gen {
			return
		}
	}
	t.slot[key%slots].Store(uint64(key)<<countBits | uint64(n+1))
}

// SelectorText writes sel to b so that two selectors are written alike
// only when they select alike: its requirements in order, each key,
// operator and value prefixed with its length, so that no value, however
// odd, reads as two. A nil selector, one selecting nothing and one
// selecting everything are written as such.
func SelectorText(b *strings.Builder, sel labels.Selector) {
	if sel == nil {
		b.WriteString("nil;")
		return
	}
	reqs, selectable := sel.Requirements()
	if !selectable {
		b.WriteString("none;")
		return
	}
	b.WriteString("reqs:")
	for _, r := range reqs {
		field(b, r.Key())
		field(b, string(r.Operator()))
		values := r.ValuesUnsorted()
		slices.Sort(values)
		b.WriteString(strconv.Itoa(len(values)))
		b.WriteByte('[')
		for _, v := range values {
			field(b, v)
		}
	}
	b.WriteByte(';')
}

// SetText writes a label set (or namespace labels) to b as SelectorText
// writes selectors: sorted by key, every key and value length-prefixed.
func SetText(b *strings.Builder, set map[string]string) {
	keys := make([]string, 0, len(set))
	for k := range set {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	b.WriteString(strconv.Itoa(len(keys)))
	b.WriteByte('{')
	for _, k := range keys {
		field(b, k)
		field(b, set[k])
	}
}

// field writes s prefixed with its length.
func field(b *strings.Builder, s string) {
	b.WriteString(strconv.Itoa(len(s)))
	b.WriteByte(':')
	b.WriteString(s)
}
