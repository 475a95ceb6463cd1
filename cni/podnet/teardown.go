package podnet

import (
	"context"
	"fmt"
)

// Teardown deletes the pod's veth pair by its host end. It succeeds when the link is already
// gone, which is also what happens when the pod's namespace was destroyed: the kernel deletes
// a veth pair with either end's namespace. netns is only used to name the pod in errors; it
// may be empty or already gone, as CNI DEL allows.
func Teardown(ctx context.Context, hostIfName string, netns string) error {
	if hostIfName == "" {
		return fmt.Errorf("tear down pod network in %q: host interface name is empty: %w", netns, ErrInvalidRequest)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("tear down %s: %w", hostIfName, err)
	}
	if err := deleteLink(hostIfName); err != nil {
		return fmt.Errorf("tear down %s (netns %q): %w", hostIfName, netns, err)
	}
	return nil
}
