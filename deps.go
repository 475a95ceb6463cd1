//go:build tools

// deps.go pins the libraries edgeovn builds on before the code that uses them lands, so that
// parallel work never races on go.mod. It is removed once every import below is used for real.
package main

import (
	_ "github.com/containernetworking/cni/libcni"
	_ "github.com/containernetworking/cni/pkg/skel"
	_ "github.com/containernetworking/cni/pkg/types/100"
	_ "github.com/containernetworking/cni/pkg/version"
	_ "github.com/containernetworking/plugins/pkg/ip"
	_ "github.com/containernetworking/plugins/pkg/ipam"
	_ "github.com/containernetworking/plugins/pkg/ns"
	_ "github.com/containernetworking/plugins/pkg/testutils"
	_ "github.com/containernetworking/plugins/plugins/ipam/host-local/backend/disk"
	_ "github.com/coreos/go-systemd/v22/activation"
	_ "github.com/coreos/go-systemd/v22/daemon"
	_ "github.com/go-logr/logr"
	_ "github.com/ovn-org/libovsdb/cache"
	_ "github.com/ovn-org/libovsdb/client"
	_ "github.com/ovn-org/libovsdb/database/inmemory"
	_ "github.com/ovn-org/libovsdb/model"
	_ "github.com/ovn-org/libovsdb/ovsdb"
	_ "github.com/ovn-org/libovsdb/server"
	_ "github.com/safchain/ethtool"
	_ "github.com/vishvananda/netlink"
	_ "github.com/vishvananda/netns"
	_ "golang.org/x/sync/errgroup"
	_ "k8s.io/api/core/v1"
	_ "k8s.io/apimachinery/pkg/apis/meta/v1"
	_ "k8s.io/client-go/informers"
	_ "k8s.io/client-go/kubernetes"
	_ "k8s.io/client-go/tools/clientcmd"
	_ "k8s.io/client-go/tools/leaderelection"
	_ "k8s.io/client-go/tools/leaderelection/resourcelock"
	_ "k8s.io/client-go/tools/record"
	_ "modernc.org/sqlite"
)
