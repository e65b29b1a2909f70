package cache

import (
	"slices"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	testingclock "k8s.io/utils/clock/testing"
)

// podsOn lists the names of the pods the snapshot has on node, sorted.
func podsOn(t *testing.T, s *Snapshot, nodeName string) []string {
	t.Helper()
	ni, ok := s.Get(nodeName)
	if !ok {
		t.Fatalf("node %s is not in the snapshot %v", nodeName, names(s.Nodes()))
	}
	var out []string
	for _, pi := range ni.Pods() {
		out = append(out, pi.Pod.Name)
	}
	slices.Sort(out)
	return out
}

func TestCacheFollowsEvents(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		events func(t *testing.T, c *Cache)
		// nodes are the snapshot's nodes in order; pods the pods on each.
		nodes []string
		pods  map[string][]string
	}{
		{
			name: "nodes and their pods appear in the snapshot",
			events: func(t *testing.T, c *Cache) {
				mustNode(t, c, node("a", ""))
				must(t, c.AddPod(pod("1", "a", "100m")))
			},
			nodes: []string{"a"}, pods: map[string][]string{"a": {"pod-1"}},
		},
		{
			name: "a pod that arrives before its node waits for it",
			events: func(t *testing.T, c *Cache) {
				must(t, c.AddPod(pod("1", "late", "100m")))
				if got := c.Snapshot().Len(); got != 0 {
					t.Errorf("snapshot has %d nodes before the node arrived, want 0", got)
				}
				mustNode(t, c, node("late", ""))
			},
			nodes: []string{"late"}, pods: map[string][]string{"late": {"pod-1"}},
		},
		{
			name: "a removed node leaves the snapshot while its pods stay cached",
			events: func(t *testing.T, c *Cache) {
				mustNode(t, c, node("a", ""))
				mustNode(t, c, node("b", ""))
				must(t, c.AddPod(pod("1", "a", "")))
				must(t, c.RemoveNode(node("a", "")))
				if c.PodCount() != 1 {
					t.Errorf("PodCount = %d after removing the node, want its pod kept", c.PodCount())
				}
			},
			nodes: []string{"b"},
		},
		{
			name: "a node removed and added again gets back its pods",
			events: func(t *testing.T, c *Cache) {
				mustNode(t, c, node("a", ""))
				must(t, c.AddPod(pod("1", "a", "")))
				must(t, c.RemoveNode(node("a", "")))
				mustNode(t, c, node("a", ""))
			},
			nodes: []string{"a"}, pods: map[string][]string{"a": {"pod-1"}},
		},
		{
			name: "an assumed pod takes room until it is forgotten",
			events: func(t *testing.T, c *Cache) {
				mustNode(t, c, node("a", ""))
				assumed := pod("1", "a", "1")
				must(t, c.AssumePod(assumed))
				if got := podsOn(t, c.Snapshot(), "a"); !slices.Equal(got, []string{"pod-1"}) {
					t.Errorf("pods on a while assumed = %v", got)
				}
				must(t, c.ForgetPod(assumed))
			},
			nodes: []string{"a"},
		},
		{
			name: "the bound pod replaces the assumed one, even on another node",
			events: func(t *testing.T, c *Cache) {
				mustNode(t, c, node("a", ""))
				mustNode(t, c, node("b", ""))
				must(t, c.AssumePod(pod("1", "a", "1")))
				must(t, c.FinishBinding(pod("1", "a", "1")))
				must(t, c.AddPod(pod("1", "b", "1")))
				if assumed, _ := c.IsAssumedPod(pod("1", "b", "")); assumed {
					t.Error("the pod is still assumed after AddPod confirmed it")
				}
			},
			nodes: []string{"a", "b"}, pods: map[string][]string{"b": {"pod-1"}},
		},
		{
			name: "a tombstone removes pods and nodes, also client-go's",
			events: func(t *testing.T, c *Cache) {
				mustNode(t, c, node("a", ""))
				mustNode(t, c, node("b", ""))
				must(t, c.AddPod(pod("1", "a", "")))
				must(t, c.AddPod(pod("2", "a", "")))
				stale := pod("1", "", "")
				must(t, c.RemovePod(DeletedFinalStateUnknown{Key: "default/pod-1", Obj: stale}))
				must(t, c.RemovePod(clientGoTombstone{Key: "default/pod-2", Obj: pod("2", "a", "")}))
				must(t, c.RemoveNode(&clientGoTombstone{Obj: node("b", "")}))
			},
			nodes: []string{"a"},
		},
		{
			name: "nodes are listed one zone at a time",
			events: func(t *testing.T, c *Cache) {
				for _, n := range []*v1.Node{node("a1", "a"), node("a2", "a"), node("a3", "a"), node("b1", "b"), node("c1", "c"), node("b2", "b")} {
					mustNode(t, c, n)
				}
			},
			nodes: []string{"a1", "b1", "c1", "a2", "b2", "a3"},
		},
		{
			name: "a zone change keeps the order until a node joins or leaves, as in kube-scheduler",
			events: func(t *testing.T, c *Cache) {
				for _, n := range []*v1.Node{node("a1", "a"), node("a2", "a"), node("b1", "b")} {
					mustNode(t, c, n)
				}
				c.Snapshot()
				mustNode(t, c, node("a1", "b"))
				if got := names(c.Snapshot().Nodes()); !slices.Equal(got, []string{"a1", "b1", "a2"}) {
					t.Errorf("order right after the zone change = %v, want the old order", got)
				}
				mustNode(t, c, node("c1", "c"))
			},
			nodes: []string{"a2", "b1", "c1", "a1"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := newCache(t)
			tc.events(t, c)
			s := c.Snapshot()
			if got := names(s.Nodes()); !slices.Equal(got, tc.nodes) {
				t.Errorf("snapshot nodes = %v, want %v", got, tc.nodes)
			}
			for _, name := range tc.nodes {
				if got := podsOn(t, s, name); !slices.Equal(got, tc.pods[name]) {
					t.Errorf("pods on %s = %v, want %v", name, got, tc.pods[name])
				}
			}
		})
	}
}

