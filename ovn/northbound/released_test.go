package northbound

import (
	"fmt"
	"net/netip"
	"testing"
	"time"
)

// TestRecordReleased writes releases on a switch and reads them back in release order; a
// second release of an address replaces its record, the switch's other external_ids stay,
// and beyond ReleasedKept the oldest records go.
func TestRecordReleased(t *testing.T) {
	f := newFixture(t)
	spec := ensureClusterAndSubnet(t, f)
	t0 := time.Unix(1_700_000_000, 0).UTC()
	a, b := netip.MustParseAddr("10.42.0.5"), netip.MustParseAddr("10.42.0.3")
	f.mustWrite(t, 1, "record two", func() error {
		return f.c.RecordReleased(f.ctx, spec.Name, []ReleasedAddr{{IP: a, At: t0}, {IP: b, At: t0.Add(time.Second)}})
	})
	got := f.released(t, spec.Name, 2)
	if got[0].IP != a || got[1].IP != b || !got[0].At.Equal(t0) {
		t.Fatalf("released %v, want %s then %s", got, a, b)
	}
	f.mustWrite(t, 1, "release a again", func() error {
		return f.c.RecordReleased(f.ctx, spec.Name, []ReleasedAddr{{IP: a, At: t0.Add(2 * time.Second)}})
	})
	f.waitCache(t, "a released again", func() bool {
		r, _ := f.c.Released(f.ctx, spec.Name)
		return len(r) == 2 && r[1].IP == a
	})
	sw, err := f.c.switchByName(f.ctx, spec.Name)
	if err != nil || sw.ExternalIDs["vendor"] != "edgeovn" {
		t.Fatalf("switch's ownership tags lost: %v %v", sw, err)
	}
	var many []ReleasedAddr
	for i := range ReleasedKept {
		many = append(many, ReleasedAddr{IP: netip.MustParseAddr(fmt.Sprintf("10.42.%d.%d", 1+i/200, 1+i%200)), At: t0.Add(time.Hour + time.Duration(i))})
	}
	f.mustWrite(t, 1, "record many", func() error { return f.c.RecordReleased(f.ctx, spec.Name, many) })
	got = f.released(t, spec.Name, ReleasedKept)
	if got[0].IP != many[0].IP || got[len(got)-1].IP != many[len(many)-1].IP {
		t.Fatalf("kept %s..%s, want the newest %d", got[0].IP, got[len(got)-1].IP, ReleasedKept)
	}
	if err := f.c.RecordReleased(f.ctx, "no-such-switch", many[:1]); err == nil {
		t.Fatal("recorded on a switch that does not exist")
	}
}

func (f fixture) released(t *testing.T, sw string, n int) []ReleasedAddr {
	t.Helper()
	var got []ReleasedAddr
	f.waitCache(t, fmt.Sprintf("%d released records", n), func() bool {
		got, _ = f.c.Released(f.ctx, sw)
		return len(got) == n
	})
	return got
}
