package queue

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"

	"github.com/kubesched/kubesched/fwk"
	"github.com/kubesched/kubesched/names"
)

// TestConcurrentUse drives every entry point from several goroutines
// while Run flushes; run with -race it checks the queue's locking, and
// that no call fails.
func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	q, clock := newTestQueue(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const perProducer = 150
	var producers, workers sync.WaitGroup
	for w := range 2 {
		producers.Go(func() {
			for i := range perProducer {
				p := pendingPod(fmt.Sprintf("w%d-%d", w, i), int32(i%3))
				if err := q.Add(p); err != nil {
					t.Error(err)
				}
				if i%5 == 0 {
					updated := p.DeepCopy()
					updated.Labels["v"] = "2"
					if err := q.Update(p, updated); err != nil {
						t.Error(err)
					}
				}
				if i%11 == 0 {
					q.Delete(p)
				}
				q.MoveAllToActiveOrBackoffQueue(fwk.EventAssignedPodDelete, nil, nil, nil)
				q.AssignedPodAdded(&v1.Pod{})
				clock.Step(100 * time.Millisecond)
				q.FlushBackoffQCompleted()
				q.FlushUnschedulablePodsLeftover()
			}
		})
	}
	for range 2 {
		workers.Go(func() {
			for {
				pi, err := q.Pop(ctx)
				if err != nil {
					return
				}
				if pi.Attempts > 3 || pi.Pod.Name[len(pi.Pod.Name)-1]%2 == 0 {
					q.Done(pi.Pod)
					continue
				}
				pi.UnschedulablePlugins = sets.New(names.NodeResourcesFit)
				if err := q.AddUnschedulableIfNotPresent(pi); err != nil {
					t.Error(err)
				}
			}
		})
	}
	go q.Run(ctx)
	producers.Wait()
	cancel()
	workers.Wait()
	q.Close()
}
