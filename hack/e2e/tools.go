//go:build tools

// This file keeps the main packages the e2e suite builds in go.mod: the
// control plane's binaries come from the module proxy at the versions
// this module pins, never from a download elsewhere.
package e2e

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
)
