package svchealth

import (
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// kubeProxyBody is kube-proxy v1.34's answer for default/web with 2 local endpoints, as its
// hcHandler prints it (strings.Trim(dedent.Dedent(...), "\n"), run once to get this text).
const kubeProxyBody = "{\n\t\"service\": {\n\t\t\"namespace\": \"default\",\n\t\t\"name\": \"web\"\n\t},\n\t\"localEndpoints\": 2,\n\t\"serviceProxyHealthy\": true\n}"

func freePort(t *testing.T) uint16 {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return uint16(ln.Addr().(*net.TCPAddr).Port)
}

func get(t *testing.T, port uint16) (*http.Response, string, error) {
	t.Helper()
	resp, err := http.Get("http://127.0.0.1:" + strconv.Itoa(int(port)) + "/healthz")
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp, string(b), err
}

// TestHealthCheckAnswersAsKubeProxy: 200 with kube-proxy's body and headers while the
// Service has local endpoints, 503 without, nothing once the Service is gone.
func TestHealthCheckAnswersAsKubeProxy(t *testing.T) {
	port := freePort(t)
	s := New("127.0.0.1", nil)
	defer s.Close()
	if err := s.Sync([]Service{{Namespace: "default", Name: "web", Port: port, LocalEndpoints: 2}}, true); err != nil {
		t.Fatal(err)
	}
	resp, body, err := get(t, port)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || body != kubeProxyBody {
		t.Errorf("with 2 local endpoints: %d %q, want 200 %q", resp.StatusCode, body, kubeProxyBody)
	}
	for h, want := range map[string]string{"Content-Type": "application/json", "X-Content-Type-Options": "nosniff", "X-Load-Balancing-Endpoint-Weight": "2"} {
		if got := resp.Header.Get(h); got != want {
			t.Errorf("header %s = %q, want %q", h, got, want)
		}
	}
	for _, c := range []struct {
		count   int
		healthy bool
	}{{0, true}, {1, false}} {
		if err := s.Sync([]Service{{Namespace: "default", Name: "web", Port: port, LocalEndpoints: c.count}}, c.healthy); err != nil {
			t.Fatal(err)
		}
		if resp, body, err := get(t, port); err != nil || resp.StatusCode != http.StatusServiceUnavailable {
			t.Errorf("%d local endpoints, rules written %v: %v %v, want 503", c.count, c.healthy, resp, err)
		} else if resp.Header.Get("X-Load-Balancing-Endpoint-Weight") != strconv.Itoa(c.count) {
			t.Errorf("weight header %q, want %d (%s)", resp.Header.Get("X-Load-Balancing-Endpoint-Weight"), c.count, body)
		}
	}
	if err := s.Sync(nil, true); err != nil {
		t.Fatal(err)
	}
	if _, _, err := get(t, port); err == nil {
		t.Errorf("the health check still answers after its Service is gone")
	}
}

// TestHealthCheckPortTaken: a port another program holds is reported, naming the Service;
// the other Services' checks are served.
func TestHealthCheckPortTaken(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	taken, free := uint16(ln.Addr().(*net.TCPAddr).Port), freePort(t)
	s := New("127.0.0.1", nil)
	defer s.Close()
	err = s.Sync([]Service{{Namespace: "a", Name: "taken", Port: taken, LocalEndpoints: 1}, {Namespace: "b", Name: "ok", Port: free, LocalEndpoints: 1}}, true)
	if err == nil || !strings.Contains(err.Error(), "a/taken") {
		t.Errorf("err = %v, want one naming a/taken", err)
	}
	if resp, _, err := get(t, free); err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("the other Service's check: %v %v, want 200", resp, err)
	}
}
