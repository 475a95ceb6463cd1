package multus

import (
	"fmt"
	"strings"
	"testing"
)

func TestParseSelection(t *testing.T) {
	tests := []struct {
		in, want, err string
	}{
		{in: "", want: ""},
		{in: "a", want: "pods/a@net1 [] "},
		{in: "a, other/b@data0", want: "pods/a@net1 [] ;other/b@data0 [] "},
		{in: "a@x,b", want: "pods/a@x [] ;pods/b@net2 [] "},
		{in: `[{"name":"a","interface":"e1","ips":["10.1.0.5/24"],"mac":"0a:00:00:00:00:05"},{"name":"b","namespace":"n2"}]`,
			want: "pods/a@e1 [10.1.0.5] 0a:00:00:00:00:05;n2/b@net2 [] "},
		{in: `[{"name":"a"`, err: "malformed JSON"},
		{in: `[{"namespace":"x"}]`, err: "entry 1 has no name"},
		{in: "a@", err: "want name, namespace/name or name@interface"},
		{in: "x/y/z", err: "want name"},
		{in: `[{"name":"a","ips":["10.1.0.500"]}]`, err: `attachment pods/a: ips: address "10.1.0.500"`},
		{in: `[{"name":"a","mac":"zz"}]`, err: `attachment pods/a: mac "zz"`},
		{in: "a@averyveryverylongname", err: "is not a Linux interface name"},
	}
	for _, tt := range tests {
		got, err := ParseSelection(tt.in, "pods")
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q: error %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%q: %v", tt.in, err)
			continue
		}
		var parts []string
		for _, s := range got {
			parts = append(parts, fmt.Sprintf("%s@%s %v %s", s.Key(), s.Interface, s.IPs, s.MAC))
		}
		if g := strings.Join(parts, ";"); g != tt.want {
			t.Errorf("%q: got %q, want %q", tt.in, g, tt.want)
		}
	}
}

func TestAttachments(t *testing.T) {
	ko := NAD{Config: `{"cniVersion":"0.3.1","type":"kube-ovn","server_socket":"/run/openvswitch/kube-ovn-daemon.sock","provider":"a.pods.ovn"}`}
	list := NAD{Config: `{"cniVersion":"0.3.1","plugins":[{"type":"kube-ovn","provider":"b.pods.ovn"},{"type":"portmap"}]}`}
	macvlan := NAD{Config: `{"type":"macvlan","master":"eth0","ipam":{"type":"host-local"}}`}
	mvIPAM := NAD{Config: `{"cniVersion":"0.3.1","type":"macvlan","master":"eth0","ipam":{"type":"kube-ovn","provider":"mv.pods"}}`}
	mvList := NAD{Config: `{"cniVersion":"0.3.1","plugins":[{"type":"macvlan","ipam":{"type":"kube-ovn"}},{"type":"tuning"}]}`}
	nads := map[string]NAD{"pods/a": ko, "pods/b": list, "pods/m": macvlan, "pods/bad": {Config: "{"}, "pods/mv": mvIPAM, "pods/mvl": mvList}
	tests := []struct {
		sel, want, err string
	}{
		{sel: "a", want: "a.pods.ovn@net1(a.pods.ovn)"},
		{sel: "m,a,b", want: "a.pods.ovn@net2(a.pods.ovn) b.pods.ovn@net3(b.pods.ovn)"},
		{sel: "a@x,a@y", want: "a.pods.ovn.x@x(a.pods.ovn) a.pods.ovn.y@y(a.pods.ovn)"},
		{sel: "a@x,b@x", err: "attachments pods/a and pods/b both ask for interface x"},
		{sel: "a,gone", err: "attachment pods/gone: NetworkAttachmentDefinition pods/gone not found"},
		{sel: "bad", err: "attachment pods/bad: spec.config is not a CNI configuration"},
		{sel: "a,mv,mvl", want: "a.pods.ovn@net1(a.pods.ovn) mv.pods@net2(mv.pods)ipam mvl.pods@net3(mvl.pods)ipam"},
		{sel: "mv@x,mv@y", err: "attachment pods/mv: selected 2 times, but its IPAM provider mv.pods serves one interface per pod"},
	}
	for _, tt := range tests {
		sel, err := ParseSelection(tt.sel, "pods")
		if err != nil {
			t.Fatal(err)
		}
		got, err := Attachments(sel, nads)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q: error %v, want %q", tt.sel, err, tt.err)
			}
			continue
		}
		var parts []string
		for _, a := range got {
			p := fmt.Sprintf("%s@%s(%s)", a.Provider, a.Interface, a.SubnetProvider)
			if a.IPAMOnly {
				p += "ipam"
			}
			parts = append(parts, p)
		}
		if g := strings.Join(parts, " "); g != tt.want || err != nil {
			t.Errorf("%q: got %q (%v), want %q", tt.sel, g, err, tt.want)
		}
	}
}
