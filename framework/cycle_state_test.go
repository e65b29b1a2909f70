package framework_test

import (
	"context"
	"testing"

	"github.com/kubesched/kubesched/framework"
)

func TestParallelChunksOutsideAFrameworkRunsEveryChunkOnWorkerZero(t *testing.T) {
	t.Parallel()
	for _, state := range []*framework.CycleState{nil, framework.NewCycleState(nil)} {
		if got := state.Workers(100000); got != 1 {
			t.Errorf("Workers = %d outside a framework, want 1", got)
		}
		seen := make([]int, 5000)
		state.ParallelChunks(context.Background(), len(seen), func(worker, start, end int) {
			if worker != 0 {
				t.Errorf("chunk [%d, %d) ran on worker %d, want 0", start, end, worker)
			}
			for i := start; i < end; i++ {
				seen[i]++
			}
		})
		for i, n := range seen {
			if n != 1 {
				t.Fatalf("index %d seen %d times, want 1", i, n)
			}
		}
	}
}
