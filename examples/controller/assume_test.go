package main

import (
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	toolscache "k8s.io/client-go/tools/cache"
)

// volumeAt is the volume disk at version rv, bound to claim when claim
// is not "".
func volumeAt(rv, claim string) *v1.PersistentVolume {
	pv := &v1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "disk", ResourceVersion: rv, Labels: map[string]string{"tier": "fast"}}}
	if claim != "" {
		pv.Spec.ClaimRef = &v1.ObjectReference{Namespace: "default", Name: claim}
	}
	return pv
}

func TestAssumeCacheYieldsToTheInformer(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		// informer is the informer's volume (nil: none); then, if set,
		// its next version, or deleted, the informer's next event
		// about it (a resync otherwise).
		informer, then *v1.PersistentVolume
		deleted        bool
		// steps change the cache, returning the first error.
		steps   func(c *assumeCache[*v1.PersistentVolume]) error
		wantErr string
		// wantClaim is the claim the cache shows disk bound to; "-"
		// when it shows no disk.
		wantClaim string
		// wantAssumed is what the cache holds after an informer event
		// about disk.
		wantAssumed int
	}{
		{
			name:      "an assumed volume is shown while the informer has the version it was made from",
			informer:  volumeAt("5", ""),
			steps:     func(c *assumeCache[*v1.PersistentVolume]) error { return c.Assume(volumeAt("5", "data")) },
			wantClaim: "data", wantAssumed: 1,
		},
		{
			name:      "the informer's newer version is shown instead of what was assumed, which then expires",
			informer:  volumeAt("5", ""),
			then:      volumeAt("6", "other"),
			steps:     func(c *assumeCache[*v1.PersistentVolume]) error { return c.Assume(volumeAt("5", "data")) },
			wantClaim: "other", wantAssumed: 0,
		},
		{
			name:     "a volume made from another version than the informer's is not assumed",
			informer: volumeAt("6", ""),
			steps:    func(c *assumeCache[*v1.PersistentVolume]) error { return c.Assume(volumeAt("5", "data")) },
			wantErr:  `"disk" is out of sync (stored: 6, assume: 5)`, wantClaim: "",
		},
		{
			name:    "a volume the informer does not have is not assumed",
			steps:   func(c *assumeCache[*v1.PersistentVolume]) error { return c.Assume(volumeAt("5", "data")) },
			wantErr: `persistentvolumes "disk" not found`, wantClaim: "-",
		},
		{
			name:     "restoring the version assumed shows the informer's again",
			informer: volumeAt("5", ""),
			steps: func(c *assumeCache[*v1.PersistentVolume]) error {
				err := c.Assume(volumeAt("5", "data"))
				c.Restore(volumeAt("5", "data"))
				return err
			},
			wantClaim: "", wantAssumed: 0,
		},
		{
			name:     "restoring another version, as a write returns it, keeps what was assumed until the informer has it",
			informer: volumeAt("5", ""),
			steps: func(c *assumeCache[*v1.PersistentVolume]) error {
				err := c.Assume(volumeAt("5", "data"))
				c.Restore(volumeAt("6", "data"))
				return err
			},
			wantClaim: "data", wantAssumed: 1,
		},
		{
			name:      "what was assumed about a volume the informer deleted expires",
			informer:  volumeAt("5", ""),
			deleted:   true,
			steps:     func(c *assumeCache[*v1.PersistentVolume]) error { return c.Assume(volumeAt("5", "data")) },
			wantClaim: "-", wantAssumed: 0,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			// The informer never runs: the test sets its store and
			// sends the cache the event itself.
			informer := toolscache.NewSharedIndexInformer(nil, &v1.PersistentVolume{}, 0, toolscache.Indexers{})
			store := informer.GetStore()
			if tt.informer != nil {
				if err := store.Add(tt.informer); err != nil {
					t.Fatal(err)
				}
			}
			c := newAssumeCache[*v1.PersistentVolume](schema.GroupResource{Resource: "persistentvolumes"}, informer)
			err := tt.steps(c)
			if (err == nil) != (tt.wantErr == "") || (err != nil && !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("error %v, want %q", err, tt.wantErr)
			}
			// The informer changes (or resyncs): what the cache shows
			// follows at once, and the event then tidies it up.
			var changed error
			switch {
			case tt.deleted:
				changed = store.Delete(tt.informer)
			case tt.then != nil:
				changed = store.Update(tt.then)
			}
			if changed != nil {
				t.Fatal(changed)
			}
			listed, err := c.List(labels.SelectorFromSet(labels.Set{"tier": "fast"}))
			if err != nil {
				t.Fatal(err)
			}
			got, getErr := c.Get("disk")
			switch {
			case tt.wantClaim == "-":
				if len(listed) != 0 || !apierrors.IsNotFound(getErr) {
					t.Errorf("listed %v, got %v (%v); want no disk", listed, got, getErr)
				}
			case len(listed) != 1 || getErr != nil || listed[0] != got:
				t.Errorf("listed %v, got %v (%v); want the same disk", listed, got, getErr)
			case (got.Spec.ClaimRef == nil && tt.wantClaim != "") || (got.Spec.ClaimRef != nil && got.Spec.ClaimRef.Name != tt.wantClaim):
				t.Errorf("disk is shown bound to %q, want %q", claimRefKey(got), tt.wantClaim)
			}
			switch {
			case tt.deleted:
				c.handler().OnDelete(tt.informer)
			case tt.then != nil:
				c.handler().OnUpdate(tt.informer, tt.then)
			case tt.informer != nil:
				c.handler().OnUpdate(tt.informer, tt.informer)
			}
			if n := c.assumedCount(); n != tt.wantAssumed {
				t.Errorf("%d volumes assumed after the informer's event, want %d", n, tt.wantAssumed)
			}
			if none, err := c.List(labels.SelectorFromSet(labels.Set{"tier": "slow"})); err != nil || len(none) != 0 {
				t.Errorf("a selector no volume matches listed %v (%v)", none, err)
			}
		})
	}
}
