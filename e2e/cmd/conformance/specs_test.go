package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestSpecsFocus: each name is matched literally (its parentheses, brackets and quotes are
// no regular expression), comments and blank lines are ignored, and a name outside the
// selection or an empty list is an error naming what was wrong.
func TestSpecsFocus(t *testing.T) {
	a := "Netpol NetworkPolicy between server and client should support denying of egress traffic on the client side (even if the server explicitly allows this traffic) [Feature:NetworkPolicy]"
	b := "Netpol NetworkPolicy between server and client should not mistakenly treat 'protocol: SCTP' as 'protocol: TCP', even if the plugin doesn't support SCTP [Feature:NetworkPolicy]"
	focus, err := focusOf(strings.NewReader("# batch\n"+a+"\n\n  "+b+"\n"), singleStack)
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(focus)
	for _, name := range []string{a, b} {
		if !re.MatchString("[sig-network] " + name) {
			t.Errorf("focus %q does not match %q", focus, name)
		}
	}
	other := "[sig-network] Netpol NetworkPolicy between server and client should support a 'default-deny-all' policy [Feature:NetworkPolicy]"
	if re.MatchString(other) || re.MatchString("[sig-network] Netpol NetworkPolicy between server and client should support denying of egress traffic on the client side even if the server explicitly allows this traffic [Feature:NetworkPolicy]") {
		t.Errorf("focus %q matches a spec the list does not name", focus)
	}
	if _, err := focusOf(strings.NewReader(a+"\n[sig-storage] Volumes should store data\n"), singleStack); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("a spec outside the selection: %v, want an error naming line 2", err)
	}
	if _, err := focusOf(strings.NewReader("# nothing\n\n"), singleStack); err == nil {
		t.Error("an empty list gave a focus that runs everything")
	}
}

// TestBatchFiles: the batches the README's commands name are valid -specs files, and no spec
// is in two of them.
func TestBatchFiles(t *testing.T) {
	files, err := filepath.Glob("batches/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no batch files: %v", err)
	}
	seen := map[string]string{}
	for _, f := range files {
		if _, err := specsFocus(f, singleStack); err != nil {
			t.Error(err)
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			if l = strings.TrimSpace(l); l == "" || strings.HasPrefix(l, "#") {
				continue
			}
			if prev, dup := seen[l]; dup {
				t.Errorf("%q in %s and %s", l, prev, f)
			}
			seen[l] = f
		}
	}
}
