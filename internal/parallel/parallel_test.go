package parallel

import (
	"context"
	"sync/atomic"
	"testing"
)

func TestUntil(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name            string
		workers, pieces int
	}{
		{"every index is visited once with more pieces than workers", 4, 1000},
		{"every index is visited once with more workers than pieces", 16, 3},
		{"a single worker visits every index", 1, 57},
		{"zero workers still make progress", 0, 10},
		{"no pieces means no calls", 4, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			counts := make([]atomic.Int32, tc.pieces)
			Until(context.Background(), tc.workers, tc.pieces, func(i int) { counts[i].Add(1) })
			for i := range counts {
				if got := counts[i].Load(); got != 1 {
					t.Fatalf("index %d visited %d times, want 1", i, got)
				}
			}
		})
	}
}

func TestUntilStopsStartingChunksOnceCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	var calls atomic.Int32
	const pieces = 100000
	Until(ctx, 2, pieces, func(int) {
		if calls.Add(1) == 1 {
			cancel()
		}
	})
	if got := calls.Load(); got >= pieces {
		t.Fatalf("all %d pieces ran after cancellation", got)
	}
}

func TestUntilWithCancelledContextDoesNothing(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var calls atomic.Int32
	Until(ctx, 4, 100, func(int) { calls.Add(1) })
	if calls.Load() != 0 {
		t.Fatalf("got %d calls on a cancelled context, want 0", calls.Load())
	}
}

func TestByWorkerGivesEachWorkerItsOwnChunksOneAtATime(t *testing.T) {
	t.Parallel()
	const workers, pieces = 3, 10000
	var busy [workers]atomic.Int32
	var seen [workers]int // written only by its own worker
	counts := make([]atomic.Int32, pieces)
	ByWorker(context.Background(), workers, pieces, func(worker, start, end int) {
		if worker < 0 || worker >= workers {
			t.Errorf("worker %d out of [0, %d)", worker, workers)
			return
		}
		if busy[worker].Add(1) != 1 {
			t.Errorf("worker %d runs two chunks at once", worker)
		}
		for i := start; i < end; i++ {
			counts[i].Add(1)
			seen[worker]++
		}
		busy[worker].Add(-1)
	})
	total := 0
	for _, n := range seen {
		total += n
	}
	if total != pieces {
		t.Errorf("workers saw %d indexes in all, want %d", total, pieces)
	}
	for i := range counts {
		if got := counts[i].Load(); got != 1 {
			t.Fatalf("index %d visited %d times, want 1", i, got)
		}
	}
}