// clientGoTombstone has the shape of client-go's cache.DeletedFinalStateUnknown.
type clientGoTombstone struct {
	Key string
	Obj interface{}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func mustNode(t *testing.T, c *Cache, n *v1.Node) {
	t.Helper()
	if _, err := c.AddNode(n); err != nil {
		t.Fatal(err)
	}
}

func TestCacheRejectsBadEvents(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		event   func(c *Cache) error
		wantErr string
	}{
		{name: "a nil node", event: func(c *Cache) error { _, err := c.AddNode(nil); return err }, wantErr: "nil node"},
		{name: "removing an unknown node", event: func(c *Cache) error { return c.RemoveNode(node("x", "")) }, wantErr: `node "x" is not in the cache`},
		{name: "removing something that is not a node", event: func(c *Cache) error { return c.RemoveNode(pod("1", "a", "")) }, wantErr: "neither a node"},
		{name: "a tombstone of something else", event: func(c *Cache) error { return c.RemovePod(DeletedFinalStateUnknown{Obj: "pod"}) }, wantErr: "neither a pod"},
		{name: "a nil pod", event: func(c *Cache) error { return c.AddPod(nil) }, wantErr: "nil pod"},
		{name: "a pod without UID or name", event: func(c *Cache) error { return c.AddPod(&v1.Pod{Spec: v1.PodSpec{NodeName: "a"}}) }, wantErr: "neither a UID nor a name"},
		{name: "adding an unbound pod", event: func(c *Cache) error { return c.AddPod(pod("1", "", "")) }, wantErr: "not bound"},
		{name: "assuming an unbound pod", event: func(c *Cache) error { return c.AssumePod(pod("1", "", "")) }, wantErr: "not bound"},
		{name: "adding a pod twice", event: func(c *Cache) error { return c.AddPod(pod("added", "a", "")) }, wantErr: "already added"},
		{name: "assuming a pod already added", event: func(c *Cache) error { return c.AssumePod(pod("added", "a", "")) }, wantErr: "cannot be assumed"},
		{name: "updating an unknown pod", event: func(c *Cache) error { return c.UpdatePod(pod("new", "a", "")) }, wantErr: "cannot be updated"},
		{name: "updating an assumed pod", event: func(c *Cache) error { return c.UpdatePod(pod("assumed", "a", "")) }, wantErr: "AddPod confirms it"},
		{name: "a pod that moved node", event: func(c *Cache) error { return c.UpdatePod(pod("added", "b", "")) }, wantErr: "missed events"},
		{name: "removing an unknown pod", event: func(c *Cache) error { return c.RemovePod(pod("new", "a", "")) }, wantErr: "cannot be removed"},
		{name: "removing a pod from another node", event: func(c *Cache) error { return c.RemovePod(pod("added", "b", "")) }, wantErr: "missed events"},
		{name: "forgetting a pod that was added", event: func(c *Cache) error { return c.ForgetPod(pod("added", "a", "")) }, wantErr: "not assumed"},
		{name: "forgetting a pod assumed elsewhere", event: func(c *Cache) error { return c.ForgetPod(pod("assumed", "b", "")) }, wantErr: `assumed on node "a"`},
		{name: "getting an unknown pod", event: func(c *Cache) error { _, err := c.GetPod(pod("new", "", "")); return err }, wantErr: "not in the cache"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := newCache(t)
			mustNode(t, c, node("a", ""))
			must(t, c.AddPod(pod("added", "a", "")))
			must(t, c.AssumePod(pod("assumed", "a", "")))
			before := c.Snapshot()
			err := tc.event(c)
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("error = %v, want one containing %q", err, tc.wantErr)
			}
			if after := c.Snapshot(); after != before {
				t.Error("a rejected event changed the cache")
			}
		})
	}
}

