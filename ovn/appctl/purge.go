package appctl

import (
	"context"
	"fmt"
)

// PurgeFlows deletes every flow in ovs-vswitchd's datapath flow cache (`ovs-appctl
// revalidator/purge`): the next packet of each flow is translated again from the OpenFlow
// tables as they are now. Established connections keep going (conntrack is untouched); the
// cost is one upcall per active flow.
func PurgeFlows(ctx context.Context, socket string) error {
	if _, err := Call(ctx, socket, "revalidator/purge"); err != nil {
		return fmt.Errorf("purge datapath flows: %w", err)
	}
	return nil
}
