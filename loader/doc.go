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
// (v1) and the kinds
// [github.com/kubesched/kubesched/framework.NewListers] accepts: Namespaces, Services,
// ReplicationControllers, PersistentVolumeClaims and PersistentVolumes
// (v1); ReplicaSets and StatefulSets (apps/v1); StorageClasses, CSINodes,
// CSIDrivers, CSIStorageCapacities and VolumeAttachments
// (storage.k8s.io/v1); ResourceClaims, ResourceSlices, DeviceClasses and
// DeviceTaintRules (resource.k8s.io/v1); and PodDisruptionBudgets
// (policy/v1). Objects of any other kind or version, Events and
// Deployments say, or resource.k8s.io/v1beta2 ResourceSlices, are counted
// in [Cluster.Skipped] and otherwise only checked to be well-formed YAML
// or JSON with an apiVersion and a kind.
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
// sequence, say), they are read with the rest of their document.
package loader
