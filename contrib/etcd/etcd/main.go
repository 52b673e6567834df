// Command etcd is the etcd server at the version sharq pins in its go.mod
// (go.etcd.io/etcd/server/v3), the one its tests run: `make etcd` builds
// it into bin/etcd for contrib/systemd/sharq-etcd.service.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
