package harness

import (
	"context"
	"fmt"
	"os"
	"strings"
)

// FreshHostOVS gives the rig's host the Open vSwitch of a host's first boot: it stops
// ovn-controller, ovs-vswitchd and the Open_vSwitch database server by PID, removes the
// database file and the network devices they leave behind (links, such as br-int's), and starts
// the three again on an empty database, as the rig first started them. Nothing else of the rig
// (central, API server, the caller's own processes) is touched.
func (r *Rig) FreshHostOVS(ctx context.Context, links ...string) error {
	for _, name := range []string{"ovn-controller", "ovs-vswitchd", vswitchDB.name} {
		p, err := r.Daemon(name)
		if err != nil {
			return err
		}
		if err := p.Stop(); err != nil {
			return fmt.Errorf("fresh host ovs: %w", err)
		}
	}
	if err := os.Remove(r.path(vswitchDB.stem + ".db")); err != nil {
		return fmt.Errorf("fresh host ovs: remove the open_vswitch database: %w", err)
	}
	for _, l := range links {
		out, err := r.Run(ctx, "ip", "link", "del", l)
		if err != nil && !strings.Contains(string(out), "Cannot find device") {
			return fmt.Errorf("fresh host ovs: %w", err)
		}
	}
	return r.startHostOVS(ctx, nil)
}
