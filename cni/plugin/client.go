package plugin

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
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
	var d net.Dialer
	return &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			return d.DialContext(ctx, "unix", socket)
		},
		DisableKeepAlives: true,
	}}
}
