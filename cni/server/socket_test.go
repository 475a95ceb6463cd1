package server

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// runPluginAs runs the CNI binary's STATUS as the runtime would, under uid, and returns its
// output (the CNI error JSON on failure).
func runPluginAs(t *testing.T, r *rig, uid uint32) string {
	t.Helper()
	conf := `{"cniVersion":"1.1.0","name":"edgeovn","type":"edgeovn","serverSocket":"` + r.sock + `"}`
	cmd := exec.Command(pluginBin)
	cmd.Env = []string{"CNI_COMMAND=STATUS", "CNI_PATH=" + filepath.Dir(pluginBin)}
	cmd.Stdin = strings.NewReader(conf)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uid, Gid: uid}}
	out, _ := cmd.CombinedOutput()
	return string(out)
}

// openPath lets others reach path: every directory from the test's temporary root down.
func openPath(t *testing.T, path string) {
	t.Helper()
	root := filepath.Dir(filepath.Dir(t.TempDir()))
	for dir := filepath.Dir(path); strings.HasPrefix(dir, root); dir = filepath.Dir(dir) {
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Dir(pluginBin), 0o755); err != nil {
		t.Fatal(err)
	}
}

// TestNonRootPeerRefused: a process of another user cannot connect to the 0600 socket, and
// one that can (the socket's mode loosened by mistake) is refused by its credentials.
func TestNonRootPeerRefused(t *testing.T) {
	r := newRig(t, nil)
	const nobody = 65534
	openPath(t, r.sock)
	if out := runPluginAs(t, r, 0); strings.TrimSpace(out) != "" {
		t.Fatalf("STATUS as root: %s", out)
	}
	if out := runPluginAs(t, r, nobody); !strings.Contains(out, "permission denied") {
		t.Fatalf("STATUS as nobody through the 0600 socket: %s", out)
	}
	if err := os.Chmod(r.sock, 0o666); err != nil {
		t.Fatal(err)
	}
	if out := runPluginAs(t, r, nobody); !strings.Contains(out, "edgeovn refuses cni requests from uid 65534") ||
		!strings.Contains(out, "only root may wire pods") {
		t.Fatalf("STATUS as nobody through a world-writable socket: %s", out)
	}
}

// post sends one raw request over the socket and returns the status and body.
func post(t *testing.T, sock string, body io.Reader) (int, string) {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	}}, Timeout: 10 * time.Second}
	resp, err := client.Post("http://edgeovn/v1/cni", "application/json", body)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestOversizeRequestRefused(t *testing.T) {
	r := newRig(t, nil)
	big := `{"command":"GC","validAttachments":[` + strings.Repeat(`{"containerID":"`+containerID(1)+`","ifName":"eth0"},`, 20000) + `{}]}`
	code, body := post(t, r.sock, strings.NewReader(big))
	if code != http.StatusBadRequest || !strings.Contains(body, "larger than 1048576 bytes") {
		t.Fatalf("oversize request (%d bytes): HTTP %d %s", len(big), code, body)
	}
	if code, body := post(t, r.sock, bytes.NewReader([]byte(`{"command":"STATUS"}`))); code != http.StatusOK {
		t.Fatalf("STATUS after the oversize request: HTTP %d %s", code, body)
	}
}

// TestStalledClientDropped: a client that stops half-way through its request, or never
// sends one, loses its connection after the read timeout and holds nothing.
func TestStalledClientDropped(t *testing.T) {
	const timeout = 200 * time.Millisecond
	r := newRig(t, func(c *Config) { c.ReadTimeout = timeout; c.IdleTimeout = timeout })
	for name, partial := range map[string]string{
		"silent":       "",
		"half headers": "POST /v1/cni HTTP/1.1\r\nHost: edgeovn\r\n",
		"half body":    "POST /v1/cni HTTP/1.1\r\nHost: edgeovn\r\nContent-Length: 100\r\n\r\n{\"command\":",
	} {
		t.Run(name, func(t *testing.T) {
			c, err := net.Dial("unix", r.sock)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if _, err := io.WriteString(c, partial); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
			_, err = io.ReadAll(c) // whatever the server answers, then its close
			if err != nil {
				t.Fatalf("connection not closed by the server: %v", err)
			}
			if waited := time.Since(start); waited < timeout/2 {
				t.Fatalf("dropped after %v, before the timeout %v", waited, timeout)
			}
		})
	}
}

// TestSocketDirRefusesShared: a directory others may write to could have the socket swapped
// under the runtime; it is refused, and a missing one is created root-only.
func TestSocketDirRefusesShared(t *testing.T) {
	shared := filepath.Join(t.TempDir(), "shared")
	if err := os.Mkdir(shared, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(shared, 0o1777); err != nil {
		t.Fatal(err)
	}
	if ln, err := listen(filepath.Join(shared, "cni.sock")); err == nil {
		ln.Close()
		t.Fatal("listen in a world-writable directory succeeded")
	} else if !strings.Contains(err.Error(), "writable by others") {
		t.Fatalf("listen in a world-writable directory: %v", err)
	}
	fresh := filepath.Join(t.TempDir(), "a", "b")
	ln, err := listen(filepath.Join(fresh, "cni.sock"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if fi, err := os.Stat(fresh); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("created socket directory: %v, %v", fi.Mode(), err)
	}
}

// TestMalformedRequestRefused: a request with a field the protocol does not have, or with
// anything after its object, is refused naming what was wrong, and the server goes on serving.
func TestMalformedRequestRefused(t *testing.T) {
	r := newRig(t, nil)
	for name, c := range map[string]struct{ body, want string }{
		"unknown field": {`{"command":"STATUS","interface":"eth0"}`, `unknown field \"interface\"`},
		"trailing data": {`{"command":"STATUS"} {"command":"DEL"}`, "trailing data after the request object"},
		"not json":      {`STATUS`, "decode cni request"},
	} {
		t.Run(name, func(t *testing.T) {
			code, body := post(t, r.sock, strings.NewReader(c.body))
			if code != http.StatusBadRequest || !strings.Contains(body, c.want) {
				t.Fatalf("HTTP %d %s, want 400 naming %q", code, body, c.want)
			}
		})
	}
	if code, body := post(t, r.sock, strings.NewReader(`{"command":"STATUS"}`)); code != http.StatusOK {
		t.Fatalf("STATUS after the malformed requests: HTTP %d %s", code, body)
	}
}
