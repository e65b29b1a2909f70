package preenqueue_test

import (
	"context"
	"errors"
	"fmt"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/kubesched/kubesched"
	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/nodeinfo"
)

// A pod with scheduling gates is not tried until they are all removed:
// Schedule says so, with kube-scheduler's words, instead of placing it.
func ExampleSchedulingGates() {
	nodes := nodeinfo.Build([]*v1.Node{{ObjectMeta: metav1.ObjectMeta{Name: "n1"}}}, nil)
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec:       v1.PodSpec{SchedulingGates: []v1.PodSchedulingGate{{Name: "example.com/quota"}}},
	}
	_, err := kubesched.Schedule(context.Background(), pod, nodes)
	var notTried *framework.NotTriedError
	if errors.As(err, &notTried) {
		fmt.Println(notTried.Plugin+":", err)
	}
	// Output: SchedulingGates: waiting for scheduling gates: [example.com/quota]
}
