package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
)

// election is how replicas take turns, as kube-scheduler's
// leaderElection settings say: only the holder of a Lease schedules.
type election struct {
	enabled                                   bool
	leaseDuration, renewDeadline, retryPeriod time.Duration
	namespace, name                           string
	// identity names this replica in the Lease; the host name and a
	// random suffix when empty.
	identity string
}

// check refuses durations client-go's leader election would refuse.
func (e election) check() error {
	switch {
	case e.leaseDuration <= e.renewDeadline:
		return fmt.Errorf("-leader-elect-lease-duration %v must be longer than -leader-elect-renew-deadline %v", e.leaseDuration, e.renewDeadline)
	case e.retryPeriod <= 0 || e.renewDeadline <= time.Duration(float64(e.retryPeriod)*leaderelection.JitterFactor):
		return fmt.Errorf("-leader-elect-renew-deadline %v must be longer than %v times -leader-elect-retry-period %v", e.renewDeadline, leaderelection.JitterFactor, e.retryPeriod)
	case e.namespace == "" || e.name == "":
		return errors.New("-leader-elect-resource-namespace and -leader-elect-resource-name must name the Lease")
	}
	return nil
}

// errLostLease is run's error when another replica took the Lease:
// like kube-scheduler, the replica stops and lets its restart make it a
// standby again.
var errLostLease = errors.New("lost the leader election Lease")

// lead waits for the Lease, then runs schedule with a context that ends
// when the Lease is lost or ctx is done, and gives the Lease up on the
// way out so that a standby takes over at once. It returns schedule's
// error, or errLostLease when the Lease was lost while ctx was not done.
func lead(ctx context.Context, client kubernetes.Interface, e election, log *slog.Logger, schedule func(context.Context) error) error {
	id := e.identity
	if id == "" {
		host, err := os.Hostname()
		if err != nil {
			return fmt.Errorf("leader election identity: %w", err)
		}
		b := make([]byte, 4)
		if _, err := rand.Read(b); err != nil {
			return err
		}
		id = host + "_" + hex.EncodeToString(b)
	}
	done := make(chan error, 1)
	var started atomic.Bool
	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock: &resourcelock.LeaseLock{
			LeaseMeta:  metav1.ObjectMeta{Namespace: e.namespace, Name: e.name},
			Client:     client.CoordinationV1(),
			LockConfig: resourcelock.ResourceLockConfig{Identity: id},
		},
		LeaseDuration:   e.leaseDuration,
		RenewDeadline:   e.renewDeadline,
		RetryPeriod:     e.retryPeriod,
		ReleaseOnCancel: true,
		Name:            e.name,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(ctx context.Context) {
				started.Store(true)
				log.Info("leading", "lease", e.namespace+"/"+e.name, "identity", id)
				done <- schedule(ctx)
			},
			OnStoppedLeading: func() {},
			OnNewLeader: func(leader string) {
				if leader != id {
					log.Info("standing by", "lease", e.namespace+"/"+e.name, "leader", leader)
				}
			},
		},
	})
	if err != nil {
		return err
	}
	elector.Run(ctx)
	// Run has returned: ctx is done or the Lease is lost, and schedule's
	// context is cancelled either way. Wait for schedule if it ran. (If
	// ctx ended just as the Lease was taken, schedule may start after
	// this; it then sees its context done and returns at once.)
	var runErr error
	if started.Load() {
		runErr = <-done
	}
	if ctx.Err() == nil && runErr == nil {
		return errLostLease
	}
	return runErr
}