func TestForgettingAPodNoLongerCachedIsNotAnError(t *testing.T) {
	t.Parallel()
	c := newCache(t)
	if err := c.ForgetPod(pod("gone", "a", "")); err != nil {
		t.Errorf("ForgetPod of an unknown pod = %v, want nil", err)
	}
}

func TestAssumedPodsExpire(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		ttl      time.Duration
		finish   bool
		wait     time.Duration
		wantGone bool
	}{
		{name: "a finished binding expires after the ttl", ttl: time.Minute, finish: true, wait: time.Minute + time.Second, wantGone: true},
		{name: "not before the ttl", ttl: time.Minute, finish: true, wait: time.Minute},
		{name: "a binding still in progress never expires", ttl: time.Minute, wait: time.Hour},
		{name: "without a ttl nothing expires, as in kube-scheduler v1.36.3", finish: true, wait: 24 * time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			clock := testingclock.NewFakeClock(time.Unix(0, 0))
			c := newCache(t, WithClock(clock), WithAssumedPodTTL(tc.ttl))
			mustNode(t, c, node("a", ""))
			p := pod("1", "a", "1")
			must(t, c.AssumePod(p))
			if tc.finish {
				must(t, c.FinishBinding(p))
			}
			clock.Step(tc.wait)
			gone := len(c.Snapshot().Nodes()[0].Pods()) == 0
			if gone != tc.wantGone {
				t.Errorf("pod gone = %v after %v, want %v", gone, tc.wait, tc.wantGone)
			}
			if expired := c.ExpireAssumedPods(); len(expired) != 0 {
				t.Errorf("ExpireAssumedPods after Snapshot = %d pods, want 0: Snapshot already expired them", len(expired))
			}
		})
	}
}

func TestExpireAssumedPodsReturnsThePods(t *testing.T) {
	t.Parallel()
	clock := testingclock.NewFakeClock(time.Unix(0, 0))
	c := newCache(t, WithClock(clock), WithAssumedPodTTL(time.Second))
	p := pod("1", "a", "")
	must(t, c.AssumePod(p))
	must(t, c.FinishBinding(p))
	clock.Step(2 * time.Second)
	if got := c.ExpireAssumedPods(); len(got) != 1 || got[0] != p {
		t.Errorf("ExpireAssumedPods = %v, want the assumed pod", got)
	}
	if c.PodCount() != 0 {
		t.Errorf("PodCount = %d after expiry, want 0", c.PodCount())
	}
}

func TestNewRejectsBadOptions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		opt  Option
	}{
		{name: "a nil clock", opt: WithClock(nil)},
		{name: "a negative ttl", opt: WithAssumedPodTTL(-time.Second)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if _, err := New(tc.opt); err == nil {
				t.Error("New succeeded")
			}
		})
	}
}
