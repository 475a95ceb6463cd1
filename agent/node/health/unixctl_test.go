package health

import (
	"context"
	"encoding/json"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// fakeDaemon serves unixctl's version request at <dir>/<name>.<pid>.ctl with pid file, as
// ovs-vswitchd does; answer false accepts and then stays silent, as a hung daemon.
func fakeDaemon(t *testing.T, dir, name string, answer bool) net.Listener {
	t.Helper()
	pid := 4242
	if err := os.WriteFile(filepath.Join(dir, name+".pid"), []byte(strconv.Itoa(pid)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", filepath.Join(dir, name+"."+strconv.Itoa(pid)+".ctl"))
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
				var req struct {
					Method string `json:"method"`
					ID     int    `json:"id"`
				}
				if json.NewDecoder(c).Decode(&req) != nil || !answer {
					time.Sleep(5 * time.Second)
					return
				}
				_ = json.NewEncoder(c).Encode(map[string]any{"id": req.ID, "result": name + " 3.1.0\n", "error": nil})
			}()
		}
	}()
	return ln
}

func TestDaemonAnswers(t *testing.T) {
	ctx := func() context.Context {
		c, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		t.Cleanup(cancel)
		return c
	}
	cases := []struct {
		name  string
		setup func(t *testing.T, dir string)
		want  string // "" for success
	}{
		{"alive", func(t *testing.T, dir string) { fakeDaemon(t, dir, "ovs-vswitchd", true) }, ""},
		{"no pid file", func(t *testing.T, dir string) {}, "no pid file"},
		{"garbage pid file", func(t *testing.T, dir string) {
			_ = os.WriteFile(filepath.Join(dir, "ovs-vswitchd.pid"), []byte("x"), 0o644)
		}, "not a pid"},
		{"killed: socket file left behind", func(t *testing.T, dir string) {
			ln := fakeDaemon(t, dir, "ovs-vswitchd", true)
			ln.(*net.UnixListener).SetUnlinkOnClose(false)
			ln.Close()
		}, "not running"},
		{"hung", func(t *testing.T, dir string) { fakeDaemon(t, dir, "ovs-vswitchd", false) }, "not answering"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			c.setup(t, dir)
			err := Daemon{Name: "ovs-vswitchd", RunDir: dir}.Answers(ctx())
			if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
				t.Fatalf("Answers = %v, want %q", err, c.want)
			}
		})
	}
}
