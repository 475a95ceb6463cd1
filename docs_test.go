package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

// TestDocLinks checks every relative link of README.md and docs/*.md: the file it names exists
// and, when it names a heading (#anchor), the file has a heading with that GitHub slug.
func TestDocLinks(t *testing.T) {
	pages, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	pages = append([]string{"README.md"}, pages...)
	checked := 0
	for _, page := range pages {
		links, err := docLinks(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range links {
			checked++
			if err := checkDocLink(page, l.target); err != nil {
				t.Errorf("%s:%d: link [%s](%s): %v", page, l.line, l.text, l.target, err)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no relative links found in README.md and docs/*.md: the link parser is broken")
	}
}

type docLink struct {
	line         int
	text, target string
}

var (
	linkRE       = regexp.MustCompile(`\[([^\]]*)\]\(([^)\s]+)\)`)
	inlineCodeRE = regexp.MustCompile("`[^`]*`")
)

// docLinks returns the relative links of a markdown file, outside code blocks and code spans.
func docLinks(path string) ([]docLink, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	var links []docLink
	fenced := false
	for i, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		for _, m := range linkRE.FindAllStringSubmatch(inlineCodeRE.ReplaceAllString(line, ""), -1) {
			target := m[2]
			if strings.HasPrefix(target, "http://") || strings.HasPrefix(target, "https://") ||
				strings.HasPrefix(target, "mailto:") {
				continue
			}
			links = append(links, docLink{line: i + 1, text: m[1], target: target})
		}
	}
	return links, nil
}

// checkDocLink resolves target relative to the page that holds it.
func checkDocLink(page, target string) error {
	file, anchor, _ := strings.Cut(target, "#")
	path := page
	if file != "" {
		path = filepath.Join(filepath.Dir(page), filepath.FromSlash(file))
	}
	info, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("target %s does not exist", path)
	}
	if anchor == "" {
		return nil
	}
	if info.IsDir() || !strings.HasSuffix(path, ".md") {
		return fmt.Errorf("anchor #%s on %s, which is not a markdown file", anchor, path)
	}
	slugs, err := headingSlugs(path)
	if err != nil {
		return err
	}
	if !slugs[anchor] {
		return fmt.Errorf("%s has no heading with anchor #%s", path, anchor)
	}
	return nil
}

// headingSlugs returns the anchors GitHub gives the headings of a markdown file.
func headingSlugs(path string) (map[string]bool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	slugs := map[string]bool{}
	seen := map[string]int{}
	fenced := false
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced || !strings.HasPrefix(line, "#") {
			continue
		}
		text := strings.TrimLeft(line, "#")
		if !strings.HasPrefix(text, " ") {
			continue
		}
		s := githubSlug(text)
		if n := seen[s]; n > 0 {
			slugs[fmt.Sprintf("%s-%d", s, n)] = true
		} else {
			slugs[s] = true
		}
		seen[s]++
	}
	return slugs, nil
}

// githubSlug is GitHub's heading anchor: lower case, punctuation dropped (but - and _), each
// space a hyphen.
func githubSlug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case unicode.IsLetter(r), unicode.IsDigit(r), r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteRune('-')
		}
	}
	return b.String()
}

func TestGithubSlug(t *testing.T) {
	cases := map[string]string{
		"Set up (a fresh Debian 12 host)": "set-up-a-fresh-debian-12-host",
		"CNI latency":                     "cni-latency",
		"`make conformance`":              "make-conformance",
		"Same host against cross host":    "same-host-against-cross-host",
		"IPAM, durable allocations":       "ipam-durable-allocations",
		"Restart: start to READY=1":       "restart-start-to-ready1",
	}
	for in, want := range cases {
		if got := githubSlug(in); got != want {
			t.Errorf("githubSlug(%q) = %q, want %q", in, got, want)
		}
	}
}
