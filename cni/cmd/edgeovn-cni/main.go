package main

import (
	"context"
	"os/signal"
	"syscall"

	"github.com/containernetworking/cni/pkg/skel"
	"github.com/edgeovn/edgeovn/cni/plugin"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	skel.PluginMainFuncs(plugin.Funcs(ctx), plugin.Versions, plugin.About)
}
