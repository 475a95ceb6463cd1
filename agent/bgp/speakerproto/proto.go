package speakerproto

import (
	"net/netip"
	"reflect"
	"slices"
	"time"
)

// Options are the speaker's options (config.BGP's, with the router ID resolved).
type Options struct {
	ClusterAS  uint32
	NeighborAS uint32
	// Neighbors are every peer, IPv4 first.
	Neighbors []netip.Addr
	// RouterID is the BGP identifier (IPv4).
	RouterID            netip.Addr
	AuthPassword        string `json:",omitempty"`
	HoldTime            time.Duration
	GracefulRestart     bool
	GracefulRestartTime time.Duration
	PassiveMode         bool
	EBGPMultihop        int
	// ListenPort is where the speaker accepts sessions: 0 is BGP's 179, -1 none (tests).
	ListenPort int32
}

// Equal says whether o and p configure the same speaker.
func (o Options) Equal(p Options) bool {
	if !slices.Equal(o.Neighbors, p.Neighbors) {
		return false
	}
	o.Neighbors, p.Neighbors = nil, nil
	return reflect.DeepEqual(o, p)
}

// Desired is the full state the node role wants the speaker in.
type Desired struct {
	Options  Options
	Prefixes []netip.Prefix
}

// Report is what the speaker says: its status at each change and every few seconds, or,
// before it exits for want of a speaker, why (Error).
type Report struct {
	Status *Status `json:",omitempty"`
	Error  string  `json:",omitempty"`
}

// ComparePrefix orders prefixes by address, then length: the order of Status.Announced
// and of the announcement.
func ComparePrefix(a, b netip.Prefix) int {
	if c := a.Addr().Compare(b.Addr()); c != 0 {
		return c
	}
	return a.Bits() - b.Bits()
}

// ParentEnv names the environment variable with the node role's PID, by which the speaker
// process checks that its parent is still the one that started it.
const ParentEnv = "EDGEOVN_BGP_PARENT"
