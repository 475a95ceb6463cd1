package bgp

import (
	"bufio"
	"context"
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"

	api "github.com/osrg/gobgp/v3/api"
)

// Status is the speaker's state for `edgeovn status` and the metrics.
type Status struct {
	Peers     []PeerStatus
	Announced []netip.Prefix
}

// PeerStatus is one neighbour's session.
type PeerStatus struct {
	Address netip.Addr
	AS      uint32
	// State is BGP's FSM state in lower case: idle, connect, active, opensent,
	// openconfirm, established.
	State string
	// Since is when the session came up (established) or went down (otherwise); zero: never.
	Since time.Time
	// Reason says why a session that is not established is down, when that can be told.
	Reason string
}

// Established says whether the session is up.
func (p PeerStatus) Established() bool { return p.State == "established" }

// Up maps each peer to whether its session is established.
func (s Status) Up() map[string]bool {
	out := make(map[string]bool, len(s.Peers))
	for _, p := range s.Peers {
		out[p.Address.String()] = p.Established()
	}
	return out
}

// String is the status as `edgeovn status` prints it.
func (s Status) String() string {
	var b strings.Builder
	for _, p := range s.Peers {
		fmt.Fprintf(&b, "peer %s (as %d): %s", p.Address, p.AS, p.State)
		if !p.Since.IsZero() {
			fmt.Fprintf(&b, " for %s", time.Since(p.Since).Round(time.Second))
		}
		if p.Reason != "" {
			fmt.Fprintf(&b, " (%s)", p.Reason)
		}
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "announced: %d prefix(es)", len(s.Announced))
	for _, p := range s.Announced {
		fmt.Fprintf(&b, " %s", p)
	}
	b.WriteByte('\n')
	return b.String()
}

// Status lists the peers' sessions and what is announced.
func (s *Speaker) Status(ctx context.Context, d *diagnosis) Status {
	st := Status{Announced: s.Announced()}
	why := d.reason()
	_ = s.srv.ListPeer(ctx, &api.ListPeerRequest{}, func(p *api.Peer) {
		ps := PeerStatus{State: "unknown"}
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

// diagnosis tells why sessions do not come up from the kernel's TCP MD5 counters of this
// network namespace (/proc/net/netstat), counted from the speaker's start: a peer with a
// different password, or none where one is set, is otherwise silent (the kernel drops its
// segments). Which counter rises depends on which side's socket the segment meets (GoBGP
// could not put the key on its IPv6 listener here, so a mismatch showed as "unexpected"), so
// with a password set any of them means the passwords disagree.
type diagnosis struct {
	password bool
	base     map[string]uint64
}

var md5Counters = []string{"TCPMD5Failure", "TCPMD5NotFound", "TCPMD5Unexpected"}

func newDiagnosis(password bool) *diagnosis {
	return &diagnosis{password: password, base: tcpCounters()}
}

// reason is the MD5 failure seen since the start, or "".
func (d *diagnosis) reason() string {
	now := tcpCounters()
	for _, c := range md5Counters {
		if now[c] <= d.base[c] {
			continue
		}
		if d.password {
			return fmt.Sprintf("TCP MD5 authentication fails (kernel counter %s): auth-password differs from the peer's, or the peer has none", c)
		}
		return fmt.Sprintf("the peer signs with TCP MD5 (kernel counter %s): it has a password and auth-password is not set here", c)
	}
	return ""
}

// tcpCounters reads the TcpExt counters of /proc/net/netstat; none when unreadable.
func tcpCounters() map[string]uint64 {
	out := map[string]uint64{}
	f, err := os.Open("/proc/net/netstat")
	if err != nil {
		return out
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	var names []string
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) == 0 || fs[0] != "TcpExt:" {
			continue
		}
		if names == nil {
			names = fs[1:]
			continue
		}
		for i, v := range fs[1:] {
			if i < len(names) {
				out[names[i]], _ = strconv.ParseUint(v, 10, 64)
			}
		}
		break
	}
	return out
}

type apiWatchResponse = api.WatchEventResponse

// watchPeers asks for the peers' state changes.
func watchPeers() *api.WatchEventRequest {
	return &api.WatchEventRequest{Peer: &api.WatchEventRequest_Peer{}}
}
