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

func TestAttachmentHostIfName(t *testing.T) {
	cid := "3f2a9c01d4e5b6a7c8d9e0f1"
	for _, tt := range []struct{ ifName, want string }{
		{"net1", "3f2a9c01_net1_h"},
		{"data0", "3f2a9c0_data0_h"},
		{"averylongname1", ""}, // hashed: checked for length and shape only
	} {
		got := AttachmentHostIfName(cid, tt.ifName)
		if tt.want != "" && got != tt.want || len(got) > 15 || !IsHostIfName(got) {
			t.Errorf("AttachmentHostIfName(%q) = %q (IsHostIfName %v), want %q of at most 15", tt.ifName, got, IsHostIfName(got), tt.want)
		}
	}
	if AttachmentHostIfName(cid, "net1") == HostIfName(cid) {
		t.Error("attachment and primary host ends share a name")
	}
}
