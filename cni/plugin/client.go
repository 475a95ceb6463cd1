package plugin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
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

// send makes one attempt: one HTTP/1.0 exchange on a fresh connection (see exchange.go).
func send(ctx context.Context, socket string, body []byte) (*protocol.Response, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", socket)
	if err != nil {
		return nil, &brokenError{err}
	}
	defer conn.Close()
	if deadline, ok := ctx.Deadline(); ok {
		_ = conn.SetDeadline(deadline)
	}
	// A cancelled ctx (SIGTERM) ends a read or write in progress.
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if _, err := conn.Write(encodeRequest(body)); err != nil {
		return nil, &brokenError{fmt.Errorf("send request: %w", err)}
	}
	raw, err := io.ReadAll(io.LimitReader(conn, maxResponse+1))
	if err != nil {
		// The daemon went away mid-answer (ECONNRESET), or ctx ended: call decides.
		return nil, &brokenError{fmt.Errorf("read answer: %w", err)}
	}
	return decodeAnswer(raw)
}

// decodeAnswer turns the daemon's whole answer into its Response, or the error it reports.
func decodeAnswer(raw []byte) (*protocol.Response, error) {
	if len(raw) > maxResponse {
		return nil, types.NewError(types.ErrDecodingFailure, fmt.Sprintf("edgeovn daemon answer larger than %d bytes", maxResponse), "")
	}
	status, body, err := parseAnswer(raw)
	if errors.Is(err, errTruncated) {
		return nil, &brokenError{err}
	}
	if err != nil {
		return nil, types.NewError(types.ErrDecodingFailure, "decode edgeovn daemon answer", err.Error())
	}
	var resp protocol.Response
	if err := json.NewDecoder(bytes.NewReader(body)).Decode(&resp); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return nil, &brokenError{fmt.Errorf("read answer: %w", err)}
		}
		return nil, types.NewError(types.ErrDecodingFailure,
			fmt.Sprintf("decode edgeovn daemon answer (HTTP %d)", status), err.Error())
	}
	if resp.Error != nil {
		return nil, types.NewError(resp.Error.Code, resp.Error.Msg, resp.Error.Details)
	}
	if status != 200 {
		return nil, types.NewError(types.ErrInternal, fmt.Sprintf("edgeovn daemon answered HTTP %d without an error", status), "")
	}
	return &resp, nil
}
