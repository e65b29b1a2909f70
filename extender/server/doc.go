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
// kube-scheduler's wire types (k8s.io/kube-scheduler/extender/v1). Bodies
// are limited in size and time; a malformed body gets 400, a too large one
// 413, another method than POST 405, an unknown path 404, each with a JSON
// object {"Error": "..."}. A function's failure is reported as the
// protocol says: in the Error field of a filter or bind answer, and as a
// 500 for prioritize and preempt, whose answers have no such field.
//
// A preempt verb ([Preempt]) is handed the nodes where the scheduler's
// DefaultPreemption would evict pods, with the pods, and answers with the
// nodes it accepts and the pods to evict there, by UID. Pods named by UID
// (nodeCacheCapable) are looked up in the node source; a node it cannot
// place them on is left out of the answer, which rejects it.
//
// The handler holds only its configuration: every request is decoded into
// values of its own, and nothing a request brings is kept for the next.
package server
