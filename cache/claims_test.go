package cache

import (
	"strings"
	"testing"

	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
)

func claim(name, device string) *resourceapi.ResourceClaim {
	c := &resourceapi.ResourceClaim{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, Labels: map[string]string{"app": name}}}
	if device != "" {
		c.Status.Allocation = &resourceapi.AllocationResult{Devices: resourceapi.DeviceAllocationResult{
			Results: []resourceapi.DeviceRequestAllocationResult{{Request: "r", Driver: "d", Pool: "p", Device: device}},
		}}
	}
	return c
}

// allocatedDevice returns the device the cached claim holds, "" for none
// and "missing" when the cache has no such claim.
func allocatedDevice(c *Cache, name string) string {
	got, err := c.ResourceClaims().Get("default", name)
	switch {
	case apierrors.IsNotFound(err):
		return "missing"
	case err != nil:
		return err.Error()
	case got.Status.Allocation == nil:
		return ""
	}
	return got.Status.Allocation.Devices.Results[0].Device
}

func TestClaimsFollowInformerEventsAndAssumedPods(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		events func(t *testing.T, c *Cache)
		want   map[string]string // claim -> allocated device
	}{
		{
			name: "an added claim is listed as the informer reports it",
			events: func(t *testing.T, c *Cache) {
				must(t, c.AddClaim(claim("a", "")))
			},
			want: map[string]string{"a": "", "b": "missing"},
		},
		{
			name: "an assumed pod's claim replaces the cached one",
			events: func(t *testing.T, c *Cache) {
				must(t, c.AddClaim(claim("a", "")))
				must(t, c.AssumePod(pod("1", "n", ""), claim("a", "gpu-0")))
			},
			want: map[string]string{"a": "gpu-0"},
		},
		{
			name: "forgetting the pod gives the claim back as it was",
			events: func(t *testing.T, c *Cache) {
				must(t, c.AddClaim(claim("a", "")))
				p := pod("1", "n", "")
				must(t, c.AssumePod(p, claim("a", "gpu-0")))
				must(t, c.ForgetPod(p))
			},
			want: map[string]string{"a": ""},
		},
		{
			name: "forgetting a pod whose claim the cache never held removes it",
			events: func(t *testing.T, c *Cache) {
				p := pod("1", "n", "")
				must(t, c.AssumePod(p, claim("a", "gpu-0")))
				must(t, c.ForgetPod(p))
			},
			want: map[string]string{"a": "missing"},
		},
		{
			name: "an informer update after assuming wins over forgetting",
			events: func(t *testing.T, c *Cache) {
				must(t, c.AddClaim(claim("a", "")))
				p := pod("1", "n", "")
				must(t, c.AssumePod(p, claim("a", "gpu-0")))
				must(t, c.UpdateClaim(claim("a", "gpu-7")))
				must(t, c.ForgetPod(p))
			},
			want: map[string]string{"a": "gpu-7"},
		},
		{
			name: "a confirmed pod keeps its claims",
			events: func(t *testing.T, c *Cache) {
				p := pod("1", "n", "")
				must(t, c.AssumePod(p, claim("a", "gpu-0")))
				must(t, c.AddPod(p))
			},
			want: map[string]string{"a": "gpu-0"},
		},
		{
			name: "a removed claim is gone, also through a tombstone",
			events: func(t *testing.T, c *Cache) {
				must(t, c.AddClaim(claim("a", "")))
				must(t, c.AddClaim(claim("b", "")))
				must(t, c.RemoveClaim(claim("a", "")))
				must(t, c.RemoveClaim(DeletedFinalStateUnknown{Key: "default/b", Obj: claim("b", "")}))
			},
			want: map[string]string{"a": "missing", "b": "missing"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := New()
			must(t, err)
			tt.events(t, c)
			for name, want := range tt.want {
				if got := allocatedDevice(c, name); got != want {
					t.Errorf("claim %s holds %q, want %q", name, got, want)
				}
			}
			list, err := c.ResourceClaims().List(labels.Everything())
			must(t, err)
			present := 0
			for _, w := range tt.want {
				if w != "missing" {
					present++
				}
			}
			if len(list) != present {
				t.Errorf("List returned %d claims, want %d", len(list), present)
			}
		})
	}
}

func TestClaimEventsRejectBadInput(t *testing.T) {
	t.Parallel()
	other := claim("x", "gpu-0")
	other.Namespace = "kube-system"
	tests := []struct {
		name    string
		event   func(c *Cache) error
		wantErr string
	}{
		{name: "a nil claim", event: func(c *Cache) error { return c.AddClaim(nil) }, wantErr: "nil ResourceClaim"},
		{name: "a claim without name", event: func(c *Cache) error { return c.AddClaim(claim("", "")) }, wantErr: "no name"},
		{name: "a pod removal event", event: func(c *Cache) error { return c.RemoveClaim(pod("1", "n", "")) }, wantErr: "neither a ResourceClaim"},
		{name: "an assumed claim in another namespace", event: func(c *Cache) error { return c.AssumePod(pod("1", "n", ""), other) }, wantErr: "not in pod"},
		{name: "an assumed nil claim", event: func(c *Cache) error { return c.AssumePod(pod("1", "n", ""), nil) }, wantErr: "nil ResourceClaim"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c, err := New()
			must(t, err)
			err = tt.event(c)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("got %v, want an error containing %q", err, tt.wantErr)
			}
			if c.PodCount() != 0 {
				t.Errorf("a rejected AssumePod left %d pods in the cache", c.PodCount())
			}
			if list, _ := c.ResourceClaims().List(nil); len(list) != 0 {
				t.Errorf("a rejected event left %d claims", len(list))
			}
		})
	}
}
