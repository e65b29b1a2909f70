// Package parallel runs an index loop on a bounded set of goroutines.
package parallel

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
)

// chunkSize balances scheduling overhead (few, large chunks) against load
// imbalance at the end of the loop (many, small chunks): about sqrt(pieces),
// but never so large that some worker gets no chunk at all.
func chunkSize(pieces, workers int) int {
	s := int(math.Sqrt(float64(pieces)))
	if r := pieces/workers + 1; s > r {
		s = r
	}
	return max(s, 1)
}

// Until calls fn(i) for every i in [0, pieces) on up to workers goroutines and
// returns when all calls have returned. Indexes are handed out in chunks;
// once ctx is done no further chunk starts, so some indexes may never be
// visited: callers that cancel must not assume every result slot was written.
// fn must be safe to call concurrently for different indexes; writing
// results into a preallocated slice by index needs no locking.
func Until(ctx context.Context, workers, pieces int, fn func(i int)) {
	Chunks(ctx, workers, pieces, func(start, end int) {
		for i := start; i < end; i++ {
			fn(i)
		}
	})
}

// Chunks is [Until] handing each call a whole chunk [start, end) of
// consecutive indexes, for work that carries state from one index to the
// next.
func Chunks(ctx context.Context, workers, pieces int, fn func(start, end int)) {
	ByWorker(ctx, workers, pieces, func(_, start, end int) { fn(start, end) })
}

// ByWorker is [Chunks] also telling fn which worker, from 0 to
// workers-1, runs the chunk. A worker runs its chunks one after another,
// so work can accumulate into per-worker values without locking.
func ByWorker(ctx context.Context, workers, pieces int, fn func(worker, start, end int)) {
	if pieces <= 0 {
		return
	}
	workers = max(1, min(workers, pieces))
	chunk := chunkSize(pieces, workers)
	if workers == 1 {
		// Inline: no goroutine to share the counter with, and ctx.Err
		// does not make a cancellable context allocate its channel.
		for start := 0; start < pieces && ctx.Err() == nil; start += chunk {
			fn(0, start, min(start+chunk, pieces))
		}
		return
	}
	done := ctx.Done()
	var next atomic.Int64
	work := func(worker int) {
		for {
			select {
			case <-done:
				return
			default:
			}
			start := int(next.Add(int64(chunk))) - chunk
			if start >= pieces {
				return
			}
			fn(worker, start, min(start+chunk, pieces))
		}
	}
	var wg sync.WaitGroup
	wg.Add(workers - 1)
	for w := range workers - 1 {
		go func() {
			defer wg.Done()
			work(w + 1)
		}()
	}
	work(0)
	wg.Wait()
}
