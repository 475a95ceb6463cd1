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

// nslookup resolves NAME as the system resolver does (search list, /etc/hosts) and prints
// its addresses in nslookup's form; a name it cannot resolve is exit code 1.
func nslookup(ctx context.Context, s stdio, args []string) int {
	if len(args) != 1 {
		return usage(s, "nslookup", "only `nslookup NAME` is supported, got %q", args)
	}
	addrs, err := net.DefaultResolver.LookupHost(ctx, args[0])
	if err != nil || len(addrs) == 0 {
		fmt.Fprintf(s.err, "** server can't find %s: %v\n", args[0], err)
		return 1
	}
	for _, a := range addrs {
		fmt.Fprintf(s.out, "Name:\t%s\nAddress: %s\n", args[0], a)
	}
	return 0
}
