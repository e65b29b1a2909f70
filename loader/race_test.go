//go:build race

package loader_test

// raceEnabled says whether the race detector is on, under which reading
// is about ten times slower.
const raceEnabled = true
