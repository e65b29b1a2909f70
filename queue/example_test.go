package queue_test

import (
	"context"
	"fmt"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/kubesched/kubesched"
	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/queue"
)

// A pod that NodeAffinity rejected waits until a node event could help
// it, as NodeAffinity's queueing hint decides: a deleted pod could not,
// nor a node without the label the pod asks for; a node with it could.
// kubesched.QueueOptions gives the queue the default plugins'
// registrations and hints.
func Example() {
	clock := testingclock.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	opts := append(kubesched.QueueOptions(fwk.Listers{}), queue.WithClock(clock))
	q, _ := queue.New(opts...)
	q.Add(&v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec:       v1.PodSpec{NodeSelector: map[string]string{"disk": "ssd"}},
	})

	pi, _ := q.Pop(context.Background())
	pi.UnschedulablePlugins = sets.New("NodeAffinity") // from the FitError's Diagnosis
	q.AddUnschedulableIfNotPresent(pi)
	fmt.Println("unschedulable:", len(q.UnschedulablePods()))

	q.MoveAllToActiveOrBackoffQueue(fwk.EventAssignedPodDelete, nil, nil, nil)
	fmt.Println("after a pod was deleted:", len(q.UnschedulablePods()))

	hdd := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "hdd", Labels: map[string]string{"disk": "hdd"}}}
	q.MoveAllToActiveOrBackoffQueue(fwk.EventNodeAdd, nil, hdd, nil)
	fmt.Println("after an hdd node was added:", len(q.UnschedulablePods()))

	clock.Step(10 * time.Second) // past its backoff
	ssd := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: "ssd", Labels: map[string]string{"disk": "ssd"}}}
	q.MoveAllToActiveOrBackoffQueue(fwk.EventNodeAdd, nil, ssd, nil)
	fmt.Println("after an ssd node was added:", len(q.PodsInActiveQ()), "active")
	// Output:
	// unschedulable: 1
	// after a pod was deleted: 1
	// after an hdd node was added: 1
	// after an ssd node was added: 1 active
}
