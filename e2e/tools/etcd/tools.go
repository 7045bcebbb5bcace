//go:build tools

// Package tools pins etcdctl; it is never compiled.
package tools

import (
	_ "go.etcd.io/etcd/etcdctl/v3"
)
