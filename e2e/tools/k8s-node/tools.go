//go:build tools

// Package tools only pins the node binaries we build for real nodes (e2e/real-node.sh): the
// kubelet and kube-proxy of the same release as the control plane (e2e/tools/k8s). A module of
// its own so that adding them never changes the control plane's cache key (e2e/tools.sh).
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
