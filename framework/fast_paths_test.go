package framework_test

import (
	"github.com/kubesched/kubesched/cache"
	"github.com/kubesched/kubesched/framework"
	"github.com/kubesched/kubesched/score"
)

// The default plugins and cache.Snapshot take the framework's fast paths:
// a method renamed or retyped on either side fails to compile here
// rather than silently fall back to the slow path.
var (
	_ framework.PodOnlyPreScorer = (*score.ImageLocality)(nil)
	_ framework.PodOnlyPreScorer = (*score.InterPodAffinity)(nil)
	_ framework.PodOnlyPreScorer = (*score.NodeAffinity)(nil)
	_ framework.PodOnlyPreScorer = (*score.NodeResourcesBalancedAllocation)(nil)
	_ framework.PodOnlyPreScorer = (*score.NodeResourcesFit)(nil)
	_ framework.PodOnlyPreScorer = (*score.PodTopologySpread)(nil)
	_ framework.PodOnlyPreScorer = (*score.TaintToleration)(nil)
	_ framework.PodOnlyPreScorer = (*score.VolumeBinding)(nil)

	_ framework.BatchScorer = (*score.DynamicResources)(nil)
	_ framework.BatchScorer = (*score.PodTopologySpread)(nil)
	_ framework.BatchScorer = (*score.VolumeBinding)(nil)

	_ framework.PodAffinitySnapshot = (*cache.Snapshot)(nil)
)
