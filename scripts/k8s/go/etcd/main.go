// etcd, built from the version kubernetes' own module graph pins (go.etcd.io/etcd/server/v3): upstream's
// etcd binary is this one call.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
