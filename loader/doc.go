// Package loader reads cluster state from what kubectl prints, so that a
// dump of a real cluster can be fed to kubesched:
//
//	kubectl get nodes,pods,pvc,pv,storageclasses,csinodes,resourceslices,deviceclasses,resourceclaims,devicetaintrules,pdb -A -o yaml > dump.yaml
//
// [Load] reads files, directories and standard input; [Read] reads one
// stream. Either returns a [Cluster]: the nodes, the pods, and the other
// objects kubesched's plugins read, typed, in input order, ready for
// nodeinfo.Build, framework.WithObjects or sim.New:
//
//	c, err := loader.Load("dump.yaml")
//	...
//	fw, err := kubesched.DefaultFramework(framework.WithObjects(c.Objects...))
//	...
//	nodes := nodeinfo.Build(c.Nodes, c.Bound())
//	for _, pod := range c.Pending() {
//		res, err := fw.Schedule(ctx, pod, nodes)
//		...
//	}
//
// Manifests written by hand, which no API server has seen, want three
// steps more before that (see the sections below): [Cluster.Default]
// sets what the API server would have set, [Cluster.Check] refuses what
// it could not hold (two nodes of one name, say), and
// [Cluster.ExpandWorkloads] makes the pods that Deployments, StatefulSets,
// DaemonSets and Jobs would have:
//
//	c.Default(loader.DefaultOptions{})
//	if err := c.Check(); err != nil {
//		...
//	}
//	if _, err := c.ExpandWorkloads(); err != nil {
//		...
//	}
//
// The input may be any of what kubectl writes or reads:
//
//   - YAML documents separated by "---" (empty and comment-only documents
//     are ignored);
//   - JSON objects, one after another. As kubectl does, Read takes the
//     input for JSON when its first character that is not white space is
//     "{" (so YAML must not begin with a flow mapping);
//   - in either, Lists: a List (v1), as kubectl get -o yaml or -o json
//     writes it, or a typed list, as the API server writes it (any kind
//     ending in "List" that has items, such as PodList), whose items need
//     not say their kind. Lists in items are read too.
//
// The objects kept, each in exactly this API version, are Nodes and Pods
// (v1); in [Cluster.Objects], the kinds
// [github.com/kubesched/kubesched/fwk.NewListers] accepts: Namespaces, Services,
// ReplicationControllers, PersistentVolumeClaims and PersistentVolumes
// (v1); ReplicaSets and StatefulSets (apps/v1); StorageClasses, CSINodes,
// CSIDrivers, CSIStorageCapacities and VolumeAttachments
// (storage.k8s.io/v1); ResourceClaims, ResourceSlices, DeviceClasses and
// DeviceTaintRules (resource.k8s.io/v1); and PodDisruptionBudgets
// (policy/v1); and in [Cluster.Workloads], the controllers of pods no
// plugin reads, for [Cluster.ExpandWorkloads]: Deployments and
// DaemonSets (apps/v1), Jobs (batch/v1) and ResourceClaimTemplates
// (resource.k8s.io/v1).
//
// Older versions of those kinds that an API server may still serve, and
// templates are written in, are converted to the version kept, as the
// API server converts them: ResourceClaims, ResourceSlices,
// DeviceClasses and ResourceClaimTemplates of resource.k8s.io/v1beta1
// and v1beta2, and DeviceTaintRules of v1beta2. v1beta2 has v1's fields; v1beta1 has them
// too, but its requests have an exact request's fields (deviceClassName,
// count...) where v1 has them in "exactly", which they move to when any
// is set, its devices have theirs in "basic", and its slices have
// nodeName "" and allNodes false where v1 has them unset. Nothing of
// these versions is left out, so nothing is refused for not converting.
//
// Objects of any other kind or version, Events and CronJobs say, or
// resource.k8s.io/v1alpha3
// DeviceTaintRules and policy/v1beta1 PodDisruptionBudgets (served
// until 1.25), are counted in [Cluster.Skipped] and otherwise only
// checked to be well-formed YAML or JSON with an apiVersion and a kind.
//
// Objects are decoded as the API server's clients decode them, without
// defaulting: unknown fields, which a newer server may write, are
// ignored; malformed values, a quantity "12x" say, are errors. Kept
// objects lose their metadata.managedFields, most of a dump's size, which
// no plugin reads; everything else, status included, is kept.
//
// Input is read one document at a time, and a List one item at a time,
// so skipped objects cost no memory and a dump may be far larger than
// [MaxDocumentSize], the limit on each object. In YAML, a List's items are
// read one at a time when they are a block sequence under a top-level
// "items:", as kubectl writes them; written otherwise (as a flow
// sequence, say), they are read with the rest of their document. YAML
// anchors and aliases (&base, *base, <<: *base) may be used anywhere,
// across a List's items too: from the first line that may define an
// anchor, a List's items are kept as written as well, and an item with
// an alias to an anchor outside it is read again with them and the rest
// of the document, as one, within MaxDocumentSize. An alias cannot
// refer to another document, as YAML has it.
//
// # What is refused
//
// Read refuses, with the input, document, item and field, and in the
// API server's words, what the API server's validation refuses in what
// kube-scheduler reads, so that a pod the API server would not have
// created is not placed:
//
//	pods.yaml: document 2 (Pod default/web): spec.containers[0].resources.requests[cpu]: Invalid value: "-5": must be greater than or equal to 0
//
// That is, in the requests and limits of pods' containers and init
// containers and in pods' overhead (as limits), and so in the pods that
// workloads' templates make: resource names a container may not ask for
// ("gpu": extended resources need a domain, as in example.com/gpu);
// negative quantities; fractions of extended resources; requests above
// their limits, or of extended resources or hugepages unequal to them
// or without one; hugepages that are not a whole number of pages, or
// without cpu or memory. In pod-level resources: names other than cpu,
// memory and hugepages; the same quantities; requests below their
// containers' sum, and containers' limits above the pod's; any, on a
// Windows pod. As the API server validates a pod after defaulting it,
// pod-level requests that [Cluster.Default] would set from the
// containers' are checked against the pod's limits too. In nodes'
// capacity and allocatable: negative quantities, fractions of what is
// counted in units (pods, extended resources). Objects read from an API
// server pass all this, so every object is checked, at a cost small
// beside decoding. Nothing else is validated: a claim's requests, a
// volume's size or a label's syntax are read as they are.
//
// [Cluster.Check] refuses what spans objects, or needs their defaults
// first: two nodes of one name, or objects of one kind, namespace and
// name, in one input or across several (Load, Merge), named where each
// was read; and an object without a name even after Default, which
// names those with a generateName.
//
// # Objects no API server has seen
//
// Hand-written manifests, and templates such as kube-scheduler's
// scheduler_perf ones, lack what the API server sets when it creates an
// object, which kube-scheduler then reads: a pod with only limits has
// requests equal to them, one without a namespace is in the default
// namespace. [Cluster.Default] sets these, on objects that lack them
// only, and leaves alone any object with a metadata.resourceVersion,
// which an API server has defaulted already; so a dump of a live
// cluster comes out unchanged. It sets:
//
//   - on namespaced objects of every kind without a namespace, the
//     namespace of [DefaultOptions] ("default" unless said);
//   - on objects of every kind with a generateName but no name, as
//     scheduler_perf's templates are, a name: the generateName and five
//     characters, as the API server makes it, but chosen by a hash, so
//     that the same input gives the same names;
//   - on pods, as the API server's defaulting does: containers' and init
//     containers' requests from their limits, for each resource limited
//     but not requested; ports' protocol TCP; on the host's network,
//     host ports equal to container ports; schedulerName
//     default-scheduler;
//   - on pods, as the API server does when it creates a pod: pod-level
//     requests of a pod with pod-level resources (cpu and memory summed
//     from the containers' requests, then any from pod-level limits;
//     hugepages from the containers' limits), and pod (anti-)affinity
//     terms' matchLabelKeys and mismatchLabelKeys merged into their
//     labelSelector, which is all the scheduler reads (topology spread
//     constraints' matchLabelKeys are not merged: kubesched applies them
//     itself, to the same effect);
//   - on pods, as the admission plugins enabled by default do: the
//     priority of the system-cluster-critical and system-node-critical
//     PriorityClasses, which every API server has (the Priority plugin);
//     and five-minute tolerations of not-ready and unreachable nodes,
//     unless tolerated already (DefaultTolerationSeconds);
//   - on nodes without status.allocatable, their status.capacity;
//   - on PersistentVolumeClaims and PersistentVolumes, volumeMode
//     Filesystem; on claims that name no StorageClass (not even ""), the
//     default StorageClass of the input, if any (the DefaultStorageClass
//     admission plugin); on unbound volumes without a phase, phase
//     Available, which the PV controller sets moments after creation;
//   - on StorageClasses, volumeBindingMode Immediate;
//   - on ResourceClaims' device requests and first-available
//     subrequests, allocationMode ExactCount and, for exact counts, count
//     1; on their tolerations, operator Equal;
//   - on ReplicationControllers without a selector, their template's
//     labels.
//
// It sets nothing kube-scheduler does not read (restartPolicy,
// terminationGracePeriodSeconds, imagePullPolicy), and nothing that
// needs objects the input does not keep: the priority of any other
// PriorityClass (a pod that names one keeps no priority, which the
// scheduler reads as 0), requests from a LimitRange, a pod's overhead
// from its RuntimeClass. Quantities are not rounded up to milli-units.
//
// # Workloads become pods
//
// [Cluster.ExpandWorkloads] creates the pending pods that the
// controllers of the input's workloads would create, as they would
// create them, so that a capacity plan can start from Deployments
// rather than pods:
//
//   - a Deployment (replicas 1 unless said), through its ReplicaSet for
//     its template: the input's, if it has one the Deployment controls
//     with that template, else one created and added to Objects, named
//     <deployment>-<pod-template-hash> and owned by the Deployment; its
//     pods, named <replicaset>-<5 characters> and owned by the
//     ReplicaSet, have the pod-template-hash label. The hash is computed
//     as the deployment controller's is (32-bit FNV-1a of the template
//     and the collision count, spelt in the characters of generated
//     names) but of the template's JSON, not of the printing the
//     controller hashes, which kubesched cannot reproduce without
//     another dependency: it is deterministic but not the cluster's;
//   - a ReplicaSet or ReplicationController the input's Deployments do
//     not control: its replicas, named after it and owned by it;
//   - a StatefulSet: pods <name>-<ordinal> for its ordinals (from
//     spec.ordinals.start) with no pod of that name in the input, with
//     the labels statefulset.kubernetes.io/pod-name and
//     apps.kubernetes.io/pod-index, hostname and subdomain, and volumes
//     for the PersistentVolumeClaims <template>-<name>-<ordinal> of its
//     volumeClaimTemplates, created pending and unbound, with the
//     template's StorageClass, where the input lacks them. All ordinals
//     are created at once, as podManagementPolicy Parallel does; pods
//     lack the controller-revision-hash label;
//   - a DaemonSet: a pod for each node that has none of its pods and
//     that the DaemonSet controller would run one on: the node is the
//     template's nodeName if it has one, matches the template's
//     nodeSelector and required node affinity, and has no NoSchedule or
//     NoExecute taint the template's tolerations and the controller's
//     (of nodes not ready, unreachable, under disk, memory or PID
//     pressure, unschedulable, and for pods on the host's network, with
//     the network unavailable) do not tolerate. Each pod has those
//     tolerations, the controller-revision-hash label (hashed as a
//     Deployment's), and a required node affinity for its node's name
//     alone in place of the template's;
//   - a Job neither suspended nor finished: the pods of its first wave
//     it lacks, parallelism of them (1 unless said), fewer when fewer
//     completions remain (by the pods that succeeded or
//     status.succeeded), with the job-name and controller-uid labels
//     the API server gives a Job's template; an Indexed Job's pods take
//     the lowest free completion indexes, in their name, hostname, label
//     and annotation.
//
// Pending pods, made so or given, whose claims name a
// ResourceClaimTemplate of the input and whose status names no claim for
// them (a pod from a manifest, not from a live cluster) then get the
// claims the resource claim controller would create before
// kube-scheduler can try them: named <pod>-<claim>- and five
// characters (both cut in proportion past 57), owned by the pod, with
// the template's labels, annotations and spec and the
// resource.kubernetes.io/pod-claim-name annotation, added to Objects and
// named in the pod's status.resourceClaimStatuses. A claim whose
// template the input lacks gets none: kube-scheduler does not try the
// pod, and says so.
//
// A workload's pods already in the input count against what it creates:
// those whose controller reference names it (or, for a Deployment, a
// ReplicaSet of the input it controls), and those its selector matches
// in its namespace that no controller holds (or, for a Deployment, that
// a ReplicaSet the input lacks named after it holds), neither
// terminated nor being deleted. Pods created are given what
// [Cluster.Default] gives pods, and claims what it gives claims: the
// API server would set it as they are created. Workloads without a
// namespace give their pods none: call Default first. What is created
// has a UID made up of its kind, namespace and name, and a workload
// without a UID is referred to by one made up so. Names are generated
// as the API server generates them from a generateName, with five
// characters that are not random but a hash, so that the same input
// gives the same pods.
package loader
