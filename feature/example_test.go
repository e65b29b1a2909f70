package feature_test

import (
	"fmt"

	"github.com/kubesched/kubesched/feature"
	"github.com/kubesched/kubesched/filter"
)

// A plugin built by hand decides as the newest release; its Features
// field makes it decide as an older one.
func Example() {
	r, err := feature.ReleaseFor("1.36")
	if err != nil {
		fmt.Println(err)
		return
	}
	fs := r.Features
	older := &filter.NodeName{Features: &fs}
	newest := &filter.NodeName{}
	fmt.Println(r.Version, feature.Of(older.Features).NodeNamePreFilter)
	fmt.Println(feature.Releases()[0].Version, feature.Of(newest.Features).NodeNamePreFilter)

	_, err = feature.ReleaseFor("1.20")
	fmt.Println(err)
	// Output:
	// v1.36.3 false
	// v1.37.2 true
	// kube-scheduler "1.20" is not a supported release; supported: v1.37.2, v1.36.3
}
