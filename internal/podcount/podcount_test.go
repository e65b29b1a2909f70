package podcount

import (
	"fmt"
	"sync"
	"testing"
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
		{"past maxKeys the oldest key is forgotten", func(m *Memo) {
			Store(m, 1, a, 3)
			for i := range maxKeys {
				Store(m, 1, KeyOf(fmt.Sprint("other", i)), i)
			}
		}, 1, a, 0, false},
		{"past maxKeys the newest keys are kept", func(m *Memo) {
			for i := range maxKeys {
				Store(m, 1, KeyOf(fmt.Sprint("other", i)), i)
			}
			Store(m, 1, a, 3)
		}, 1, a, 3, true},
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
