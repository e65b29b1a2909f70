// Package server serves the scheduler extender protocol, so that
// kube-scheduler (or a kubesched framework, with package extender) can
// call kubesched plugins, or plain functions, over HTTP:
//
//	f, _ := framework.New(framework.WithPlugin(myFilter, 0), framework.WithPlugin(myScore, 1))
//	h, err := server.New(
//		server.Filter("filter", f.Filter),
//		server.Prioritize("prioritize", server.FrameworkPrioritize(f)),
//		server.Bind("bind", bindWithClientGo),
//	)
//	...
//	log.Fatal(h.HTTPServer("127.0.0.1:8888").ListenAndServe())
//
// Each verb is served at "/" + verb and takes a JSON POST of
// kube-scheduler's wire types (k8s.io/kube-scheduler/extender/v1). The
// verbs have no authentication: listen on loopback, beside kube-scheduler,
// as above.
//
// # Limits
//
// A call is refused, with a JSON object {"Error": "..."} giving the reason,
// and logged once ([WithLogger]):
//
//   - 404 at an unknown path, 405 for another method than POST;
//   - 415 unless its Content-Type is application/json, as kube-scheduler
//     sends it;
//   - 413 when its body is larger than [WithMaxRequestBytes] (64 MiB),
//     before it is read when its Content-Length says so;
//   - 503, with Retry-After: 1, when [WithMaxConcurrentCalls] calls (8)
//     are in progress, or its body does not fit in what they leave of
//     [WithMaxInFlightBytes] (twice the request limit): the handler
//     refuses at once rather than queue a call the scheduler would give
//     up on;
//   - 408 when its body is not read within the read timeout ([WithTimeouts]);
//   - 400 when the body is malformed, names a node twice or not at all,
//     or is far denser in JSON objects or nodes than a scheduler's.
//
// All but the last two (and a chunked body's 413) are decided before
// the body is read, so a client
// that sent "Expect: 100-continue" is refused without sending it. The
// body is decoded as it is read, one node at a time, and the filter
// answer's nodes are written one at a time, so that a call holds about 3
// times its body in memory with nodes as kubelets report them, at most
// about 9 times: the request and in-flight limits bound the handler's
// memory. BenchmarkFilterMemory measures it.
//
// A function's failure is reported as the protocol says: in the Error
// field of a filter or bind answer, and as a 500 for prioritize and
// preempt, whose answers have no such field. Its context ends at the
// write timeout; the answer may still be written for a second after, and
// a call answered later than its write timeout is logged.
//
// # Scores
//
// kube-scheduler multiplies a prioritize score by the extender's weight
// and by 10 (MaxNodeScore / MaxExtenderPriority) and adds it to its
// totals unchecked, so scores must lie in 0..10. The handler clamps a
// score outside into the range, and logs the call once with the number
// clamped and the first of them. It clamps rather than refuses because
// kube-scheduler drops a failed prioritize call's scores and says so
// only at verbosity 5: a refusal would lose the extender's whole ranking
// as quietly on the scheduler's side, where clamping keeps its order
// among the scores in range; the log names the function's bug either way.
// [FrameworkPrioritize] rescales its totals into the range itself.
//
// # Preemption
//
// A preempt verb ([Preempt]) is handed the nodes where the scheduler's
// DefaultPreemption would evict pods, with the pods, and answers with the
// nodes it accepts and the pods to evict there, by UID. Pods named by UID
// (nodeCacheCapable) are looked up in the node source; a node it cannot
// place them on is left out of the answer, which rejects it.
//
// The handler holds its configuration and the count of calls in
// progress: every request is decoded into values of its own, and nothing
// a request brings is kept for the next.
package server
