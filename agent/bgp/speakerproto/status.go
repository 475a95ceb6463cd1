package speakerproto

import (
	"fmt"
	"net/netip"
	"strings"
	"time"
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
	Reason string `json:",omitempty"`
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
