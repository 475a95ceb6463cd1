package realpods

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Client talks to pods' testservers over HTTP from the host: Dial opens connections in the
// host's network namespace (the rig's DialContext).
type Client struct {
	http *http.Client
}

// NewClient returns a client whose connections dial opens.
func NewClient(dial func(ctx context.Context, network, addr string) (net.Conn, error)) *Client {
	return &Client{http: &http.Client{Transport: &http.Transport{DialContext: dial, DisableKeepAlives: true}}}
}

// get fetches a testserver URL and returns its body; a status other than 200 is an error
// with the body, which says why.
func (c *Client) get(ctx context.Context, u string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", err
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return "", fmt.Errorf("GET %s: %w", u, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET %s: %s: %s", u, resp.Status, strings.TrimSpace(string(body)))
	}
	return string(body), nil
}

// DialRequest is one exchange that a pod's testserver makes with another testserver.
type DialRequest struct {
	From  netip.Addr     // the pod that sends
	Proto string         // "tcp" or "udp"
	To    netip.AddrPort // the testserver that answers
	Bytes int            // TCP: bytes sent and echoed back first
}

// Answer is the answering testserver's line: its hostname (pod name) and the client address
// it saw.
type Answer struct {
	Server string
	Client netip.AddrPort
}

// Dial makes the pod at req.From exchange with req.To and returns the answer.
func (c *Client) Dial(ctx context.Context, req DialRequest) (Answer, error) {
	q := url.Values{"proto": {req.Proto}, "addr": {req.To.String()}}
	if req.Bytes > 0 {
		q.Set("bytes", strconv.Itoa(req.Bytes))
	}
	body, err := c.get(ctx, httpURL(req.From, "/dial?"+q.Encode()))
	if err != nil {
		return Answer{}, fmt.Errorf("%s from %s to %s: %w", req.Proto, req.From, req.To, err)
	}
	name, client, ok := strings.Cut(strings.TrimSpace(body), " ")
	ap, perr := netip.ParseAddrPort(client)
	if !ok || perr != nil {
		return Answer{}, fmt.Errorf("%s from %s to %s: malformed answer %q", req.Proto, req.From, req.To, body)
	}
	return Answer{Server: name, Client: ap}, nil
}

// StreamStats counts a stream's exchanges.
type StreamStats struct {
	OK        int    `json:"ok"`
	Failed    int    `json:"failed"`
	LastError string `json:"last_error"`
}

// Stream makes the pod at from exchange with to every 100 ms from now on (once per target).
func (c *Client) Stream(ctx context.Context, from netip.Addr, proto string, to netip.AddrPort) error {
	_, err := c.get(ctx, httpURL(from, "/stream?"+url.Values{"proto": {proto}, "addr": {to.String()}}.Encode()))
	return err
}

// Stats returns the counts of the stream from one pod to a target.
func (c *Client) Stats(ctx context.Context, from netip.Addr, proto string, to netip.AddrPort) (StreamStats, error) {
	body, err := c.get(ctx, httpURL(from, "/stats?"+url.Values{"proto": {proto}, "addr": {to.String()}}.Encode()))
	if err != nil {
		return StreamStats{}, err
	}
	var st StreamStats
	if err := json.Unmarshal([]byte(body), &st); err != nil {
		return StreamStats{}, fmt.Errorf("stats from %s: %q: %w", from, body, err)
	}
	return st, nil
}
