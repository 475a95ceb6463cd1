package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/edgeovn/edgeovn/e2e/skip"
)

// TestPackageUnderSystemd installs the .deb into a Debian root with Open vSwitch and
// ovn-host, boots it with systemd (systemd-nspawn, in a network namespace of its own with an
// uplink and a default route, as a host has), and checks
// what a k3s host gets before k3s: the unit and edgeovn.socket enabled by the package and
// active (Type=notify: the node role is up; the CNI socket passed by systemd) without any
// kubeconfig, the datapath detected, the CNI config and
// plugins in place; a restart works. Then the package's life: an upgrade to a build with
// another version keeps a changed /etc/default/edgeovn, keeps the unit enabled and restarts
// it, and keeps a changed /etc/edgeovn/config.yaml, which the restarted daemon reads; removal
// stops and disables the unit and its socket and takes the CNI config, the CNI binary and the
// plugins edgeovn installed with it; purge removes edgeovn's OVS ports, ovn0 and the state,
// and keeps a port edgeovn did not make.
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
	for _, unit := range []string{"openvswitch-switch", "ovn-host", "edgeovn.socket", "edgeovn"} {
		if state := c.systemctl(ctx, t, "is-active", unit); state != "active" {
			t.Fatalf("unit %s is %q after boot:\n%s", unit, state, c.journal(ctx, t))
		}
	}
	for _, f := range []string{"etc/cni/net.d/01-edgeovn.conflist", "opt/cni/bin/edgeovn", "opt/cni/bin/loopback", "opt/cni/bin/macvlan", "etc/edgeovn/config.yaml"} {
		if _, err := os.Stat(filepath.Join(img, f)); err != nil {
			t.Errorf("/%s after boot: %v", f, err)
		}
	}
	journal := c.journal(ctx, t)
	for _, want := range []string{"waiting for the kubeconfig", "datapath=netdev", `msg="node datapath ready"`, "cni socket passed by systemd",
		`msg="encapsulation address set" role=node encap_ip=192.0.2.10`} {
		if !strings.Contains(journal, want) {
			t.Errorf("edgeovn's journal lacks %q:\n%s", want, journal)
		}
	}
	c.systemctl(ctx, t, "restart", "edgeovn")
	if state := c.systemctl(ctx, t, "is-active", "edgeovn"); state != "active" {
		t.Fatalf("edgeovn is %q after a restart:\n%s", state, c.journal(ctx, t))
	}
	upgradePackage(ctx, t, c, img, deb)
	removePackage(ctx, t, c, img)
	purgePackage(ctx, t, c, img)
}

