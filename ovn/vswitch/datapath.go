package vswitch

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// Datapath types for BridgeSpec.DatapathType.
const (
	DatapathSystem = "system" // the openvswitch kernel module
	DatapathNetdev = "netdev" // OVS's userspace datapath
)

// DetectDatapathType returns DatapathSystem when the openvswitch kernel module is loaded or
// can be loaded (listed in modules.dep or modules.builtin of the running kernel), else
// DatapathNetdev. sysRoot prefixes /sys and /lib/modules ("" means "/"), for tests.
func DetectDatapathType(sysRoot string) string {
	return detectDatapathType(sysRoot, kernelRelease())
}

func detectDatapathType(sysRoot, release string) string {
	if sysRoot == "" {
		sysRoot = "/"
	}
	if _, err := os.Stat(filepath.Join(sysRoot, "sys", "module", "openvswitch")); err == nil {
		return DatapathSystem
	}
	if release == "" {
		return DatapathNetdev
	}
	dir := filepath.Join(sysRoot, "lib", "modules", release)
	for _, list := range []string{"modules.dep", "modules.builtin"} {
		if listsModule(filepath.Join(dir, list), "openvswitch") {
			return DatapathSystem
		}
	}
	return DatapathNetdev
}

// listsModule reports whether a modules.dep or modules.builtin file names module: each line
// starts with a path like kernel/net/openvswitch/openvswitch.ko[.xz][: deps].
func listsModule(path, module string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		file, _, _ := strings.Cut(sc.Text(), ":")
		base := filepath.Base(strings.TrimSpace(file))
		name, _, ok := strings.Cut(base, ".ko")
		if ok && strings.ReplaceAll(name, "-", "_") == module {
			return true
		}
	}
	return false
}

func kernelRelease() string {
	var u syscall.Utsname
	if err := syscall.Uname(&u); err != nil {
		return ""
	}
	b := make([]byte, 0, len(u.Release))
	for _, c := range u.Release {
		if c == 0 {
			break
		}
		b = append(b, byte(c))
	}
	return string(b)
}
