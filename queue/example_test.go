package queue_test

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubesched/kubesched/queue"
)

// A pod that NodeAffinity rejected waits until a node event could help
// it; a deleted pod could not.
func Example() {
	clock := queue.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	q, _ := queue.New(queue.WithClock(clock))
	q.Add(&v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"}})

	pi, _ := q.Pop(context.Background())
	pi.UnschedulablePlugins = sets.New("NodeAffinity") // from the FitError's Diagnosis
	q.AddUnschedulableIfNotPresent(pi)
	fmt.Println("unschedulable:", len(q.UnschedulablePods()))

	q.MoveAllToActiveOrBackoffQueue(queue.EventAssignedPodDelete, nil, nil, nil)
	fmt.Println("after a pod was deleted:", len(q.UnschedulablePods()))

	clock.Step(10 * time.Second) // past its backoff
	q.MoveAllToActiveOrBackoffQueue(queue.EventNodeAdd, nil, nil, nil)
	fmt.Println("after a node was added:", len(q.PodsInActiveQ()), "active")
	// Output:
	// unschedulable: 1
	// after a pod was deleted: 1
	// after a node was added: 1 active
}
