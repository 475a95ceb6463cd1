package main

import (
	"context"
	"io"
	"log/slog"
	"net/netip"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/edgeovn/edgeovn/agent/config"
)

// TestReadBGP: the reload reads the file again under the same flags: its BGP options come
// back, a flag still wins over the file, a bad value is refused naming the option, and a
// change to another option is reported as such.
func TestReadBGP(t *testing.T) {
	path := hermetic(t)
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(path, []byte("node-name: n1\n"+s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("")
	args := []string{"--config=" + path, "--cluster-as=65020"}
	o, err := parseRun(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	running := o.Config
	if err := running.Validate(); err != nil {
		t.Fatal(err)
	}

	write("neighbor-address: 198.51.100.1\nneighbor-as: 65010\ncluster-as: 65030\n")
	b, others, err := readBGP(args, running)
	if err != nil || others {
		t.Fatalf("readBGP: %v (others changed: %v)", err, others)
	}
	if len(b.NeighborAddresses) != 1 || b.NeighborAddresses[0] != netip.MustParseAddr("198.51.100.1") || b.NeighborAS != 65010 || b.ClusterAS != 65020 {
		t.Errorf("got neighbours %v, neighbor-as %d, cluster-as %d; want 198.51.100.1, 65010 and the flag's 65020", b.NeighborAddresses, b.NeighborAS, b.ClusterAS)
	}

	write("neighbor-address: 198.51.100.1\nholdtime: 1s\n")
	if _, _, err := readBGP(args, running); err == nil || !strings.Contains(err.Error(), "holdtime 1s") {
		t.Errorf("a hold time of 1s: got %v, want an error naming holdtime", err)
	}
	write("neighbor-address: 198.51.100.1\nmtu: 1300\n")
	if _, others, err := readBGP(args, running); err != nil || !others {
		t.Errorf("mtu changed: got others %v, %v; want reported", others, err)
	}
}

// TestReloadOnHUP: each SIGHUP hands the file's BGP options on; a bad file hands nothing on.
func TestReloadOnHUP(t *testing.T) {
	path := hermetic(t)
	if err := os.WriteFile(path, []byte("node-name: n1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"--config=" + path}
	o, err := parseRun(t, args...)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := make(chan config.BGP)
	go reloadOnHUP(ctx, reloadRequest{args: args, running: o.Config, out: out, log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	time.Sleep(100 * time.Millisecond) // signal.Notify in place
	hup := func(file string) {
		t.Helper()
		if err := os.WriteFile(path, []byte("node-name: n1\n"+file), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := syscall.Kill(os.Getpid(), syscall.SIGHUP); err != nil {
			t.Fatal(err)
		}
	}
	hup("neighbor-as: 0\nneighbor-address: 198.51.100.1\n")
	time.Sleep(200 * time.Millisecond)
	hup("neighbor-address: 198.51.100.9\n")
	select {
	case b := <-out:
		if len(b.NeighborAddresses) != 1 || b.NeighborAddresses[0] != netip.MustParseAddr("198.51.100.9") {
			t.Errorf("first options handed on: neighbours %v, want the good file's 198.51.100.9 (the bad one refused)", b.NeighborAddresses)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no options handed on after SIGHUP")
	}
}
