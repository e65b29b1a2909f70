package podcount

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
)

func TestMemo(t *testing.T) {
	a, b := KeyOf("default\x00app=a"), KeyOf("default\x00app=b")
	tests := []struct {
		name   string
		stores func(m *Memo)
		gen    int64
		key    Key
		want   int
		wantOK bool
	}{
		{"an empty memo remembers nothing", func(*Memo) {}, 1, a, 0, false},
		{"a stored count is found at its generation", func(m *Memo) { Store(m, 1, a, 3) }, 1, a, 3, true},
		{"a stored count is not found at another generation", func(m *Memo) { Store(m, 1, a, 3) }, 2, a, 0, false},
		{"a count of another key is not found", func(m *Memo) { Store(m, 1, a, 3) }, 1, b, 0, false},
		{"counts of several keys are kept", func(m *Memo) { Store(m, 1, a, 3); Store(m, 1, b, 5) }, 1, a, 3, true},
		{"a new generation forgets the old one's counts", func(m *Memo) { Store(m, 1, a, 3); Store(m, 2, b, 5) }, 1, a, 0, false},
		{"the zero key is never remembered", func(m *Memo) { Store(m, 1, 0, 3) }, 1, 0, 0, false},
		{"a key sharing another's slot takes it", func(m *Memo) { Store(m, 1, a, 3); Store(m, 1, a+slots, 5) }, 1, a, 0, false},
		{"the key that took a slot is found", func(m *Memo) { Store(m, 1, a, 3); Store(m, 1, a+slots, 5) }, 1, a + slots, 5, true},
		{"a count of zero is remembered", func(m *Memo) { Store(m, 1, a, 0) }, 1, a, 0, true},
		{"a count too large to pack is not remembered", func(m *Memo) { Store(m, 1, a, maxCount+1) }, 1, a, 0, false},
		{"a key too large to pack is not remembered", func(m *Memo) { Store(m, 1, maxKey+1, 3) }, 1, maxKey + 1, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &Memo{}
			tt.stores(m)
			got, ok := Lookup(m, tt.gen, tt.key)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("Lookup = %d, %v; want %d, %v", got, ok, tt.want, tt.wantOK)
			}
		})
	}
}

func TestNilMemoRemembersNothing(t *testing.T) {
	Store(nil, 1, KeyOf("x"), 3)
	if _, ok := Lookup(nil, 1, KeyOf("x")); ok {
		t.Error("a nil memo found a count")
	}
}

func TestKeyOf(t *testing.T) {
	if KeyOf("") != 0 {
		t.Error("the empty text has a key")
	}
	if KeyOf("a") != KeyOf("a") {
		t.Error("one text has two keys")
	}
	if KeyOf("a") == KeyOf("b") {
		t.Error("two texts share a key")
	}
}

// TestConcurrentStoresKeepRightCounts stores and looks up from many
// goroutines (run with -race): whatever is found is what was stored.
func TestConcurrentStoresKeepRightCounts(t *testing.T) {
	m := &Memo{}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 1000 {
				k := KeyOf(fmt.Sprint("k", (g+i)%12))
				want := int(k) * 7
				if n, ok := Lookup(m, 1, k); ok && n != want {
					t.Errorf("key %d: found %d, want %d", k, n, want)
					return
				}
				Store(m, 1, k, want)
			}
		})
	}
	wg.Wait()
}

func TestSelectorText(t *testing.T) {
	text := func(sel labels.Selector) string {
		var b strings.Builder
		SelectorText(&b, sel)
		return b.String()
	}
	req := func(key string, op selection.Operator, values ...string) labels.Selector {
		r, err := labels.NewRequirement(key, op, values)
		if err != nil {
			t.Fatal(err)
		}
		return labels.NewSelector().Add(*r)
	}
	// NewRequirement refuses values no API object can hold; a selector
	// built from a set is not checked, so odd values reach here.
	odd := labels.SelectorFromValidatedSet(labels.Set{"app": "a,b"})
	tests := []struct {
		name string
		a, b labels.Selector
		same bool
	}{
		{"a nil selector is not one selecting nothing", nil, labels.Nothing(), false},
		{"a selector selecting nothing is not one selecting everything", labels.Nothing(), labels.Everything(), false},
		{"one set written twice is alike", labels.SelectorFromSet(labels.Set{"app": "web", "tier": "fe"}), labels.SelectorFromSet(labels.Set{"tier": "fe", "app": "web"}), true},
		{"values in another order are alike", req("app", selection.In, "a", "b"), req("app", selection.In, "b", "a"), true},
		{"another operator differs", req("app", selection.In, "a"), req("app", selection.NotIn, "a"), false},
		{"a value with a comma is not two values", odd, req("app", selection.In, "a", "b"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := text(tt.a) == text(tt.b); got != tt.same {
				t.Errorf("%q and %q alike = %v, want %v", text(tt.a), text(tt.b), got, tt.same)
			}
		})
	}
}

func TestSetText(t *testing.T) {
	text := func(set map[string]string) string {
		var b strings.Builder
		SetText(&b, set)
		return b.String()
	}
	if text(map[string]string{"a": "1", "b": "2"}) != text(map[string]string{"b": "2", "a": "1"}) {
		t.Error("one set written two ways")
	}
	if text(map[string]string{"a": "1,b=2"}) == text(map[string]string{"a": "1", "b": "2"}) {
		t.Error("a value holding a pair reads as two pairs")
	}
	if text(nil) != text(map[string]string{}) {
		t.Error("no labels and empty labels differ")
	}
}
