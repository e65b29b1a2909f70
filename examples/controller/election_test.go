package main

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	clienttesting "k8s.io/client-go/testing"
)

func TestLeaderElectionHandsOverWhenTheLeaderStops(t *testing.T) {
	t.Parallel()
	client := fake.NewClientset()
	// Lease updates fail once refuse is set. (The fake's reactors cannot
	// be added while it is in use.)
	var refuse atomic.Bool
	client.PrependReactor("update", "leases", func(clienttesting.Action) (bool, runtime.Object, error) {
		if refuse.Load() {
			return true, nil, errors.New("the API server is gone")
		}
		return false, nil, nil
	})
	e := election{enabled: true, leaseDuration: 2 * time.Second, renewDeadline: time.Second, retryPeriod: 100 * time.Millisecond, namespace: "kube-system", name: "kubesched"}
	log := slog.New(slog.DiscardHandler)
	var leading atomic.Int32 // how many replicas schedule at once
	var most atomic.Int32
	replica := func(id string, ctx context.Context, ran chan<- string) chan error {
		done := make(chan error, 1)
		e := e
		e.identity = id
		go func() {
			done <- lead(ctx, client, e, log, func(ctx context.Context) error {
				n := leading.Add(1)
				for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
				}
				ran <- id
				<-ctx.Done()
				leading.Add(-1)
				return nil
			})
		}()
		return done
	}
	ran := make(chan string, 2)
	ctxA, stopA := context.WithCancel(context.Background())
	doneA := replica("a", ctxA, ran)
	if got := <-ran; got != "a" {
		t.Fatalf("%s leads first, want a", got)
	}
	ctxB, stopB := context.WithCancel(context.Background())
	defer stopB()
	doneB := replica("b", ctxB, ran)
	select {
	case got := <-ran:
		t.Fatalf("%s leads while a holds the Lease", got)
	case <-time.After(500 * time.Millisecond):
	}
	// a stops and gives the Lease up: b takes over well before the
	// Lease would have expired.
	start := time.Now()
	stopA()
	if err := <-doneA; err != nil {
		t.Errorf("a stopped with %v", err)
	}
	select {
	case got := <-ran:
		if got != "b" {
			t.Fatalf("%s took over, want b", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("b never took over")
	}
	if took := time.Since(start); took > e.leaseDuration {
		t.Errorf("b took over after %v, later than the lease duration %v: a did not release the Lease", took, e.leaseDuration)
	}
	if m := most.Load(); m != 1 {
		t.Errorf("%d replicas scheduled at once", m)
	}

	// b failing to renew (the API server refuses, or another replica
	// took the Lease) stops b with errLostLease.
	refuse.Store(true)
	select {
	case err := <-doneB:
		if !errors.Is(err, errLostLease) {
			t.Errorf("b stopped with %v, want errLostLease", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("b kept leading after losing the Lease")
	}
}
