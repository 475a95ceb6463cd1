package bgp

import (
	"context"
	"io"
	"log/slog"
	"net/netip"
	"slices"
	"testing"

	api "github.com/osrg/gobgp/v3/api"

	"github.com/edgeovn/edgeovn/agent/config"
)

// TestSpeakerSet: Set announces what it is given and withdraws the rest from GoBGP's own
// table; the same set again changes nothing.
func TestSpeakerSet(t *testing.T) {
	ctx := context.Background()
	b := config.BGP{NeighborAS: 65001, ClusterAS: 65000}
	sp, err := StartSpeaker(ctx, SpeakerRequest{BGP: b, RouterID: netip.MustParseAddr("192.0.2.9"), ListenPort: -1,
		Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Stop(false)
	table := func(v6 bool) []string {
		var out []string
		f := family(netip.MustParseAddr("192.0.2.1"))
		if v6 {
			f = family(netip.MustParseAddr("2001:db8::1"))
		}
		if err := sp.srv.ListPath(ctx, &api.ListPathRequest{TableType: api.TableType_GLOBAL, Family: f}, func(d *api.Destination) {
			out = append(out, d.Prefix)
		}); err != nil {
			t.Fatal(err)
		}
		slices.Sort(out)
		return out
	}
	for _, step := range []struct {
		set   []netip.Prefix
		want4 []string
		want6 []string
	}{
		{set: pfx("10.61.0.0/24", "10.61.0.2/32", "fd00:61::/64"), want4: []string{"10.61.0.0/24", "10.61.0.2/32"}, want6: []string{"fd00:61::/64"}},
		{set: pfx("10.61.0.0/24", "10.61.0.2/32", "fd00:61::/64"), want4: []string{"10.61.0.0/24", "10.61.0.2/32"}, want6: []string{"fd00:61::/64"}},
		{set: pfx("10.61.0.0/24"), want4: []string{"10.61.0.0/24"}},
		{set: nil},
	} {
		if err := sp.Set(ctx, step.set); err != nil {
			t.Fatal(err)
		}
		if got := table(false); !slices.Equal(got, step.want4) {
			t.Errorf("after Set(%v): IPv4 table %v, want %v", step.set, got, step.want4)
		}
		if got := table(true); !slices.Equal(got, step.want6) {
			t.Errorf("after Set(%v): IPv6 table %v, want %v", step.set, got, step.want6)
		}
		if got := sp.Announced(); len(got) != len(step.set) {
			t.Errorf("after Set(%v): Announced %v", step.set, got)
		}
	}
}

func TestStatusString(t *testing.T) {
	s := Status{Peers: []PeerStatus{{Address: netip.MustParseAddr("198.51.100.1"), AS: 65001, State: "active", Reason: "why"},
		{Address: netip.MustParseAddr("198.51.100.2"), AS: 65001, State: "established"}},
		Announced: pfx("10.61.0.0/24")}
	want := "peer 198.51.100.1 (as 65001): active (why)\npeer 198.51.100.2 (as 65001): established\nannounced: 1 prefix(es) 10.61.0.0/24\n"
	if got := s.String(); got != want {
		t.Errorf("status:\n%s\nwant:\n%s", got, want)
	}
	if up := s.Up(); up["198.51.100.1"] || !up["198.51.100.2"] {
		t.Errorf("Up %v", up)
	}
}
