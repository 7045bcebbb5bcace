//go:build tools

// Package tools pins s5cmd; it is never compiled.
package tools

import (
	_ "github.com/peak/s5cmd/v2"
)
