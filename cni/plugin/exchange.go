package plugin

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/edgeovn/edgeovn/cni/protocol"
)

// The binary speaks HTTP/1.0 to the daemon's net/http server by hand: one request per
// connection, the answer delimited by its Content-Length or by the daemon closing the
// connection (HTTP/1.0 has no chunked encoding, so the answer is never chunked). net/http's
// client would link crypto/tls, x509 and HTTP/2 into a binary that runs once per pod, and
// its start-up and goroutines would cost every ADD milliseconds on a busy host.

// errTruncated: the connection ended before a whole answer; the request may be sent again.
var errTruncated = errors.New("connection closed before a whole answer")

// encodeRequest renders the POST of body to protocol.Path.
func encodeRequest(body []byte) []byte {
	var b bytes.Buffer
	b.WriteString("POST " + protocol.Path + " HTTP/1.0\r\nHost: edgeovn\r\nContent-Type: application/json\r\n")
	b.WriteString("Content-Length: " + strconv.Itoa(len(body)) + "\r\n\r\n")
	b.Write(body)
	return b.Bytes()
}

// parseAnswer splits a whole HTTP answer into its status code and body. An answer without
// its full head, or shorter than its Content-Length, is errTruncated.
func parseAnswer(raw []byte) (int, []byte, error) {
	head, body, ok := bytes.Cut(raw, []byte("\r\n\r\n"))
	if !ok {
		return 0, nil, fmt.Errorf("%w (%d bytes)", errTruncated, len(raw))
	}
	lines := strings.Split(string(head), "\r\n")
	status, err := parseStatus(lines[0])
	if err != nil {
		return 0, nil, err
	}
	for _, l := range lines[1:] {
		name, value, _ := strings.Cut(l, ":")
		value = strings.TrimSpace(value)
		switch strings.ToLower(strings.TrimSpace(name)) {
		case "content-length":
			n, err := strconv.Atoi(value)
			if err != nil || n < 0 {
				return 0, nil, fmt.Errorf("bad Content-Length %q", value)
			}
			if len(body) < n {
				return 0, nil, fmt.Errorf("%w (body %d of %d bytes)", errTruncated, len(body), n)
			}
			body = body[:n]
		case "transfer-encoding":
			return 0, nil, fmt.Errorf("unexpected Transfer-Encoding %q in an HTTP/1.0 answer", value)
		}
	}
	return status, body, nil
}

// parseStatus reads "HTTP/1.x NNN reason".
func parseStatus(line string) (int, error) {
	proto, rest, _ := strings.Cut(line, " ")
	code, _, _ := strings.Cut(rest, " ")
	n, err := strconv.Atoi(code)
	if !strings.HasPrefix(proto, "HTTP/1.") || err != nil || n < 100 || n > 599 {
		return 0, fmt.Errorf("bad status line %q", line)
	}
	return n, nil
}
