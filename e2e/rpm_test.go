package e2e

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/edgeovn/edgeovn/e2e/skip"
)

// TestRPMScriptlets reads the scriptlets out of the .rpm with rpm itself and runs each with
// the $1 values rpm passes (1 install, 2 upgrade; 0 erase, 1 upgrade on removal), with a
// systemctl and an edgeovn on PATH that only record their calls, in a mount namespace where
// /run/systemd/system exists (systemd running) and /var/lib is a scratch tmpfs. An install
// enables and starts edgeovn.socket with the service; an upgrade must keep the unit enabled
// (never disable it), the socket enabled with it, and try-restart it; removal stops the socket
// with the service.
func TestRPMScriptlets(t *testing.T) {
	rpmFile := rpmTestInput(t)
	out, err := exec.Command("rpm", "-qp", "--scripts", rpmFile).CombinedOutput()
	if err != nil {
		t.Fatalf("rpm -qp --scripts: %v\n%s", err, out)
	}
	scripts := parseScriptlets(t, string(out))
	dir := t.TempDir()
	fake := filepath.Join(dir, "bin")
	rpmMust(t, os.Mkdir(fake, 0o755))
	calls := filepath.Join(dir, "calls")
	for _, tool := range []string{"systemctl", "edgeovn"} {
		rpmMust(t, os.WriteFile(filepath.Join(fake, tool), []byte("#!/bin/sh\necho "+tool+` "$@" >>`+calls+"\n"), 0o755))
	}
	cases := []struct {
		scriptlet, arg string
		want           []string
	}{
		{"postinstall", "1", []string{"systemctl daemon-reload", "systemctl enable edgeovn.socket edgeovn.service",
			"systemctl start edgeovn.socket", "systemctl restart edgeovn.service"}},
		// The recording systemctl answers yes to every question: enabled, and the socket active.
		{"postinstall", "2", []string{"systemctl daemon-reload", "systemctl is-enabled --quiet edgeovn.service", "systemctl enable edgeovn.socket",
			"systemctl is-active --quiet edgeovn.socket", "systemctl try-restart edgeovn.service"}},
		{"preuninstall", "1", nil},
		{"preuninstall", "0", []string{"systemctl disable edgeovn.socket edgeovn.service", "systemctl stop edgeovn.socket edgeovn.service", "edgeovn cleanup --cni"}},
		{"postuninstall", "1", nil},
		{"postuninstall", "0", []string{"systemctl daemon-reload"}},
	}
	for _, c := range cases {
		body, ok := scripts[c.scriptlet]
		if !ok {
			t.Fatalf("the rpm has no %s scriptlet; it has %v", c.scriptlet, scriptletNames(scripts))
		}
		script := filepath.Join(dir, c.scriptlet+".sh")
		rpmMust(t, os.WriteFile(script, []byte(body), 0o755))
		_ = os.Remove(calls)
		cmd := exec.Command("unshare", "--mount", "--propagation", "private", "sh", "-c",
			`mount -t tmpfs tmpfs /run && mkdir -p /run/systemd/system && mount -t tmpfs tmpfs /var/lib && exec sh "$0" "$1"`, script, c.arg)
		cmd.Env = append(os.Environ(), "PATH="+fake+":"+os.Getenv("PATH"))
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s %s: %v\n%s", c.scriptlet, c.arg, err, out)
		}
		b, _ := os.ReadFile(calls)
		got := strings.Split(strings.TrimSpace(string(b)), "\n")
		if len(b) == 0 {
			got = nil
		}
		if strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("%s with $1=%s ran\n%q\nwant\n%q", c.scriptlet, c.arg, got, c.want)
		}
	}
	out, err = exec.Command("rpm", "-qp", "--qf", `[%{FILEFLAGS:fflags} %{FILENAMES}\n]`, rpmFile).CombinedOutput()
	if err != nil || !regexp.MustCompile(`(?m)^c\S*n\S* /etc/default/edgeovn$`).Match(out) {
		t.Errorf("/etc/default/edgeovn is not %%config(noreplace) in the rpm (%v):\n%s", err, out)
	}
}

// rpmTestInput finds the .rpm (make package) and the tools, or skips saying what is missing.
func rpmTestInput(t *testing.T) string {
	t.Helper()
	if os.Geteuid() != 0 {
		skip.Now(t, "rpm scriptlet test: needs root (a private mount namespace)")
	}
	for _, tool := range []string{"rpm", "unshare"} {
		if _, err := exec.LookPath(tool); err != nil {
			skip.Now(t, "rpm scriptlet test: %s missing (run `make deps`)", tool)
		}
	}
	rpms, _ := filepath.Glob("../dist/edgeovn-*.x86_64.rpm")
	if len(rpms) != 1 {
		skip.Now(t, "rpm scriptlet test: want one ../dist/edgeovn-*.x86_64.rpm, have %v (run `make package`)", rpms)
	}
	return rpms[0]
}

var scriptletHeader = regexp.MustCompile(`^(\w+) scriptlet \(using ([^)]+)\):$`)

// parseScriptlets splits `rpm -qp --scripts` output into scriptlet name -> body.
func parseScriptlets(t *testing.T, out string) map[string]string {
	t.Helper()
	scripts := map[string]string{}
	var name string
	var body strings.Builder
	flush := func() {
		if name != "" {
			scripts[name] = body.String()
		}
		body.Reset()
	}
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		if m := scriptletHeader.FindStringSubmatch(sc.Text()); m != nil {
			flush()
			name = m[1]
			if m[2] != "/bin/sh" {
				t.Errorf("%s scriptlet runs with %s, not /bin/sh", name, m[2])
			}
			continue
		}
		body.WriteString(sc.Text() + "\n")
	}
	flush()
	return scripts
}

func scriptletNames(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

func rpmMust(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
