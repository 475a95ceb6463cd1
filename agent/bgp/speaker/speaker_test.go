package speaker

import (
	"context"
	"io"
	"log/slog"
	"net/netip"
	"slices"
	"testing"
	"time"

	api "github.com/osrg/gobgp/v3/api"

	"github.com/edgeovn/edgeovn/agent/bgp/speakerproto"
)

// TestSpeakerSet: Set announces what it is given and withdraws the rest from GoBGP's own
// table; the same set again changes nothing.
func TestSpeakerSet(t *testing.T) {
	ctx := context.Background()
	sp, err := Start(ctx, Request{Options: testOptions(), Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
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

// testOptions: a speaker with no peer and no listener.
func testOptions() speakerproto.Options {
	return speakerproto.Options{NeighborAS: 65001, ClusterAS: 65000, RouterID: netip.MustParseAddr("192.0.2.9"), ListenPort: -1,
		HoldTime: 9 * time.Second, EBGPMultihop: 1}
}

func pfx(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}
