package incremental

import (
	"strconv"
	"sync"
	"testing"
)

func TestTake(t *testing.T) {
	v := &ByKey[int]{max: 2}
	a, giveA := v.Take("a")
	if a == nil || *a != 0 {
		t.Fatalf("first Take = %v, want a zero value", a)
	}
	*a = 7
	if b, _ := v.Take("a"); b != nil {
		t.Error("a value held by one caller was handed to another")
	}
	giveA()
	again, giveAgain := v.Take("a")
	if again == nil || *again != 7 {
		t.Fatalf("Take after giving back = %v, want the value kept, 7", again)
	}
	giveAgain()
	for i := range 5 {
		_, give := v.Take(strconv.Itoa(i))
		give()
	}
	if len(v.byKey) > 2 {
		t.Errorf("%d keys held, want at most 2", len(v.byKey))
	}
}

// TestTakeIsSafeForConcurrentUse takes and gives back from many
// goroutines (run with -race): a held value is never handed out twice.
func TestTakeIsSafeForConcurrentUse(t *testing.T) {
	v := &ByKey[int]{max: 4}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 500 {
				p, give := v.Take(strconv.Itoa((g + i) % 6))
				if p == nil {
					continue
				}
				*p++
				*p--
				if *p != 0 {
					t.Errorf("value changed by another holder: %d", *p)
				}
				give()
			}
		})
	}
	wg.Wait()
}
