package extender_test

import (
	"fmt"

	configv1 "k8s.io/kube-scheduler/config/v1"

	"github.com/kubesched/kubesched/extender"
)

// Validate checks an `extenders:` list as kube-scheduler does, naming the
// field at fault.
func ExampleValidate() {
	err := extender.Validate(
		configv1.Extender{URLPrefix: "http://127.0.0.1:8888", FilterVerb: "filter", PrioritizeVerb: "prioritize"},
		configv1.Extender{URLPrefix: "http://127.0.0.1:9999", FilterVerb: "filter", Weight: 1},
	)
	fmt.Println(err)
	// Output: invalid extender configuration: extenders[0].weight: Invalid value: 0: must have a positive weight applied to it
}
