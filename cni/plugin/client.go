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

// Restart windows: how long the binary keeps trying a daemon it cannot reach, or that went
// away before answering. With edgeovn.socket (systemd socket activation) a restarting daemon
// never refuses: the connection waits in the socket's queue and this is not needed; without
// it, the socket is gone or refuses until the next daemon listens (systemd's RestartSec=2 and
// the start). A daemon killed while serving a request breaks the connection either way; every
// command is safe to send again (ADD removes a half-made pair first, DEL is idempotent).
const (
	restartWindow       = 30 * time.Second
	statusRestartWindow = 5 * time.Second // containerd asks STATUS again every few seconds
)

// callRequest is one call to the daemon.
type callRequest struct {
	Socket  string
	Timeout time.Duration // bounds the whole call
	// Window bounds how long an unreachable daemon, or one that broke the connection, is
	// tried again (within Timeout).
	Window time.Duration
	Req    protocol.PodRequest
	// UnreachableCode is the CNI error code when the daemon could not be reached in Window.
	UnreachableCode uint
}

// call sends one request to the daemon and returns its answer, resending it while the daemon
// cannot be reached or breaks the connection. Failures to reach the daemon become a
// *types.Error with UnreachableCode; an error the daemon reports becomes a *types.Error with
// the daemon's code.
func call(ctx context.Context, c callRequest) (*protocol.Response, error) {
	ctx, cancel := context.WithTimeout(ctx, c.Timeout)
	defer cancel()
	socket := c.Socket
	body, err := json.Marshal(c.Req)
	if err != nil {
		return nil, types.NewError(types.ErrInternal, "encode request", err.Error())
	}
	start := time.Now()
	backoff := 20 * time.Millisecond
	for attempt := 1; ; attempt++ {
		resp, err := send(ctx, socket, body)
		var broken *brokenError
		if !errors.As(err, &broken) {
			return resp, err
		}
		if ctx.Err() != nil || time.Since(start)+backoff > c.Window {
			return nil, types.NewError(c.UnreachableCode,
				fmt.Sprintf("edgeovn daemon unreachable at %s (%d attempts over %s), try again later", socket, attempt, time.Since(start).Round(time.Millisecond)),
				broken.err.Error())
		}
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, time.Second)
	}
}

// brokenError: the daemon was not reached, or the connection ended before a whole answer.
type brokenError struct{ err error }

func (e *brokenError) Error() string { return e.err.Error() }

// send makes one attempt.
func send(ctx context.Context, socket string, body []byte) (*protocol.Response, error) {
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://edgeovn"+protocol.Path, bytes.NewReader(body))
	if err != nil {
		return nil, types.NewError(types.ErrInternal, "build request", err.Error())
	}
	hreq.Header.Set("Content-Type", "application/json")
	hresp, err := newClient(socket).Do(hreq)
	if err != nil {
		return nil, &brokenError{err}
	}
	defer hresp.Body.Close()
	var resp protocol.Response
	if err := json.NewDecoder(io.LimitReader(hresp.Body, maxResponse)).Decode(&resp); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) {
			return nil, &brokenError{fmt.Errorf("read answer: %w", err)}
		}
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
	var d net.Dialer
	return &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return d.DialContext(ctx, "unix", socket)
		},
		DisableKeepAlives: true,
	}}
}
