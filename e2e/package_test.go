package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestPackageUnderSystemd installs the .deb into a Debian root with Open vSwitch and
// ovn-host, boots it with systemd (systemd-nspawn, its own network namespace), and checks
// what a k3s host gets before k3s: the unit enabled by the package and active (Type=notify:
// the node role is up) without any kubeconfig, the datapath detected, the CNI config and
// plugins in place; a restart works; removing the package stops and disables the unit.
func TestPackageUnderSystemd(t *testing.T) {
	root, deb := packageTestInputs(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	dir := t.TempDir()
	img := filepath.Join(dir, "root")
	run(ctx, t, "cp", "-a", root, img)
	run(ctx, t, "cp", deb, filepath.Join(img, "tmp", "edgeovn.deb"))
	run(ctx, t, "chroot", img, "dpkg", "-i", "/tmp/edgeovn.deb")

	c := bootContainer(ctx, t, img, filepath.Join(dir, "console.log"))
	for _, unit := range []string{"openvswitch-switch", "ovn-host", "edgeovn"} {
		if state := c.systemctl(ctx, t, "is-active", unit); state != "active" {
			t.Fatalf("unit %s is %q after boot:\n%s", unit, state, c.journal(ctx, t))
		}
	}
	for _, f := range []string{"etc/cni/net.d/01-edgeovn.conflist", "opt/cni/bin/edgeovn", "opt/cni/bin/loopback", "opt/cni/bin/portmap"} {
		if _, err := os.Stat(filepath.Join(img, f)); err != nil {
			t.Errorf("/%s after boot: %v", f, err)
		}
	}
	journal := c.journal(ctx, t)
	for _, want := range []string{"waiting for the kubeconfig", "datapath=netdev", "node role ready"} {
		if !strings.Contains(journal, want) {
			t.Errorf("edgeovn's journal lacks %q:\n%s", want, journal)
		}
	}
	c.systemctl(ctx, t, "restart", "edgeovn")
	if state := c.systemctl(ctx, t, "is-active", "edgeovn"); state != "active" {
		t.Fatalf("edgeovn is %q after a restart:\n%s", state, c.journal(ctx, t))
	}
	c.exec(ctx, t, "dpkg", "-r", "edgeovn")
	if state := c.systemctl(ctx, t, "is-active", "edgeovn"); state == "active" {
		t.Fatalf("edgeovn still active after its package was removed")
	}
	if _, err := os.Stat(filepath.Join(img, "etc/systemd/system/multi-user.target.wants/edgeovn.service")); err == nil {
		t.Fatalf("edgeovn still enabled after its package was removed")
	}
}

// packageTestInputs finds the booted root (make deps) and the .deb (make package), or skips
// saying which command makes them.
func packageTestInputs(t *testing.T) (root, deb string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("package test skipped: needs root (chroot, systemd-nspawn)")
	}
	for _, tool := range []string{"systemd-nspawn", "nsenter", "chroot"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("package test skipped: %s missing (run `make deps`)", tool)
		}
	}
	root = os.Getenv("EDGEOVN_PKGROOT")
	if root == "" {
		root = "../.cache/pkgroot"
	}
	if _, err := os.Stat(filepath.Join(root, ".complete")); err != nil {
		t.Skipf("package test skipped: no Debian root at %s (run `make deps`)", root)
	}
	debs, _ := filepath.Glob("../dist/edgeovn_*_amd64.deb")
	if len(debs) != 1 {
		t.Skipf("package test skipped: want one ../dist/edgeovn_*_amd64.deb, have %v (run `make package`)", debs)
	}
	return root, debs[0]
}

// container is a booted systemd-nspawn container.
type container struct {
	nspawn  *exec.Cmd
	initPID int // the container's systemd, as seen from here
}

func bootContainer(ctx context.Context, t *testing.T, img, console string) *container {
	t.Helper()
	out, err := os.Create(console)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("systemd-nspawn", "-D", img, "--private-network", "--register=no", "--keep-unit", "-b", "--console=pipe")
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatalf("start systemd-nspawn: %v", err)
	}
	c := &container{nspawn: cmd}
	t.Cleanup(func() {
		// nspawn powers the container off on SIGTERM; by PID, and waited for.
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		out.Close()
	})
	eventually(ctx, t, "the container's systemd", func() bool {
		c.initPID = childPID(cmd.Process.Pid)
		return c.initPID > 0
	})
	eventually(ctx, t, "the container's boot to finish", func() bool {
		state := c.systemctl(ctx, t, "is-system-running")
		return state == "running" || state == "degraded"
	})
	return c
}

// childPID is the first child of pid, or 0.
func childPID(pid int) int {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + strconv.Itoa(pid) + "/children")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return 0
	}
	n, _ := strconv.Atoi(f[0])
	return n
}

// exec runs a command inside the container (its namespaces) and fails the test on error.
func (c *container) exec(ctx context.Context, t *testing.T, args ...string) string {
	t.Helper()
	out, err := c.command(ctx, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("in the container: %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// systemctl returns systemctl's first line of output; its exit status is its answer.
func (c *container) systemctl(ctx context.Context, t *testing.T, args ...string) string {
	t.Helper()
	out, _ := c.command(ctx, append([]string{"systemctl"}, args...)...).CombinedOutput()
	return strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
}

func (c *container) journal(ctx context.Context, t *testing.T) string {
	t.Helper()
	out, _ := c.command(ctx, "journalctl", "-u", "edgeovn", "--no-pager").CombinedOutput()
	return string(out)
}

func (c *container) command(ctx context.Context, args ...string) *exec.Cmd {
	pid := strconv.Itoa(c.initPID)
	return exec.CommandContext(ctx, "nsenter", append([]string{"-t", pid, "-m", "-u", "-i", "-n", "-p", "--"}, args...)...)
}

func run(ctx context.Context, t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.CommandContext(ctx, args[0], args[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
	}
}
