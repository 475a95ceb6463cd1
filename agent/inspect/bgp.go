package inspect

import (
	"context"
	"fmt"
	"io"
	"strings"
)

// bgp writes the BGP speaker's peers and announced prefixes, as the daemon reports them on
// /bgp; nothing when no neighbour is configured.
func (h *Host) bgp(ctx context.Context, w io.Writer) {
	if !h.Cfg.BGP.Enabled() {
		return
	}
	a := h.Cfg.MetricsAddress
	if a == "" {
		fmt.Fprintln(w, "\nbgp: unknown (metrics-address is off: the daemon's /bgp cannot be read)")
		return
	}
	code, body, err := getEndpoint(ctx, a, "/bgp")
	if err != nil || code != 200 {
		fmt.Fprintf(w, "\nbgp: unknown (http://%s/bgp: %d %v %s)\n", a, code, err, body)
		return
	}
	fmt.Fprintln(w, "\nbgp:")
	for _, l := range strings.Split(body, "\n") {
		fmt.Fprintln(w, "  "+l)
	}
}
