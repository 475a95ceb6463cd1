package inspect

import (
	"context"
	"fmt"
	"strings"
)

// pinger is the daemon's last pinger round (GET /pinger), indented under its summary line.
func (h *Host) pinger(ctx context.Context, address string) string {
	code, body, err := getEndpoint(ctx, address, "/pinger")
	switch {
	case err != nil:
		return fmt.Sprintf("unknown (http://%s/pinger: %v)", address, err)
	case code == 404:
		return "off (enable-pinger)"
	case code != 200:
		return fmt.Sprintf("unknown (http://%s/pinger: %d %s)", address, code, body)
	}
	return strings.ReplaceAll(body, "\n", "\n\t")
}
