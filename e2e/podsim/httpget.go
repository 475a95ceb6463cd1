package podsim

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// HTTPAnswer is an HTTP server's answer: status, headers and body.
type HTTPAnswer struct {
	Status int
	Header http.Header
	Body   string
}

// HTTPGet asks url (a literal IP address and port) from inside the namespace at netns, on a
// connection of its own, within timeout. A failure wraps ErrRefused, ErrUnreachable or
// ErrTimeout when it is one of those.
func HTTPGet(ctx context.Context, netns, url string, timeout time.Duration) (HTTPAnswer, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return dialIn(ctx, netns, network, addr)
		}}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return HTTPAnswer{}, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return HTTPAnswer{}, fmt.Errorf("GET %s from %s: %w", url, netns, classify(err))
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return HTTPAnswer{}, fmt.Errorf("GET %s from %s: read body: %w", url, netns, err)
	}
	return HTTPAnswer{Status: resp.StatusCode, Header: resp.Header, Body: string(b)}, nil
}
