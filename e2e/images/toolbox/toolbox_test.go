package main

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"

	"github.com/edgeovn/edgeovn/e2e/skip"
)

// shell runs a script in the toolbox's shell and returns its output and exit code.
func shell(t *testing.T, script string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(context.Background(), stdio{in: strings.NewReader(""), out: &out, err: &errb, dir: t.TempDir()}, "/bin/sh", []string{"-c", script})
	return out.String(), errb.String(), code
}

// TestShellScriptsOfTheE2ETests runs the shapes of script the upstream tests send, against
// real local servers: a loop with command substitution and test, curl's body and -w, nc's
// exchange, and the exit codes they branch on.
func TestShellScriptsOfTheE2ETests(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/missing" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte("pod-a"))
	}))
	defer srv.Close()
	echo := tcpEcho(t)
	addr := strings.TrimPrefix(srv.URL, "http://")
	for _, tc := range []struct {
		script, want string
		code         int
	}{
		{`for i in $(seq 1 3); do check="$(echo x$i)" && test -n "$check" && echo OK$i; done`, "OK1\nOK2\nOK3\n", 0},
		{`curl -g -q -s --connect-timeout 1 http://` + addr + `/hostName`, "pod-a", 0},
		{`curl -q -s --connect-timeout 5 ` + addr + `/hostname`, "pod-a", 0},
		{`curl -g -q -s -o /dev/null -w %{http_code} http://` + addr + `/missing`, "404", 0},
		{`curl -g -s --connect-timeout 1 http://127.0.0.1:1 && echo service-down-failed; echo rc=$?`, "rc=7\n", 0},
		{`echo hostName | nc -v -t -w 2 ` + strings.Replace(echo, ":", " ", 1), "hostName\n", 0},
		{`nc -w 1 127.0.0.1 1`, "", 1},
		{`wget -T 5 -qO- ` + srv.URL, "pod-a", 0},
		{`wget -q -O - ` + srv.URL + `/missing`, "", 1},
		{`timeout 0.2 sleep 5`, "", 124},
		{`nosuchtool`, "", 127},
		{`printf 'netserver-0\n\n  \n' | grep -v '^\s*$'`, "netserver-0\n", 0},
		{`echo a | grep -q b`, "", 1},
		{`printf 'x\nX\ny\n' | grep -ic x`, "2\n", 0},
		{`nslookup localhost >/dev/null && echo resolved`, "resolved\n", 0},
		{`nslookup no-such-name.invalid`, "", 1},
	} {
		out, errOut, code := shell(t, tc.script)
		if out != tc.want || code != tc.code {
			t.Errorf("sh -c %q = %q, exit %d (stderr %q); want %q, exit %d", tc.script, out, code, errOut, tc.want, tc.code)
		}
	}
}

func tcpEcho(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				var buf bytes.Buffer
				_, _ = buf.ReadFrom(c)
				_, _ = c.Write(buf.Bytes())
			}()
		}
	}()
	return ln.Addr().String()
}

// TestBadOptionsAreRefused: an option a tool does not implement is exit code 2 with its name.
func TestBadOptionsAreRefused(t *testing.T) {
	for _, script := range []string{"curl --compressed http://x", "nc -l 80", "dig -x 1.2.3.4", "wget -q http://x", "getent passwd root", "seq 1 0 3", "sh -i"} {
		_, errOut, code := shell(t, script)
		if code != 2 || errOut == "" {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 and a message", script, code, errOut)
		}
	}
}

// TestDigSearchesLikeResolvConf: +search tries the search domains first for a short name,
// and a fully qualified name alone.
func TestDigSearchesLikeResolvConf(t *testing.T) {
	rc := parseResolvConf("search ns1.svc.cluster.local svc.cluster.local cluster.local\nnameserver 10.43.0.10\noptions ndots:5\n")
	if len(rc.servers) != 1 || rc.servers[0] != "10.43.0.10" || rc.ndots != 5 {
		t.Fatalf("parsed %+v", rc)
	}
	got := strings.Join(rc.candidates("kubernetes.default", true), " ")
	want := "kubernetes.default.ns1.svc.cluster.local. kubernetes.default.svc.cluster.local. kubernetes.default.cluster.local. kubernetes.default."
	if got != want {
		t.Fatalf("candidates = %s, want %s", got, want)
	}
	if got := rc.candidates("kubernetes.default.svc.cluster.local.", true); len(got) != 1 {
		t.Fatalf("a fully qualified name searched: %v", got)
	}
	if got := rc.candidates("kubernetes.default", false); len(got) != 1 {
		t.Fatalf("without +search: %v", got)
	}
}

// TestDigAsksOverUDPAndTCP: dig's query reaches a DNS server on both transports and the
// answer is printed in dig's two formats.
func TestDigAsksOverUDPAndTCP(t *testing.T) {
	dnsServer(t)
	for _, args := range [][]string{{"+notcp", "+short"}, {"+tcp", "+noall", "+answer"}} {
		var out, errb bytes.Buffer
		s := stdio{in: strings.NewReader(""), out: &out, err: &errb, dir: t.TempDir()}
		code := dig(context.Background(), s, append(args, "@127.0.0.1", "web.default.svc.cluster.local"))
		want := "10.43.0.7\n"
		if args[1] == "+noall" {
			want = "web.default.svc.cluster.local.\t30\tIN\tA\t10.43.0.7\n"
		}
		if code != 0 || out.String() != want {
			t.Errorf("dig %v: exit %d, %q (stderr %q); want %q", args, code, out.String(), errb.String(), want)
		}
	}
}

// dnsServer answers every A query with 10.43.0.7 on 127.0.0.1:53 over UDP and TCP; it skips
// the test when the port is taken or not allowed.
func dnsServer(t *testing.T) {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:53")
	if err != nil {
		skip.Now(t, "cannot listen on 127.0.0.1:53: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:53")
	if err != nil {
		pc.Close()
		skip.Now(t, "cannot listen on 127.0.0.1:53: %v", err)
	}
	t.Cleanup(func() { pc.Close(); ln.Close() })
	go func() {
		buf := make([]byte, 512)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			_, _ = pc.WriteTo(answer(buf[:n]), from)
		}
	}()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.SetDeadline(time.Now().Add(5 * time.Second))
			var l [2]byte
			if _, err := c.Read(l[:]); err == nil {
				q := make([]byte, int(l[0])<<8|int(l[1]))
				if _, err := c.Read(q); err == nil {
					a := answer(q)
					_, _ = c.Write(append([]byte{byte(len(a) >> 8), byte(len(a))}, a...))
				}
			}
			c.Close()
		}
	}()
}

func answer(q []byte) []byte {
	var m dnsmessage.Message
	if err := m.Unpack(q); err != nil || len(m.Questions) != 1 {
		return nil
	}
	m.Header.Response = true
	m.Answers = []dnsmessage.Resource{{Header: dnsmessage.ResourceHeader{Name: m.Questions[0].Name, Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET, TTL: 30},
		Body: &dnsmessage.AResource{A: [4]byte{10, 43, 0, 7}}}}
	b, _ := m.Pack()
	return b
}
