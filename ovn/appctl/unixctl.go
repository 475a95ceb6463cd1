package appctl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"
)

// ErrCommand is a command ovs-vswitchd answered with an error (unknown command, bad
// arguments, a failure it reports).
var ErrCommand = errors.New("ovs-vswitchd rejected the command")

// request and response are unixctl's JSON-RPC 1.0 messages: params are strings, the result
// and the error are text.
type request struct {
	ID     int      `json:"id"`
	Method string   `json:"method"`
	Params []string `json:"params"`
}

type response struct {
	ID     int             `json:"id"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// Call runs one command on the daemon behind socket, as `ovs-appctl -t socket method
// params...` does, and returns its reply text. ctx bounds the whole exchange.
func Call(ctx context.Context, socket, method string, params ...string) (string, error) {
	what := fmt.Sprintf("%s on %s", strings.Join(append([]string{method}, params...), " "), socket)
	var d net.Dialer
	conn, err := d.DialContext(ctx, "unix", socket)
	if err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Now()) })
	defer stop()
	if params == nil {
		params = []string{}
	}
	if err := json.NewEncoder(conn).Encode(request{Method: method, Params: params}); err != nil {
		return "", fmt.Errorf("%s: send: %w", what, err)
	}
	var resp response
	if err := json.NewDecoder(conn).Decode(&resp); err != nil {
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return "", fmt.Errorf("%s: read reply: %w", what, err)
	}
	if msg := text(resp.Error); msg != "" {
		return "", fmt.Errorf("%s: %w: %s", what, ErrCommand, strings.TrimSpace(msg))
	}
	return text(resp.Result), nil
}

// text is a reply field as text: a JSON string's content, "" for null, the raw JSON else.
func text(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}
