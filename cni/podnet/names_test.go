package podnet

import "testing"

func TestHostIfName(t *testing.T) {
	tests := []struct {
		id, want string
		isHost   bool
	}{
		{"0123456789abcdef0123", "0123456789ab_h", true},
		{"0123456789ab", "0123456789ab_h", true},
		{"short", "short_h", false},
		{"", "_h", false},
	}
	for _, tt := range tests {
		got := HostIfName(tt.id)
		if got != tt.want {
			t.Errorf("HostIfName(%q) = %q, want %q", tt.id, got, tt.want)
		}
		if len(got) > 15 {
			t.Errorf("HostIfName(%q) = %q exceeds IFNAMSIZ", tt.id, got)
		}
		if IsHostIfName(got) != tt.isHost {
			t.Errorf("IsHostIfName(%q) = %v, want %v", got, !tt.isHost, tt.isHost)
		}
	}
}

func TestDefaultGateways(t *testing.T) {
	gws := defaultGateways(parseAddrs(t, "10.0.0.1", "fd00::1", "10.0.0.2", "::ffff:10.0.0.3"))
	if len(gws) != 2 || gws[0].String() != "10.0.0.1" || gws[1].String() != "fd00::1" {
		t.Fatalf("defaultGateways = %v, want [10.0.0.1 fd00::1]", gws)
	}
}
