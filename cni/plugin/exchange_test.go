package plugin

import (
	"errors"
	"strings"
	"testing"

	"github.com/containernetworking/cni/pkg/types"
)

func TestEncodeRequest(t *testing.T) {
	got := string(encodeRequest([]byte(`{"command":"ADD"}`)))
	want := "POST /v1/cni HTTP/1.0\r\nHost: edgeovn\r\nContent-Type: application/json\r\nContent-Length: 17\r\n\r\n{\"command\":\"ADD\"}"
	if got != want {
		t.Errorf("encodeRequest = %q, want %q", got, want)
	}
}

func TestParseAnswer(t *testing.T) {
	for _, c := range []struct {
		name, raw  string
		status     int
		body       string
		truncated  bool
		otherError bool
	}{
		{name: "content length", raw: "HTTP/1.0 200 OK\r\nContent-Type: application/json\r\nContent-Length: 3\r\n\r\n{}\n", status: 200, body: "{}\n"},
		{name: "closed-delimited", raw: "HTTP/1.0 503 Service Unavailable\r\nContent-Type: application/json\r\n\r\n{\"error\":{}}\n", status: 503, body: "{\"error\":{}}\n"},
		{name: "header case", raw: "HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}trailing", status: 200, body: "{}"},
		{name: "nothing", raw: "", truncated: true},
		{name: "head cut", raw: "HTTP/1.0 200 OK\r\nContent-Le", truncated: true},
		{name: "body shorter than its length", raw: "HTTP/1.0 200 OK\r\nContent-Length: 30\r\n\r\n{\"add\":", truncated: true},
		{name: "not http", raw: "SSH-2.0-OpenSSH\r\n\r\n", otherError: true},
		{name: "bad length", raw: "HTTP/1.0 200 OK\r\nContent-Length: -1\r\n\r\n{}", otherError: true},
		{name: "chunked", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n", otherError: true},
	} {
		status, body, err := parseAnswer([]byte(c.raw))
		switch {
		case c.truncated:
			if !errors.Is(err, errTruncated) {
				t.Errorf("%s: err %v, want errTruncated (the request is sent again)", c.name, err)
			}
		case c.otherError:
			if err == nil || errors.Is(err, errTruncated) {
				t.Errorf("%s: err %v, want an error that is not errTruncated", c.name, err)
			}
		case err != nil || status != c.status || string(body) != c.body:
			t.Errorf("%s: got %d %q %v, want %d %q", c.name, status, body, err, c.status, c.body)
		}
	}
}

// TestDecodeAnswer: what the runtime gets for each kind of answer, and which are resent.
func TestDecodeAnswer(t *testing.T) {
	ok := "HTTP/1.0 200 OK\r\n\r\n"
	for _, c := range []struct {
		name, raw string
		code      uint // 0: success
		broken    bool // sent again
	}{
		{name: "add result", raw: ok + `{"add":{"hostInterface":{"name":"h"},"podInterface":{"name":"eth0"},"ips":[]}}`},
		{name: "daemon error", raw: "HTTP/1.0 503 Service Unavailable\r\n\r\n" + `{"error":{"code":11,"msg":"not ready"}}`, code: types.ErrTryAgainLater},
		{name: "non-200 without an error", raw: "HTTP/1.0 500 Internal Server Error\r\n\r\n{}", code: types.ErrInternal},
		{name: "json cut short", raw: ok + `{"add":{"hostInterface"`, broken: true},
		{name: "empty body", raw: ok, broken: true},
		{name: "not json", raw: ok + "<html>", code: types.ErrDecodingFailure},
		{name: "too large", raw: ok + `{"add":null,"x":"` + strings.Repeat("a", maxResponse) + `"}`, code: types.ErrDecodingFailure},
	} {
		resp, err := decodeAnswer([]byte(c.raw))
		var broken *brokenError
		switch {
		case c.broken:
			if !errors.As(err, &broken) {
				t.Errorf("%s: err %v, want a broken connection (resent)", c.name, err)
			}
		case c.code == 0:
			if err != nil || resp == nil || resp.Add == nil || resp.Add.PodInterface.Name != "eth0" {
				t.Errorf("%s: %+v, %v; want the add result", c.name, resp, err)
			}
		default:
			var te *types.Error
			if !errors.As(err, &te) || te.Code != c.code {
				t.Errorf("%s: err %v, want CNI code %d", c.name, err, c.code)
			}
		}
	}
}
