package framework

import "github.com/kubesched/kubesched/internal/cycle"

// WithoutMemos makes f keep no memos, so that tests can compare cycles
// with and without them.
func WithoutMemos(f *Framework) *Framework {
	f.memos = nil
	return f
}

// MemosCheap reports, for each memo f keeps, whether its next cycle is
// expected to be cheap (memo.cheap).
func MemosCheap(f *Framework) []bool {
	f.memos.mu.Lock()
	defer f.memos.mu.Unlock()
	var out []bool
	for _, m := range f.memos.list {
		out = append(out, m.cheap())
	}
	return out
}

// MemosZeroColumns returns, for each memo f keeps, how many of its score
// plugins score 0 on every node it knows (memo.nonzero).
func MemosZeroColumns(f *Framework) []int {
	f.memos.mu.Lock()
	defer f.memos.mu.Unlock()
	var out []int
	for _, m := range f.memos.list {
		zero := 0
		for i := range m.nonzero {
			if m.nonzero[i].Load() == 0 {
				zero++
			}
		}
		out = append(out, zero)
	}
	return out
}

// MemosSettled reports, for each memo f keeps, whether it knows every
// node's verdict at some version of the node list (memo.settled).
func MemosSettled(f *Framework) []bool {
	f.memos.mu.Lock()
	defer f.memos.mu.Unlock()
	var out []bool
	for _, m := range f.memos.list {
		out = append(out, m.settled != cycle.Version{})
	}
	return out
}

// MemosPartial returns, for each memo f keeps, how many searches that
// stopped early it counted towards judging every node (memo.partial):
// negative after such a pass failed to settle it.
func MemosPartial(f *Framework) []int {
	f.memos.mu.Lock()
	defer f.memos.mu.Unlock()
	var out []int
	for _, m := range f.memos.list {
		out = append(out, m.partial)
	}
	return out
}

// The framework's optional fast paths, named for the external tests that
// check which plugins take them.
type (
	PodOnlyPreScorer    = podOnlyPreScorer
	BatchScorer         = batchScorer
	PodAffinitySnapshot = podAffinitySnapshot
)
