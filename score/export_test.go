package score

// ImageLocalityScore lets the tests score a node against any number of
// nodes.
var ImageLocalityScore = imageLocalityScore
