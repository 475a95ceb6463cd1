package speakerproto

import (
	"bytes"
	"encoding/json"
	"net/netip"
	"reflect"
	"testing"
	"time"
)

func TestStatusString(t *testing.T) {
	s := Status{Peers: []PeerStatus{{Address: netip.MustParseAddr("198.51.100.1"), AS: 65001, State: "active", Reason: "why"},
		{Address: netip.MustParseAddr("198.51.100.2"), AS: 65001, State: "established"}},
		Announced: []netip.Prefix{netip.MustParsePrefix("10.61.0.0/24")}}
	want := "peer 198.51.100.1 (as 65001): active (why)\npeer 198.51.100.2 (as 65001): established\nannounced: 1 prefix(es) 10.61.0.0/24\n"
	if got := s.String(); got != want {
		t.Errorf("status:\n%s\nwant:\n%s", got, want)
	}
	if up := s.Up(); up["198.51.100.1"] || !up["198.51.100.2"] {
		t.Errorf("Up %v", up)
	}
}

// TestDesiredLines: a Desired survives a JSON line both ways, and Options.Equal tells a
// changed neighbour list.
func TestDesiredLines(t *testing.T) {
	d := Desired{Options: Options{ClusterAS: 65000, NeighborAS: 65001, RouterID: netip.MustParseAddr("192.0.2.9"),
		Neighbors: []netip.Addr{netip.MustParseAddr("192.0.2.1"), netip.MustParseAddr("2001:db8::1")},
		HoldTime:  9 * time.Second, GracefulRestart: true, GracefulRestartTime: time.Minute, EBGPMultihop: 1},
		Prefixes: []netip.Prefix{netip.MustParsePrefix("10.61.0.0/24"), netip.MustParsePrefix("fd00:61::5/128")}}
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(d); err != nil {
		t.Fatal(err)
	}
	if bytes.Count(buf.Bytes(), []byte("\n")) != 1 {
		t.Fatalf("not one line: %q", buf.String())
	}
	var got Desired
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, d) || !got.Options.Equal(d.Options) {
		t.Errorf("round trip: %+v, want %+v", got, d)
	}
	o := d.Options
	o.Neighbors = o.Neighbors[:1]
	if o.Equal(d.Options) {
		t.Error("Equal: a neighbour less is the same speaker")
	}
	o = d.Options
	o.AuthPassword = "x"
	if o.Equal(d.Options) {
		t.Error("Equal: a password changed is the same speaker")
	}
}
