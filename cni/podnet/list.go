package podnet

import (
	"context"
	"fmt"

	"github.com/containernetworking/plugins/pkg/netlinksafe"
)

// ListHostIfs returns the names of the veths in the current namespace whose names have the
// shape HostIfName gives, for garbage collection.
func ListHostIfs(ctx context.Context) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("list host interfaces: %w", err)
	}
	links, err := netlinksafe.LinkList()
	if err != nil {
		return nil, fmt.Errorf("list host interfaces: %w", err)
	}
	var names []string
	for _, l := range links {
		if l.Type() == "veth" && IsHostIfName(l.Attrs().Name) {
			names = append(names, l.Attrs().Name)
		}
	}
	return names, nil
}
