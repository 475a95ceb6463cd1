package inspect

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"

	"github.com/edgeovn/edgeovn/cni/protocol"
)

// cniStatus asks the daemon on socket for CNI STATUS, as containerd does: nil when the node
// is ready.
func cniStatus(ctx context.Context, socket string) error {
	body, err := json.Marshal(protocol.PodRequest{Command: protocol.CommandStatus})
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://edgeovn"+protocol.Path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	var d net.Dialer
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true,
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) { return d.DialContext(ctx, "unix", socket) }}}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("edgeovn daemon not answering on %s: %w", socket, err)
	}
	defer resp.Body.Close()
	var r protocol.Response
	if err := json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(&r); err != nil {
		return fmt.Errorf("decode the daemon's STATUS answer (HTTP %d): %w", resp.StatusCode, err)
	}
	if r.Error != nil {
		return r.Error
	}
	return nil
}

// getEndpoint GETs path on the daemon's metrics address and returns its status and body.
func getEndpoint(ctx context.Context, address, path string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+address+path, nil)
	if err != nil {
		return 0, "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, string(bytes.TrimSpace(b)), err
}
