// Command etcdctl is etcd's command line client at the version of the
// etcd server sharq pins (make etcd builds it into bin/etcdctl).
package main

import "go.etcd.io/etcd/etcdctl/v3/ctlv3"

func main() { ctlv3.MustStart() }
