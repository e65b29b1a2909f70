package podaffinity

// DefaultHardPodAffinityWeight is kube-scheduler's default
// hardPodAffinityWeight.
const DefaultHardPodAffinityWeight int32 = 1
