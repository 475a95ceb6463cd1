package inspect

import (
	"slices"
	"testing"

	"github.com/edgeovn/edgeovn/ovn/vswitch"
)

func TestUnbound(t *testing.T) {
	port := func(name string, ids map[string]string) vswitch.Port {
		return vswitch.Port{Name: name, IfaceID: name + ".default", ExternalIDs: ids}
	}
	ports := []vswitch.Port{
		port("bound", map[string]string{"ovn-installed": "true", "ovn-installed-ts": "1"}),
		port("lost", map[string]string{"ovn-installed-ts": "1"}),
		port("never", map[string]string{}),
		port("nodevice", map[string]string{"ovn-installed-ts": "1"}), // the sweep's business
	}
	lost, never := unbound(ports, func(name string) bool { return name == "nodevice" })
	if !slices.Equal(lost, []string{"lost (lost.default)"}) || !slices.Equal(never, []string{"never (never.default)"}) {
		t.Errorf("unbound = %q, %q", lost, never)
	}
}
