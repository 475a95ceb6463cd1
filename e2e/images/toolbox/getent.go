package main

import (
	"context"
	"fmt"
	"net"
)

// getent supports the hosts database: `getent hosts NAME` prints "ADDRESS NAME" for each
// address the system resolver (/etc/hosts, then DNS with the search list) finds; an unknown
// name is exit code 2.
func getent(ctx context.Context, s stdio, args []string) int {
	if len(args) != 2 || args[0] != "hosts" {
		return usage(s, "getent", "only `getent hosts NAME` is supported, got %q", args)
	}
	addrs, err := net.DefaultResolver.LookupHost(ctx, args[1])
	if err != nil || len(addrs) == 0 {
		return 2
	}
	for _, a := range addrs {
		fmt.Fprintf(s.out, "%-15s %s\n", a, args[1])
	}
	return 0
}
