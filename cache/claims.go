package cache

import (
	"errors"
	"fmt"
	"slices"

	resourceapi "k8s.io/api/resource/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/labels"
)

// claimKey is a ResourceClaim's namespace and name.
type claimKey struct{ namespace, name string }

func keyOfClaim(c *resourceapi.ResourceClaim) (claimKey, error) {
	if c == nil {
		return claimKey{}, errors.New("cache: nil ResourceClaim")
	}
	if c.Name == "" {
		return claimKey{}, errors.New("cache: ResourceClaim has no name")
	}
	return claimKey{c.Namespace, c.Name}, nil
}

// assumedClaim records a claim an assumed pod changed, and what it was.
type assumedClaim struct {
	key  claimKey
	prev *resourceapi.ResourceClaim // nil: the cache did not hold it
}

// AddClaim adds a ResourceClaim, or replaces the cached claim of the same
// namespace and name, as the informer reports it. The informer's version
// replaces an assumed one: the API server has moved on.
func (c *Cache) AddClaim(claim *resourceapi.ResourceClaim) error {
	key, err := keyOfClaim(claim)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.setClaim(key, claim)
	c.unassumeClaim(key)
	return nil
}

// UpdateClaim is [Cache.AddClaim], for an informer's update.
func (c *Cache) UpdateClaim(claim *resourceapi.ResourceClaim) error {
	return c.AddClaim(claim)
}

// RemoveClaim removes the ResourceClaim obj names: a
// *resourceapi.ResourceClaim or a tombstone holding one. A claim not in
// the cache is not an error.
func (c *Cache) RemoveClaim(obj any) error {
	claim, ok := unwrap(obj).(*resourceapi.ResourceClaim)
	if !ok || claim == nil {
		return fmt.Errorf("cache: %T is neither a ResourceClaim nor a tombstone holding one", obj)
	}
	key, err := keyOfClaim(claim)
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.setClaim(key, nil)
	c.unassumeClaim(key)
	return nil
}

// setClaim sets or (with nil) deletes a claim. The caller holds c.mu.
func (c *Cache) setClaim(key claimKey, claim *resourceapi.ResourceClaim) {
	if claim == nil {
		delete(c.claims, key)
	} else {
		c.claims[key] = claim
	}
	c.claimList = nil
}

// unassumeClaim forgets that an assumed pod changed the claim, which the
// informer now reports. The caller holds c.mu.
func (c *Cache) unassumeClaim(key claimKey) {
	for _, st := range c.assumed {
		st.claims = slices.DeleteFunc(st.claims, func(a assumedClaim) bool { return a.key == key })
	}
}

// assumeClaims records claims as an assumed pod leaves them. It returns an
// error, changing nothing, for a nil or unnamed claim or one in another
// namespace than the pod. The caller holds c.mu.
func (c *Cache) assumeClaims(st *podState, claims []*resourceapi.ResourceClaim) error {
	keys := make([]claimKey, len(claims))
	for i, claim := range claims {
		key, err := keyOfClaim(claim)
		if err != nil {
			return err
		}
		if claim.Namespace != st.pod.Namespace {
			return fmt.Errorf("cache: ResourceClaim %s/%s is not in pod %s's namespace", claim.Namespace, claim.Name, nameOf(st.pod))
		}
		keys[i] = key
	}
	for i, claim := range claims {
		st.claims = append(st.claims, assumedClaim{key: keys[i], prev: c.claims[keys[i]]})
		c.setClaim(keys[i], claim)
	}
	return nil
}

// restoreClaims undoes what a forgotten assumed pod did to its claims,
// last change first. The caller holds c.mu.
func (c *Cache) restoreClaims(st *podState) {
	for i := len(st.claims) - 1; i >= 0; i-- {
		a := st.claims[i]
		c.setClaim(a.key, a.prev)
	}
	st.claims = nil
}

// ResourceClaims returns a lister of the cached ResourceClaims, assumed
// changes included, for fwk.Listers.ResourceClaims: a loop that
// assumes each placed pod with its Result's claims never hands a device
// out twice.
func (c *Cache) ResourceClaims() *ClaimLister { return &ClaimLister{c: c} }

// ClaimLister lists the ResourceClaims of a [Cache] as they are at the
// time of the call. It is safe for concurrent use.
type ClaimLister struct{ c *Cache }

// List returns the claims whose labels match selector (all for nil), in
// no particular order. The caller must not modify the slice's claims.
func (l *ClaimLister) List(selector labels.Selector) ([]*resourceapi.ResourceClaim, error) {
	c := l.c
	c.mu.Lock()
	if c.claimList == nil {
		c.claimList = make([]*resourceapi.ResourceClaim, 0, len(c.claims))
		for _, claim := range c.claims {
			c.claimList = append(c.claimList, claim)
		}
	}
	all := c.claimList
	c.mu.Unlock()
	if selector == nil || selector.Empty() {
		return all, nil
	}
	var out []*resourceapi.ResourceClaim
	for _, claim := range all {
		if selector.Matches(labels.Set(claim.Labels)) {
			out = append(out, claim)
		}
	}
	return out, nil
}

// Get returns the claim, or an error for which apierrors.IsNotFound
// reports true.
func (l *ClaimLister) Get(namespace, name string) (*resourceapi.ResourceClaim, error) {
	l.c.mu.Lock()
	claim, ok := l.c.claims[claimKey{namespace, name}]
	l.c.mu.Unlock()
	if !ok {
		return nil, apierrors.NewNotFound(resourceapi.Resource("resourceclaims"), name)
	}
	return claim, nil
}
