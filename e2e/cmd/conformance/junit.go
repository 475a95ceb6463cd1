package main

import (
	"encoding/xml"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// junitSuites is the part of the JUnit report (ginkgo's, written by e2e.test into
// --report-dir) the table needs.
type junitSuites struct {
	Suites []struct {
		Cases []junitCase `xml:"testcase"`
	} `xml:"testsuite"`
}

type junitCase struct {
	Name    string  `xml:"name,attr"`
	Status  string  `xml:"status,attr"`
	Time    float64 `xml:"time,attr"`
	Skipped *struct {
		Message string `xml:"message,attr"`
	} `xml:"skipped"`
	Failure *struct {
		Message string `xml:"message,attr"`
		Text    string `xml:",chardata"`
	} `xml:"failure"`
	Error *struct {
		Message string `xml:"message,attr"`
	} `xml:"error"`
}

// notRun is the outcome of a selected spec the run did not reach: -focus left it out, or an
// interrupt stopped the run first. It is no verdict, unlike a skip with a reason.
const notRun = "not run"

// result is one selected spec's outcome in one run.
type result struct {
	Name    string
	Outcome string // pass, fail, skip, not run
	Reason  string // why it was skipped, or the start of the failure
	Seconds float64
}

// readReport reads the JUnit files in dir and returns the outcomes of the selected specs,
// sorted by name. A spec the run's --ginkgo.skip left out is a skip with skipRules' reason;
// one the framework skipped keeps the framework's message.
func readReport(dir string, st stack) ([]result, error) {
	files, err := filepath.Glob(filepath.Join(dir, "junit*.xml"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no JUnit report in %s (see %s)", dir, filepath.Join(dir, "e2e.log"))
	}
	var out []result
	for _, f := range files {
		r, err := os.Open(f)
		if err != nil {
			return nil, err
		}
		rs, err := parseJUnit(r, st)
		r.Close()
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", f, err)
		}
		out = append(out, rs...)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

func parseJUnit(r io.Reader, st stack) ([]result, error) {
	var doc junitSuites
	if err := xml.NewDecoder(r).Decode(&doc); err != nil {
		return nil, err
	}
	var out []result
	for _, s := range doc.Suites {
		for _, c := range s.Cases {
			name := strings.TrimPrefix(c.Name, "[It] ")
			if !selected(st, name) {
				continue
			}
			out = append(out, outcome(name, c))
		}
	}
	return out, nil
}

func outcome(name string, c junitCase) result {
	res := result{Name: name, Seconds: c.Time}
	switch {
	case c.Status == "passed":
		res.Outcome = "pass"
	case c.Status == "skipped" || c.Skipped != nil:
		res.Outcome = "skip"
		if res.Reason = skipReason(name); res.Reason == "" && c.Skipped != nil {
			res.Reason = strings.TrimPrefix(strings.TrimPrefix(c.Skipped.Message, "skipped"), " - ")
		}
		if res.Reason == "" {
			res.Outcome, res.Reason = notRun, "outside -focus, or the run was interrupted"
		}
	default:
		res.Outcome = "fail"
		switch {
		case c.Failure != nil:
			// ginkgo leaves the message empty and writes "[FAILED] <why>" as the text.
			if res.Reason = firstLine(c.Failure.Message); res.Reason == "" {
				res.Reason = strings.TrimPrefix(firstLine(c.Failure.Text), "[FAILED] ")
			}
		case c.Error != nil:
			res.Reason = firstLine(c.Error.Message)
		default:
			res.Reason = c.Status
		}
	}
	return res
}

// firstLine is the first non-empty line of a message, at most 160 characters.
func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			if len(l) > 160 {
				l = l[:160] + "..."
			}
			return l
		}
	}
	return ""
}
