package subnets

import (
	"strings"
	"testing"
)

func TestInUseMessage(t *testing.T) {
	live := func(k string) bool { return k == "ns1/web-0" }
	for _, tc := range []struct {
		held      []string
		want, not []string
	}{
		{held: []string{"ns1/web-0"}, want: []string{"1 pod(s) holding addresses in it: ns1/web-0 (delete them"}, not: []string{"StatefulSet"}},
		{held: []string{"ns1/db-1"}, want: []string{"1 address(es) kept for deleted StatefulSet pods: ns1/db-1 (scale"}, not: []string{"pod(s) holding"}},
		{held: []string{"ns1/db-1", "ns1/web-0"}, want: []string{"1 pod(s) holding addresses in it: ns1/web-0", "; and for 1 address(es) kept for deleted StatefulSet pods: ns1/db-1"}},
	} {
		got := inUseMessage(tc.held, live)
		if !strings.HasPrefix(got, "deletion waits for ") {
			t.Errorf("%v: %q does not start with the reason", tc.held, got)
		}
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%v: %q lacks %q", tc.held, got, w)
			}
		}
		for _, n := range tc.not {
			if strings.Contains(got, n) {
				t.Errorf("%v: %q names %q", tc.held, got, n)
			}
		}
	}
}
