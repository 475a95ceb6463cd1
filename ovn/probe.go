package ovn

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"
)

// ProbeTimeout bounds one endpoint's probe when ctx has no earlier deadline.
const ProbeTimeout = 3 * time.Second

// ProbeRequest says which server Probe asks and which database it must serve.
type ProbeRequest struct {
	Endpoints []string // as in ConnectRequest
	TLS       *tls.Config
	Database  string // "OVN_Northbound"
}

// Probe says whether one of the endpoints answers and serves the database: a connection and
// one list_dbs round trip each, no monitor, no cache. nil when one does; otherwise every
// endpoint's failure in one error. The endpoints are asked at once and the first to answer
// ends the probe: a raft member that is down (its address black-holed, every dial a timeout)
// must not use up the time the others have. The controller role's election asks it before
// campaigning: a host that cannot reach northbound must not take the Lease.
func Probe(ctx context.Context, req ProbeRequest) error {
	if err := (ConnectRequest{Endpoints: req.Endpoints, TLS: req.TLS}).Validate(); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	results := make(chan error, len(req.Endpoints))
	for _, ep := range req.Endpoints {
		go func() {
			if err := probeOne(ctx, ep, req); err != nil {
				results <- fmt.Errorf("%s: %w", ep, err)
				return
			}
			results <- nil
		}()
	}
	errs := make([]error, 0, len(req.Endpoints))
	for range req.Endpoints {
		err := <-results
		if err == nil {
			return nil
		}
		errs = append(errs, err)
	}
	slices.SortFunc(errs, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
	return fmt.Errorf("%s unreachable: %w", req.Database, errors.Join(errs...))
}

func probeOne(ctx context.Context, endpoint string, req ProbeRequest) error {
	ctx, cancel := context.WithTimeout(ctx, ProbeTimeout)
	defer cancel()
	conn, err := dialEndpoint(ctx, endpoint, req.TLS)
	if err != nil {
		return err
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(dl)
	}
	if err := json.NewEncoder(conn).Encode(map[string]any{"method": "list_dbs", "params": []any{}, "id": 0}); err != nil {
		return fmt.Errorf("send list_dbs: %w", err)
	}
	var resp struct {
		Result []string `json:"result"`
		Error  any      `json:"error"`
	}
	if err := json.NewDecoder(conn).Decode(&resp); err != nil {
		return fmt.Errorf("read list_dbs answer: %w", err)
	}
	if resp.Error != nil {
		return fmt.Errorf("list_dbs: %v", resp.Error)
	}
	if !slices.Contains(resp.Result, req.Database) {
		return fmt.Errorf("serves %v, not %s", resp.Result, req.Database)
	}
	return nil
}

func dialEndpoint(ctx context.Context, endpoint string, tlsCfg *tls.Config) (net.Conn, error) {
	scheme, addr, _ := strings.Cut(endpoint, ":")
	var d net.Dialer
	switch scheme {
	case "unix":
		return d.DialContext(ctx, "unix", addr)
	case "tcp":
		return d.DialContext(ctx, "tcp", addr)
	default: // ssl, checked by Validate
		td := tls.Dialer{NetDialer: &d, Config: tlsCfg}
		return td.DialContext(ctx, "tcp", addr)
	}
}
