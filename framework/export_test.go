package framework

// WithoutMemos makes f keep no memos, so that tests can compare cycles
// with and without them.
func WithoutMemos(f *Framework) *Framework {
	f.memos = nil
	return f
}
