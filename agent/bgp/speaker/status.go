package speaker

import (
	"context"
	"net/netip"
	"strings"

	api "github.com/osrg/gobgp/v3/api"

	"github.com/edgeovn/edgeovn/agent/bgp/speakerproto"
)

// Status lists the peers' sessions and what is announced.
func (s *Speaker) Status(ctx context.Context, d *diagnosis) speakerproto.Status {
	st := speakerproto.Status{Announced: s.Announced()}
	why := d.reason()
	_ = s.srv.ListPeer(ctx, &api.ListPeerRequest{}, func(p *api.Peer) {
		ps := speakerproto.PeerStatus{State: "unknown"}
		if p.State != nil {
			ps.Address, _ = netip.ParseAddr(p.State.NeighborAddress)
			ps.AS = p.State.PeerAsn
			ps.State = strings.ToLower(strings.TrimPrefix(p.State.SessionState.String(), "PeerState_"))
		}
		if t := p.Timers.GetState(); t != nil {
			if ps.Established() && t.Uptime != nil {
				ps.Since = t.Uptime.AsTime()
			} else if !ps.Established() && t.Downtime != nil && t.Downtime.AsTime().Unix() > 0 {
				ps.Since = t.Downtime.AsTime()
			}
		}
		if !ps.Established() {
			ps.Reason = why
			if ps.Reason == "" && s.cfg.PassiveMode {
				ps.Reason = "passive mode: waiting for the peer to connect"
			}
		}
		st.Peers = append(st.Peers, ps)
	})
	return st
}
