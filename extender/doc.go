// Package extender calls scheduler extenders over HTTP as kube-scheduler
// v1.37.2 does, so that a kubesched simulation includes a cluster's
// extenders. A [Client] is built from the same configuration as an entry of
// KubeSchedulerConfiguration's `extenders:` ([configv1.Extender]) and is a
// [fwk.Extender]:
//
//	c, err := extender.New(configv1.Extender{
//		URLPrefix:      "http://127.0.0.1:8888",
//		FilterVerb:     "filter",
//		PrioritizeVerb: "prioritize",
//		Weight:         1,
//	})
//	...
//	f, err := kubesched.DefaultFramework(framework.WithExtender(c))
//
// kubesched.FrameworksFromConfig does this for a configuration's whole
// list, and also makes NodeResourcesFit ignore the managed resources
// marked ignoredByScheduler, as kube-scheduler does.
//
// With a preemptVerb, a Client is also a [fwk.PreemptionExtender]:
// DefaultPreemption sends it its candidate nodes and victims, and keeps
// only the nodes and victims the extender answers with.
//
// Requests and answers are kube-scheduler's wire types
// (k8s.io/kube-scheduler/extender/v1), sent as JSON by POST to
// urlPrefix/verb. Package extender/server is the other end: it serves
// kubesched plugins, or plain functions, as an extender.
package extender
