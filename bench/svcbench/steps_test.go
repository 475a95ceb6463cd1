package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestParseStepLine(t *testing.T) {
	for _, c := range []struct {
		line       string
		pod, step  string
		d          time.Duration
		ok         bool
		whatIsThis string
	}{
		{`time=2026-11-23T14:14:30.640Z level=DEBUG msg="cni add step" role=node verb=ADD pod=with-5 namespace=default netns=/var/run/netns/x subnet=ovn-default lsp=with-5.default ip=10.42.0.7 step="set up veth" duration=31.494214ms err=<nil>`,
			"with-5", "set up veth", 31494214 * time.Nanosecond, true, "a step"},
		{`time=2026-11-23T14:14:30.657Z level=INFO msg="pod network added" role=node verb=ADD pod=with-5 namespace=default netns=/var/run/netns/x subnet=ovn-default lsp=with-5.default ip=10.42.0.7 duration=50.413311ms`,
			"with-5", stepTotal, 50413311 * time.Nanosecond, true, "the total"},
		{`time=2026-11-23T14:14:30.609Z level=DEBUG msg="cni add step" role=node verb=ADD pod=with-5 namespace=default netns=/x step="wait for allocation" duration=52.65µs err=<nil>`,
			"with-5", "wait for allocation", 52650 * time.Nanosecond, true, "microseconds"},
		{`time=2026-11-23T14:14:30.609Z level=DEBUG msg="pod network known" role=node pod=with-5 namespace=default waited=16.03µs`,
			"", "", 0, false, "another message"},
		{`time=2026-11-23T14:14:30.609Z level=DEBUG msg="cni add step" role=node verb=ADD pod=with-5 step="set up veth" duration=soon`,
			"", "", 0, false, "a duration that does not parse"},
		{`time=2026-11-23T14:14:30.609Z level=DEBUG msg="cni add step" role=node verb=DEL pod=with-5 step="x" duration=1ms`,
			"", "", 0, false, "not an ADD"},
	} {
		pod, step, d, ok := parseStepLine(c.line)
		if pod != c.pod || step != c.step || d != c.d || ok != c.ok {
			t.Errorf("%s: got %q %q %v %v, want %q %q %v %v", c.whatIsThis, pod, step, d, ok, c.pod, c.step, c.d, c.ok)
		}
	}
}

func TestReadStepsKeepsOnlyThePrefix(t *testing.T) {
	log := `time=x level=DEBUG msg="cni add step" verb=ADD pod=with-1 step="add ovs port" duration=2ms err=<nil>
time=x level=DEBUG msg="cni add step" verb=ADD pod=without-1 step="add ovs port" duration=3ms err=<nil>
time=x level=INFO msg="pod network added" verb=ADD pod=with-1 duration=9ms
`
	path := filepath.Join(t.TempDir(), "edgeovn.log")
	if err := os.WriteFile(path, []byte(log), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := readSteps(path, "with-")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got["with-1"]["add ovs port"] != 2*time.Millisecond || got["with-1"][stepTotal] != 9*time.Millisecond {
		t.Errorf("readSteps = %v, want with-1 alone with its port step and total", got)
	}
	if _, err := readSteps(filepath.Join(t.TempDir(), "missing.log"), "with-"); err == nil {
		t.Error("readSteps of a missing log: no error")
	}
}

func TestParseRecomputes(t *testing.T) {
	stats := "Node: northd_options\n- recompute:            0\n- compute:              2\nNode: northd\n- recompute:           17\n- compute:              0\n- abort:                0\n"
	if n, err := parseRecomputes(stats, "northd"); err != nil || n != 17 {
		t.Errorf("parseRecomputes(northd) = %d, %v; want 17", n, err)
	}
	if _, err := parseRecomputes(stats, "lflow"); err == nil {
		t.Error("parseRecomputes of a node not listed: no error")
	}
}
