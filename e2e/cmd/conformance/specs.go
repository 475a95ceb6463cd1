package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
)

// specsFocus reads a -specs file and returns the focus that runs exactly its specs.
func specsFocus(path string, st stack) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("-specs: %w", err)
	}
	defer f.Close()
	focus, err := focusOf(f, st)
	if err != nil {
		return "", fmt.Errorf("-specs %s: %w", path, err)
	}
	return focus, nil
}

// focusOf turns spec names, one per line as the table prints them (blank lines and lines
// starting with # ignored), into a focus expression matching each name literally. A name
// outside make conformance's selection is an error: it is a typo or a spec this command
// does not judge, and would otherwise quietly run nothing.
func focusOf(r io.Reader, st stack) (string, error) {
	var parts []string
	s := bufio.NewScanner(r)
	for n := 1; s.Scan(); n++ {
		name := strings.TrimSpace(s.Text())
		if name == "" || strings.HasPrefix(name, "#") {
			continue
		}
		if !selected(st, "[sig-network] "+strings.TrimPrefix(name, "[sig-network] ")) {
			return "", fmt.Errorf("line %d: %q is not one of the specs make conformance selects on a %s-stack cluster", n, name, st.name)
		}
		parts = append(parts, regexp.QuoteMeta(name))
	}
	if err := s.Err(); err != nil {
		return "", err
	}
	if len(parts) == 0 {
		return "", fmt.Errorf("no spec named")
	}
	return strings.Join(parts, "|"), nil
}
