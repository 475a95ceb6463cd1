package speaker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"slices"
	"sync"
	"time"

	api "github.com/osrg/gobgp/v3/api"
	"github.com/osrg/gobgp/v3/pkg/server"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/edgeovn/edgeovn/agent/bgp/speakerproto"
)

// Request is what a Speaker starts with.
type Request struct {
	speakerproto.Options
	Log *slog.Logger
}

// Speaker is a GoBGP server with this host's peers, announcing what Set was given last.
type Speaker struct {
	srv *server.BgpServer
	cfg Request
	log *slog.Logger

	mu        sync.Mutex
	announced map[netip.Prefix]bool
}

// Start starts the BGP server and configures every neighbour; the sessions come up
// on their own (or, with passive mode, when the peers connect).
func Start(ctx context.Context, req Request) (*Speaker, error) {
	srv := server.NewBgpServer(server.LoggerOption(newLogger(req.Log)))
	go srv.Serve()
	s := &Speaker{srv: srv, cfg: req, log: req.Log, announced: map[netip.Prefix]bool{}}
	global := &api.Global{Asn: req.ClusterAS, RouterId: req.RouterID.String(), ListenPort: req.ListenPort}
	if err := srv.StartBgp(ctx, &api.StartBgpRequest{Global: global}); err != nil {
		srv.Stop()
		return nil, fmt.Errorf("start bgp (as %d, router id %s): %w", req.ClusterAS, req.RouterID, err)
	}
	for _, n := range req.Neighbors {
		if err := srv.AddPeer(ctx, &api.AddPeerRequest{Peer: s.peer(n)}); err != nil {
			srv.Stop()
			return nil, fmt.Errorf("add bgp neighbor %s (as %d): %w", n, req.NeighborAS, err)
		}
	}
	return s, nil
}

// peer is neighbour n's configuration: Kube-OVN's speaker's.
func (s *Speaker) peer(n netip.Addr) *api.Peer {
	c := s.cfg
	hold := uint64(c.HoldTime / time.Second)
	p := &api.Peer{
		Conf:      &api.PeerConf{NeighborAddress: n.String(), PeerAsn: c.NeighborAS, AuthPassword: c.AuthPassword},
		Timers:    &api.Timers{Config: &api.TimersConfig{HoldTime: hold, KeepaliveInterval: max(hold/3, 1), ConnectRetry: 5}},
		Transport: &api.Transport{PassiveMode: c.PassiveMode},
		AfiSafis:  []*api.AfiSafi{{Config: &api.AfiSafiConfig{Family: family(n), Enabled: true}}},
	}
	if c.EBGPMultihop > 1 && c.NeighborAS != c.ClusterAS {
		p.EbgpMultihop = &api.EbgpMultihop{Enabled: true, MultihopTtl: uint32(c.EBGPMultihop)}
	}
	if c.GracefulRestart {
		// Not LocalRestarting (Kube-OVN sets it): with the R bit on every start, FRR 8.4 took
		// the routes into its table but installed none of them (TestBGPGracefulRestart).
		p.GracefulRestart = &api.GracefulRestart{Enabled: true, RestartTime: uint32(c.GracefulRestartTime / time.Second)}
		p.AfiSafis[0].MpGracefulRestart = &api.MpGracefulRestart{Config: &api.MpGracefulRestartConfig{Enabled: true}}
	}
	return p
}

func family(a netip.Addr) *api.Family {
	if a.Is4() {
		return &api.Family{Afi: api.Family_AFI_IP, Safi: api.Family_SAFI_UNICAST}
	}
	return &api.Family{Afi: api.Family_AFI_IP6, Safi: api.Family_SAFI_UNICAST}
}

// Set announces want and withdraws what was announced and is not in it. Applying the same
// set again changes nothing; a prefix that fails stays as it was and the next Set retries it.
func (s *Speaker) Set(ctx context.Context, want []netip.Prefix) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	keep := make(map[netip.Prefix]bool, len(want))
	for _, p := range want {
		keep[p] = true
		if s.announced[p] {
			continue
		}
		if _, err := s.srv.AddPath(ctx, &api.AddPathRequest{Path: path(p)}); err != nil {
			errs = append(errs, fmt.Errorf("announce %s: %w", p, err))
			continue
		}
		s.announced[p] = true
		s.log.Info("bgp route announced", "prefix", p.String())
	}
	for p := range s.announced {
		if keep[p] {
			continue
		}
		if err := s.srv.DeletePath(ctx, &api.DeletePathRequest{Family: family(p.Addr()), Path: path(p)}); err != nil {
			errs = append(errs, fmt.Errorf("withdraw %s: %w", p, err))
			continue
		}
		delete(s.announced, p)
		s.log.Info("bgp route withdrawn", "prefix", p.String())
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	return nil
}

// Announced returns what is announced, sorted.
func (s *Speaker) Announced() []netip.Prefix {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]netip.Prefix, 0, len(s.announced))
	for p := range s.announced {
		out = append(out, p)
	}
	slices.SortFunc(out, speakerproto.ComparePrefix)
	return out
}

// path is prefix p from this host. The next hop is left unspecified: GoBGP sends each peer
// the session's local address, this host's own address toward that peer (Kube-OVN #4139:
// never a pod's).
func path(p netip.Prefix) *api.Path {
	nlri := mustAny(&api.IPAddressPrefix{Prefix: p.Addr().String(), PrefixLen: uint32(p.Bits())})
	origin := mustAny(&api.OriginAttribute{Origin: 0}) // IGP
	if p.Addr().Is4() {
		return &api.Path{Family: family(p.Addr()), Nlri: nlri,
			Pattrs: []*anypb.Any{origin, mustAny(&api.NextHopAttribute{NextHop: "0.0.0.0"})}}
	}
	reach := mustAny(&api.MpReachNLRIAttribute{Family: family(p.Addr()), NextHops: []string{"::"}, Nlris: []*anypb.Any{nlri}})
	return &api.Path{Family: family(p.Addr()), Nlri: nlri, Pattrs: []*anypb.Any{origin, reach}}
}

func mustAny(m proto.Message) *anypb.Any {
	a, err := anypb.New(m)
	if err != nil {
		panic(fmt.Sprintf("marshal %T: %v", m, err)) // only fails for a nil message
	}
	return a
}

// Stop ends the speaker. With graceful restart (and graceful true) it sends nothing and
// leaves the sessions to the process exit: the kernel closes them without a NOTIFICATION,
// so the peers keep the routes for the restart time (RFC 4724) instead of
// withdrawing them. Without it every session is closed with a Cease (the peers withdraw
// at once).
func (s *Speaker) Stop(graceful bool) {
	if graceful && s.cfg.GracefulRestart {
		s.log.Info("bgp speaker stopping with graceful restart: the peers keep this host's routes for the restart time",
			"restart_time", s.cfg.GracefulRestartTime)
		return
	}
	s.srv.Stop()
	s.log.Info("bgp speaker stopped: sessions closed, routes withdrawn")
}
