package main

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"time"
)

// The daemon's debug lines about an ADD (cni/server): one "cni add step" line per step with
// its step and duration, then "pod network added" with the whole ADD's duration.
const (
	stepMsg  = `msg="cni add step"`
	addedMsg = `msg="pod network added"`
	// stepTotal is the key addSteps gives the daemon's whole ADD.
	stepTotal = "daemon total"
)

// serverSteps is what the daemon logged about each pod's ADD: pod name to step to duration.
type serverSteps map[string]map[string]time.Duration

// readSteps reads the daemon's log (slog text format, debug level) and returns the steps of
// the ADDs of pods whose names start with prefix.
func readSteps(path, prefix string) (serverSteps, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read daemon log: %w", err)
	}
	defer f.Close()
	out := serverSteps{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	for sc.Scan() {
		pod, step, d, ok := parseStepLine(sc.Text())
		if !ok || !strings.HasPrefix(pod, prefix) {
			continue
		}
		if out[pod] == nil {
			out[pod] = map[string]time.Duration{}
		}
		out[pod][step] += d
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read daemon log %s: %w", path, err)
	}
	return out, nil
}

// parseStepLine reads one ADD step (or the ADD's total) from a log line.
func parseStepLine(line string) (pod, step string, d time.Duration, ok bool) {
	switch {
	case strings.Contains(line, stepMsg):
		step = logValue(line, "step")
	case strings.Contains(line, addedMsg):
		step = stepTotal
	default:
		return "", "", 0, false
	}
	pod = logValue(line, "pod")
	d, err := time.ParseDuration(logValue(line, "duration"))
	if err != nil || pod == "" || step == "" || logValue(line, "verb") != "ADD" {
		return "", "", 0, false
	}
	return pod, step, d, true
}

// logValue returns the value of key in a slog text line (quoted or not), "" if absent.
func logValue(line, key string) string {
	i := strings.Index(line, " "+key+"=")
	if i < 0 {
		return ""
	}
	v := line[i+len(key)+2:]
	if strings.HasPrefix(v, `"`) {
		end := strings.Index(v[1:], `"`)
		if end < 0 {
			return ""
		}
		return v[1 : end+1]
	}
	if end := strings.IndexByte(v, ' '); end >= 0 {
		return v[:end]
	}
	return v
}
