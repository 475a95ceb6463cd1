package ovnmatch

import "testing"

func TestCheck(t *testing.T) {
	good := []string{
		"ip4.dst == 10.0.0.0/24",
		"ip4.src == 192.168.0.2 && ip4.dst == 10.10.0.0/16",
		"ip4.dst == {10.0.0.1, 10.0.0.2} && tcp.dst == 80",
		"ip6.src == fd00::/64 || ip6.dst == fd00::1",
		"!(ip4.src == $as1) && outport == @pg_1",
		`inport == "lrp-1" && ip4`,
		"reg0[0..3] == 0x5 && eth.src == 0a:58:0a:00:00:01",
		"ip4.dst == 10.0.0.0/255.255.255.0 && icmp4",
		"1 <= tcp.dst && tcp.dst <= 1024",
	}
	for _, m := range good {
		if err := Check(m); err != nil {
			t.Errorf("Check(%q): %v", m, err)
		}
	}
	bad := []string{
		"ip4.dst ==",
		"ip4.dst = 10.0.0.1",
		"ip4.dst == 10.0.0.1 && ip4.src == 10.0.0.2 || tcp",
		"(ip4.dst == 10.0.0.1",
		"ip4.dst == 10.0.0.999",
		"ip4.dst == {10.0.0.1 10.0.0.2}",
		`inport == "lrp`,
		"ip4.dst == 10.0.0.1 &&",
		"this is not a match",
		"ip4.dst == 10.0.0.1)",
	}
	for _, m := range bad {
		if err := Check(m); err == nil {
			t.Errorf("Check(%q) = nil, want an error", m)
		}
	}
}
