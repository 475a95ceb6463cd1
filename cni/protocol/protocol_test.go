package protocol

import (
	"encoding/json"
	"net/netip"
	"reflect"
	"strings"
	"testing"
)

func TestResponseRoundTrip(t *testing.T) {
	in := Response{Add: &AddResult{
		HostInterface: Interface{Name: "0123456789ab_h", MAC: "aa:bb:cc:dd:ee:ff"},
		PodInterface:  Interface{Name: "eth0", MAC: "0a:58:0a:2a:00:05", Sandbox: "/var/run/netns/p"},
		IPs: []IPConfig{
			{Address: netip.MustParsePrefix("10.42.0.5/16"), Gateway: netip.MustParseAddr("10.42.0.1")},
			{Address: netip.MustParsePrefix("fd00:42::5/64")},
		},
		Routes: []Route{{Dst: netip.MustParsePrefix("0.0.0.0/0"), GW: netip.MustParseAddr("10.42.0.1")}},
		MTU:    1400,
	}}
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(string(b), `"gateway"`) != 1 {
		t.Errorf("a missing gateway should be omitted: %s", b)
	}
	var out Response
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(in, out) {
		t.Errorf("round trip changed the response:\n in %+v\nout %+v", in.Add, out.Add)
	}
}

func TestErrorMessage(t *testing.T) {
	tests := []struct {
		err  Error
		want string
	}{
		{Error{Code: CodeTryAgainLater, Msg: "node not ready"}, "node not ready"},
		{Error{Code: CodeInvalidNetns, Msg: "bad netns", Details: "no such file"}, "bad netns: no such file"},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
}

func TestRequestRejectsBadAddress(t *testing.T) {
	var r PodRequest
	err := json.Unmarshal([]byte(`{"command":"CHECK","expectedIPs":["10.0.0.1"]}`), &r)
	if err == nil {
		t.Errorf("a prefix without length decoded as %v", r.ExpectedIPs)
	}
}
