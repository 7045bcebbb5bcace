// Command etcd is the stock etcd server; this file only exists so `go build` can pin it.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
