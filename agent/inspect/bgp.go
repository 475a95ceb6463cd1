package inspect

import (
	"context"
	"fmt"
	"io"
	"strings"
)

// bgp writes the BGP speaker's peers and announced prefixes, as the daemon reports them on
// /bgp; nothing when the daemon runs no speaker and none is configured here.
func (h *Host) bgp(ctx context.Context, w io.Writer) {
	a := h.Cfg.MetricsAddress
	if a == "" {
		if h.Cfg.BGP.Enabled() {
			fmt.Fprintln(w, "\nbgp: unknown (metrics-address is off: the daemon's /bgp cannot be read)")
		}
		return
	}
	code, body, err := getEndpoint(ctx, a, "/bgp")
	switch {
	case err == nil && code == 200:
	case err == nil && code == 404 && !h.Cfg.BGP.Enabled():
		return
	default:
		fmt.Fprintf(w, "\nbgp: unknown (http://%s/bgp: %d %v %s)\n", a, code, err, body)
		return
	}
	fmt.Fprintln(w, "\nbgp:")
	for _, l := range strings.Split(body, "\n") {
		fmt.Fprintln(w, "  "+l)
	}
}
