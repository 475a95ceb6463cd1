package plugin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"syscall"
	"time"

	"github.com/containernetworking/cni/pkg/types"
	"github.com/edgeovn/edgeovn/cni/protocol"
)

// maxResponse bounds what the binary reads from the daemon.
const maxResponse = 1 << 20

// call sends one request to the daemon at socket and returns its answer. Failures to reach
// the daemon become a *types.Error with unreachableCode; an error the daemon reports becomes
// a *types.Error with the daemon's code.
func call(ctx context.Context, socket string, timeout time.Duration, req protocol.PodRequest, unreachableCode uint) (*protocol.Response, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	body, err := json.Marshal(req)
	if err != nil {
		return nil, types.NewError(types.ErrInternal, "encode request", err.Error())
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://edgeovn"+protocol.Path, bytes.NewReader(body))
	if err != nil {
		return nil, types.NewError(types.ErrInternal, "build request", err.Error())
	}
	hreq.Header.Set("Content-Type", "application/json")
	hresp, err := newClient(socket).Do(hreq)
	if err != nil {
		return nil, types.NewError(unreachableCode,
			fmt.Sprintf("edgeovn daemon unreachable at %s, try again later", socket), err.Error())
	}
	defer hresp.Body.Close()
	var resp protocol.Response
	if err := json.NewDecoder(io.LimitReader(hresp.Body, maxResponse)).Decode(&resp); err != nil {
		return nil, types.NewError(types.ErrDecodingFailure,
			fmt.Sprintf("decode edgeovn daemon answer (HTTP %d)", hresp.StatusCode), err.Error())
	}
	if resp.Error != nil {
		return nil, types.NewError(resp.Error.Code, resp.Error.Msg, resp.Error.Details)
	}
	if hresp.StatusCode != http.StatusOK {
		return nil, types.NewError(types.ErrInternal, fmt.Sprintf("edgeovn daemon answered HTTP %d without an error", hresp.StatusCode), "")
	}
	return &resp, nil
}

func newClient(socket string) *http.Client {
	return &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return dialDaemon(ctx, socket)
		},
		DisableKeepAlives: true,
	}}
}

// reconnectGrace bounds how long a call waits for the daemon's socket while it is missing or
// refuses connections: a restart (systemctl restart edgeovn) leaves it so for a moment, and a
// STATUS failing then turns the node NotReady until containerd's next STATUS, seconds later,
// holding new pods back; an ADD or DEL failing then is retried by the runtime with a backoff.
// A daemon that stays down is reported when it passes.
var reconnectGrace = 3 * time.Second

const reconnectEvery = 100 * time.Millisecond

// dialDaemon connects to the daemon's socket, trying again within reconnectGrace (and ctx)
// while nobody listens on it.
func dialDaemon(ctx context.Context, socket string) (net.Conn, error) {
	var d net.Dialer
	deadline := time.Now().Add(reconnectGrace)
	for {
		c, err := d.DialContext(ctx, "unix", socket)
		if err == nil || !notListening(err) || time.Now().Add(reconnectEvery).After(deadline) {
			return c, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(reconnectEvery):
		}
	}
}

// notListening: the socket file is missing (the daemon removed it on exit) or nothing accepts
// on it (the daemon died, or a new one has not listened yet).
func notListening(err error) bool {
	return errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ECONNREFUSED)
}
