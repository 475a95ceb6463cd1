package daemon

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// Phases is one start's "startup phases" record, as edgeovn logs it just before READY=1:
// where main began (wall clock), and when each phase ended, measured from there.
type Phases struct {
	Origin time.Time
	Marks  []Phase
}

// Phase is one phase's end, since main began.
type Phase struct {
	Name string
	At   time.Duration
}

// At returns when phase name ended, and whether it was recorded.
func (p Phases) At(name string) (time.Duration, bool) {
	for _, m := range p.Marks {
		if m.Name == name {
			return m.At, true
		}
	}
	return 0, false
}

// ReadPhases returns the last "startup phases" record in an edgeovn log.
func ReadPhases(logPath string) (Phases, error) {
	f, err := os.Open(logPath)
	if err != nil {
		return Phases{}, fmt.Errorf("read startup phases: %w", err)
	}
	defer f.Close()
	var last string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		if strings.Contains(sc.Text(), `msg="startup phases"`) {
			last = sc.Text()
		}
	}
	if err := sc.Err(); err != nil {
		return Phases{}, fmt.Errorf("read startup phases from %s: %w", logPath, err)
	}
	if last == "" {
		return Phases{}, fmt.Errorf("no startup phases record in %s", logPath)
	}
	return parsePhases(last)
}

// parsePhases reads origin_unix_us=N and NAME_ms=F fields of one slog text line.
func parsePhases(line string) (Phases, error) {
	var p Phases
	for _, field := range strings.Fields(line) {
		key, val, ok := strings.Cut(field, "=")
		if !ok {
			continue
		}
		switch {
		case key == "origin_unix_us":
			us, err := strconv.ParseInt(val, 10, 64)
			if err != nil {
				return Phases{}, fmt.Errorf("startup phases: origin_unix_us %q: %w", val, err)
			}
			p.Origin = time.UnixMicro(us)
		case strings.HasSuffix(key, "_ms"):
			ms, err := strconv.ParseFloat(val, 64)
			if err != nil {
				return Phases{}, fmt.Errorf("startup phases: %s %q: %w", key, val, err)
			}
			p.Marks = append(p.Marks, Phase{Name: strings.TrimSuffix(key, "_ms"), At: time.Duration(ms * float64(time.Millisecond))})
		}
	}
	if p.Origin.IsZero() {
		return Phases{}, fmt.Errorf("startup phases record without origin_unix_us: %q", line)
	}
	return p, nil
}
