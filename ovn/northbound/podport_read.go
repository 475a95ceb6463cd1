package northbound

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strings"

	"github.com/edgeovn/edgeovn/ovn"
	"github.com/edgeovn/edgeovn/ovn/nbdb"
)

// PodPort is an edgeovn pod port as the northbound database has it.
type PodPort struct {
	Switch string // the switch that holds the port ("" if none does)
	Name   string
	Owner  string // "namespace/name"
	MAC    net.HardwareAddr
	IPs    []netip.Addr
	// StatefulSet is "<name>/<uid>" of the StatefulSet that owned the pod, "" for others.
	StatefulSet string
	// Provider is the attachment's provider, "" for a pod's primary port.
	Provider string
}

// PodPorts lists every edgeovn pod port, sorted by name.
func (c *Client) PodPorts(ctx context.Context) ([]PodPort, error) {
	var lsps []*nbdb.LogicalSwitchPort
	if err := c.nb.WhereCache(isPodPort).List(ctx, &lsps); err != nil {
		return nil, fmt.Errorf("list pod ports from cache: %w", err)
	}
	holder, err := c.portSwitches()
	if err != nil {
		return nil, err
	}
	out := make([]PodPort, 0, len(lsps))
	for _, lsp := range lsps {
		out = append(out, toPodPort(lsp, holder[lsp.UUID]))
	}
	slices.SortFunc(out, func(a, b PodPort) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// PodPort returns the edgeovn pod port called name; ok is false when there is none.
func (c *Client) PodPort(ctx context.Context, name string) (PodPort, bool, error) {
	lsp, err := c.switchPortByName(ctx, name)
	if err != nil {
		return PodPort{}, false, fmt.Errorf("read pod port %s: %w", name, err)
	}
	if lsp == nil || !isPodPort(lsp) {
		return PodPort{}, false, nil
	}
	holders, err := c.switchesHolding(ctx, lsp.UUID)
	if err != nil {
		return PodPort{}, false, err
	}
	sw := ""
	if len(holders) > 0 {
		sw = holders[0].Name
	}
	return toPodPort(lsp, sw), true, nil
}

// portSwitches maps every switch port UUID to the name of the switch holding it.
func (c *Client) portSwitches() (map[string]string, error) {
	switches, err := c.switchRows()
	if err != nil {
		return nil, err
	}
	holder := make(map[string]string)
	for _, sw := range switches {
		for _, p := range sw.Ports {
			holder[p] = sw.Name
		}
	}
	return holder, nil
}

func toPodPort(lsp *nbdb.LogicalSwitchPort, sw string) PodPort {
	p := PodPort{Switch: sw, Name: lsp.Name, Owner: lsp.ExternalIDs[ovn.OwnerKey], StatefulSet: lsp.ExternalIDs[StatefulSetKey],
		Provider: lsp.ExternalIDs[ProviderKey]}
	if len(lsp.Addresses) > 0 {
		if mac, ips, ok := parseAddresses(lsp.Addresses[0]); ok {
			p.MAC, p.IPs = mac, ips
		}
	}
	return p
}
