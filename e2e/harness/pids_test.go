package harness

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParsePidRecord(t *testing.T) {
	tests := []struct {
		line    string
		want    pidRecord
		wantErr string
	}{
		{line: "etcd 123 456", want: pidRecord{Name: "etcd", PID: 123, StartTime: 456}},
		{line: "  ovn-northd\t7 8 ", want: pidRecord{Name: "ovn-northd", PID: 7, StartTime: 8}},
		{line: "etcd 123", wantErr: `want "name pid starttime"`},
		{line: "etcd 123 456 789", wantErr: `want "name pid starttime"`},
		{line: "etcd x 456", wantErr: `bad pid "x"`},
		{line: "etcd 0 456", wantErr: `bad pid "0"`},
		{line: "etcd -4 456", wantErr: `bad pid "-4"`},
		{line: "etcd 12 -1", wantErr: `bad start time "-1"`},
	}
	for _, tt := range tests {
		got, err := parsePidRecord(tt.line)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("parsePidRecord(%q) err = %v, want it to say %q", tt.line, err, tt.wantErr)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("parsePidRecord(%q) = %+v, %v; want %+v", tt.line, got, err, tt.want)
		}
		if back, err := parsePidRecord(got.String()); err != nil || back != got {
			t.Errorf("round trip of %+v = %+v, %v", got, back, err)
		}
	}
}

func TestProcStatSelf(t *testing.T) {
	state, start, err := procStat(os.Getpid())
	if err != nil || start == 0 || state == 'Z' {
		t.Fatalf("procStat(self) = %c, %d, %v", state, start, err)
	}
	if !(pidRecord{Name: "self", PID: os.Getpid(), StartTime: start}).alive() {
		t.Error("this process is not alive by its own record")
	}
	if (pidRecord{Name: "self", PID: os.Getpid(), StartTime: start + 1}).alive() {
		t.Error("a record with another start time (a reused PID) counts as alive")
	}
}

func TestPrepareDirRejects(t *testing.T) {
	long := "/tmp/" + strings.Repeat("d", maxSocketPath)
	if _, err := prepareDir(long); err == nil || !strings.Contains(err.Error(), "too long") {
		t.Errorf("prepareDir(%d-byte dir) err = %v, want too long", len(long), err)
	}
	if _, err := os.Stat(long); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("rejected dir was created: %v", err)
	}

	inUse, err := os.MkdirTemp("/tmp", "eovn-t-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(inUse) })
	pids := filepath.Join(inUse, pidsFile)
	if err := os.WriteFile(pids, []byte("etcd 1 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := prepareDir(inUse); !errors.Is(err, ErrDirInUse) {
		t.Errorf("prepareDir(dir with pids) err = %v, want ErrDirInUse", err)
	}
	if b, err := os.ReadFile(pids); err != nil || string(b) != "etcd 1 2\n" {
		t.Errorf("pids file of the rig in use changed: %q, %v", b, err)
	}
}

func TestStopDirWithoutRig(t *testing.T) {
	dir := t.TempDir()
	keep := filepath.Join(dir, "precious")
	if err := os.WriteFile(keep, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := StopDir(dir); !errors.Is(err, ErrNoRig) {
		t.Fatalf("StopDir(dir without pids) err = %v, want ErrNoRig", err)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Errorf("StopDir removed files of a dir that holds no rig: %v", err)
	}
}