// upgradePackage installs a second build of the .deb, with a later version, over the first.
func upgradePackage(ctx context.Context, t *testing.T, c *container, img, deb string) {
	t.Helper()
	const changed = "EDGEOVN_OPTS=\"--cluster-cidr=10.42.0.0/16 --log-level=debug\"\n"
	conf := filepath.Join(img, "etc/default/edgeovn")
	if err := os.WriteFile(conf, []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	yamlConf := filepath.Join(img, "etc/edgeovn/config.yaml")
	shipped, err := os.ReadFile(yamlConf)
	if err != nil {
		t.Fatal(err)
	}
	changedYAML := string(shipped) + "\n# changed by the admin\nmetrics-address: 127.0.0.1:10666\n"
	if err := os.WriteFile(yamlConf, []byte(changedYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	pidBefore := c.systemctl(ctx, t, "show", "-p", "MainPID", "--value", "edgeovn")
	// /root, not /tmp: the booted container has a tmpfs on /tmp.
	next := rebuildWithVersion(ctx, t, deb, filepath.Join(img, "root"))
	c.exec(ctx, t, "dpkg", "-i", "--force-confold", "/root/"+filepath.Base(next))
	if got := c.exec(ctx, t, "dpkg-query", "-W", "-f=${Version}", "edgeovn"); !strings.HasSuffix(got, "+upgrade") {
		t.Fatalf("installed version after the upgrade: %q", got)
	}
	if b, _ := os.ReadFile(conf); string(b) != changed {
		t.Errorf("the upgrade replaced the changed /etc/default/edgeovn with:\n%s", b)
	}
	if b, _ := os.ReadFile(yamlConf); string(b) != changedYAML {
		t.Errorf("the upgrade replaced the changed /etc/edgeovn/config.yaml with:\n%s", b)
	}
	if state := c.systemctl(ctx, t, "is-enabled", "edgeovn"); state != "enabled" {
		t.Errorf("edgeovn is %q after the upgrade, want enabled", state)
	}
	eventually(ctx, t, "edgeovn active again after the upgrade", func() bool {
		return c.systemctl(ctx, t, "is-active", "edgeovn") == "active"
	})
	if pid := c.systemctl(ctx, t, "show", "-p", "MainPID", "--value", "edgeovn"); pid == pidBefore || pid == "0" {
		t.Errorf("edgeovn not restarted by the upgrade: MainPID %s before, %s after", pidBefore, pid)
	}
	if j := c.journal(ctx, t); !strings.Contains(j, "address=127.0.0.1:10666") {
		t.Errorf("the restarted edgeovn did not read /etc/edgeovn/config.yaml (metrics-address):\n%s", j)
	}
}

// rebuildWithVersion writes, into dir, the .deb again with "+upgrade" appended to its
// version: a second build, as an upgrade brings.
func rebuildWithVersion(ctx context.Context, t *testing.T, deb, dir string) string {
	t.Helper()
	tree := filepath.Join(t.TempDir(), "deb")
	run(ctx, t, "dpkg-deb", "-R", deb, tree)
	control := filepath.Join(tree, "DEBIAN", "control")
	b, err := os.ReadFile(control)
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`(?m)^Version: (.*)$`)
	if !re.Match(b) {
		t.Fatalf("no Version in %s:\n%s", control, b)
	}
	if err := os.WriteFile(control, re.ReplaceAll(b, []byte("Version: $1+upgrade")), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "edgeovn-upgrade.deb")
	run(ctx, t, "dpkg-deb", "--root-owner-group", "-b", tree, out)
	return out
}

// removePackage removes the package: the unit stopped and disabled, and no CNI config or
// plugin left for the runtime to call.
func removePackage(ctx context.Context, t *testing.T, c *container, img string) {
	t.Helper()
	c.exec(ctx, t, "dpkg", "-r", "edgeovn")
	if state := c.systemctl(ctx, t, "is-active", "edgeovn"); state == "active" {
		t.Fatalf("edgeovn still active after its package was removed")
	}
	if _, err := os.Stat(filepath.Join(img, "etc/systemd/system/multi-user.target.wants/edgeovn.service")); err == nil {
		t.Fatalf("edgeovn still enabled after its package was removed")
	}
	if state := c.systemctl(ctx, t, "is-active", "edgeovn.socket"); state == "active" {
		t.Fatalf("edgeovn.socket still active after its package was removed: a CNI call would start edgeovn again")
	}
	if _, err := os.Stat(filepath.Join(img, "etc/systemd/system/sockets.target.wants/edgeovn.socket")); err == nil {
		t.Fatalf("edgeovn.socket still enabled after its package was removed")
	}
	for _, f := range []string{"etc/cni/net.d/01-edgeovn.conflist", "opt/cni/bin/edgeovn", "opt/cni/bin/loopback", "opt/cni/bin/macvlan"} {
		if _, err := os.Stat(filepath.Join(img, f)); err == nil {
			t.Errorf("/%s left after the package was removed: the runtime would call a plugin that is gone", f)
		}
	}
	for _, f := range []string{"etc/default/edgeovn", "etc/edgeovn/config.yaml"} {
		if _, err := os.Stat(filepath.Join(img, f)); err != nil {
			t.Errorf("removal (not purge) took the configuration: %v", err)
		}
	}
}

// purgePackage gives OVS the ports a node has (ovn0, a pod port) and one edgeovn did not
// make, purges, and checks that only edgeovn's are gone, with its state.
func purgePackage(ctx context.Context, t *testing.T, c *container, img string) {
	t.Helper()
	vsctl := func(args ...string) string {
		return c.exec(ctx, t, append([]string{"ovs-vsctl", "--timeout=10"}, args...)...)
	}
	vsctl("add-port", "br-int", "ovn0", "--", "set", "Port", "ovn0", "external_ids:vendor=edgeovn",
		"--", "set", "Interface", "ovn0", "type=internal", "external_ids:iface-id=node-test")
	vsctl("add-port", "br-int", "3f2a_h", "--", "set", "Port", "3f2a_h", "external_ids:vendor=edgeovn",
		"--", "set", "Interface", "3f2a_h", "external_ids:iface-id=web.default", "external_ids:container_id=3f2a")
	vsctl("add-port", "br-int", "keepme")
	if _, err := os.Stat(filepath.Join(img, "var/lib/edgeovn")); err != nil {
		t.Fatalf("no state directory before the purge: %v", err)
	}
	out := c.exec(ctx, t, "dpkg", "-P", "edgeovn")
	ports := strings.Fields(vsctl("list-ports", "br-int"))
	if strings.Join(ports, " ") != "keepme" {
		t.Errorf("ports on br-int after the purge: %v, want only keepme\n%s", ports, out)
	}
	for _, f := range []string{"var/lib/edgeovn", "etc/default/edgeovn", "etc/edgeovn/config.yaml"} {
		if _, err := os.Stat(filepath.Join(img, f)); err == nil {
			t.Errorf("/%s left after the purge\n%s", f, out)
		}
	}
}

// packageTestInputs finds the booted root (make deps) and the .deb (make package), or skips
// saying which command makes them.
func packageTestInputs(t *testing.T) (root, deb string) {
	t.Helper()
	if os.Geteuid() != 0 {
		skip.Now(t, "package test: needs root (chroot, systemd-nspawn)")
	}
	for _, tool := range []string{"systemd-nspawn", "nsenter", "chroot"} {
		if _, err := exec.LookPath(tool); err != nil {
			skip.Now(t, "package test: %s missing (run `make deps`)", tool)
		}
	}
	root = os.Getenv("EDGEOVN_PKGROOT")
	if root == "" {
		root = "../.cache/pkgroot"
	}
	if _, err := os.Stat(filepath.Join(root, ".complete")); err != nil {
		skip.Now(t, "package test: no Debian root at %s (run `make deps`)", root)
	}
	debs, _ := filepath.Glob("../dist/edgeovn_*_amd64.deb")
	if len(debs) != 1 {
		skip.Now(t, "package test: want one ../dist/edgeovn_*_amd64.deb, have %v (run `make package`)", debs)
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
	// CAP_NET_ADMIN, which --private-network implies and a namespace given by path does not:
	// ovs-vswitchd needs it for the netdev datapath.
	netns := hostNetns(ctx, t)
	cmd := exec.Command("systemd-nspawn", "-D", img, "--network-namespace-path="+netns, "--capability=CAP_NET_ADMIN", "--register=no", "--keep-unit", "-b", "--console=pipe")
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
		// The container's systemd, not a helper nspawn forks first (it enters the given
		// network namespace through one).
		c.initPID = childPID(cmd.Process.Pid)
		comm, _ := os.ReadFile("/proc/" + strconv.Itoa(c.initPID) + "/comm")
		return c.initPID > 0 && strings.TrimSpace(string(comm)) == "systemd"
	})
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(200 * time.Millisecond) {
		state := c.systemctl(ctx, t, "is-system-running")
		if state == "running" || state == "degraded" {
			break
		}
		if time.Now().After(deadline) {
			jobs, _ := c.command(ctx, "systemctl", "list-jobs", "--no-pager").CombinedOutput()
			b, _ := os.ReadFile(console)
			t.Fatalf("the container's boot did not finish in 2 minutes (%s):\n%s\n%s\nconsole:\n%s", state, jobs, c.journal(ctx, t), b)
		}
	}
	return c
}

// hostNetns makes the container's network namespace as a host has it: lo, and an uplink eth0
// (a tap no program reads, as the rig's) with an address and the default route, whose source
// edgeovn takes as its tunnel endpoint. The namespace is deleted when the test ends, after
// the container (cleanups run last-registered first).
func hostNetns(ctx context.Context, t *testing.T) string {
	t.Helper()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	name := "eovn-pkg-" + hex.EncodeToString(b)
	run(ctx, t, "ip", "netns", "add", name)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "delete", name).Run() })
	for _, args := range [][]string{
		{"link", "set", "lo", "up"},
		{"tuntap", "add", "dev", "eth0", "mode", "tap"},
		{"addr", "add", "192.0.2.10/24", "dev", "eth0"},
		{"link", "set", "eth0", "up"},
		{"route", "add", "default", "via", "192.0.2.1", "dev", "eth0"},
	} {
		run(ctx, t, append([]string{"ip", "-n", name}, args...)...)
	}
	return "/run/netns/" + name
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
