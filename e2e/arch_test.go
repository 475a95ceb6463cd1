package e2e

import (
	"archive/tar"
	"bytes"
	"debug/elf"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// debMachines maps a .deb's architecture to the ELF machine its binaries must be built for.
var debMachines = map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}

// TestPackagesPerArchitecture: `make package` builds a .deb for amd64 and for arm64, and each
// holds the four shipped binaries built for its own architecture, static (no interpreter).
func TestPackagesPerArchitecture(t *testing.T) {
	for arch, machine := range debMachines {
		debs, _ := filepath.Glob("../dist/edgeovn_*_" + arch + ".deb")
		if len(debs) != 1 {
			t.Fatalf("want one ../dist/edgeovn_*_%s.deb, have %v (run `make package`)", arch, debs)
		}
		bins, err := debBinaries(debs[0])
		if err != nil {
			t.Fatal(err)
		}
		for _, path := range []string{"usr/bin/edgeovn", "usr/bin/edgeovn-bgp", "usr/lib/edgeovn/edgeovn-cni", "usr/lib/edgeovn/loopback", "usr/lib/edgeovn/macvlan"} {
			data, ok := bins[path]
			if !ok {
				t.Errorf("%s: no %s", debs[0], path)
				continue
			}
			f, err := elf.NewFile(bytes.NewReader(data))
			if err != nil {
				t.Errorf("%s: %s is not an ELF binary: %v", debs[0], path, err)
				continue
			}
			if f.Machine != machine {
				t.Errorf("%s: %s is built for %v, want %v", debs[0], path, f.Machine, machine)
			}
			for _, p := range f.Progs {
				if p.Type == elf.PT_INTERP {
					t.Errorf("%s: %s is dynamically linked", debs[0], path)
				}
			}
		}
	}
}

// debBinaries reads the regular files of a .deb's data archive under usr/.
func debBinaries(deb string) (map[string][]byte, error) {
	out, err := exec.Command("dpkg-deb", "--fsys-tarfile", deb).Output()
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{}
	tr := tar.NewReader(bytes.NewReader(out))
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return files, nil
		}
		if err != nil {
			return nil, err
		}
		name := strings.TrimPrefix(h.Name, "./")
		if h.Typeflag != tar.TypeReg || !strings.HasPrefix(name, "usr/") {
			continue
		}
		data, err := io.ReadAll(tr)
		if err != nil {
			return nil, err
		}
		files[name] = data
	}
}
