package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// grepArgs is a parsed `grep [-v] [-q] [-i] [-c] [-E|-F] [-m N] PATTERN [FILE...]`. Basic and
// extended patterns are both read as Go regular expressions (\s works as in GNU grep).
type grepArgs struct {
	invert, quiet, count bool
	max                  int
	re                   *regexp.Regexp
	files                []string
}

func parseGrepArgs(args []string) (grepArgs, error) {
	a := grepArgs{max: -1}
	var ignoreCase, fixed bool
	i := 0
	for ; i < len(args) && len(args[i]) > 1 && args[i][0] == '-'; i++ {
		if args[i] == "--" {
			i++
			break
		}
		if args[i] == "-m" {
			if i+1 >= len(args) {
				return a, fmt.Errorf("option -m needs a value")
			}
			i++
			n, err := strconv.Atoi(args[i])
			if err != nil || n < 0 {
				return a, fmt.Errorf("bad -m count %q", args[i])
			}
			a.max = n
			continue
		}
		for _, c := range args[i][1:] {
			switch c {
			case 'v':
				a.invert = true
			case 'q':
				a.quiet = true
			case 'c':
				a.count = true
			case 'i':
				ignoreCase = true
			case 'E':
			case 'F':
				fixed = true
			default:
				return a, fmt.Errorf("unknown option -%c", c)
			}
		}
	}
	if i >= len(args) {
		return a, fmt.Errorf("no pattern")
	}
	pattern := args[i]
	if fixed {
		pattern = regexp.QuoteMeta(pattern)
	}
	if ignoreCase {
		pattern = "(?i)" + pattern
	}
	re, err := regexp.Compile(pattern)
	if err != nil {
		return a, fmt.Errorf("pattern %q: %w", args[i], err)
	}
	a.re, a.files = re, args[i+1:]
	return a, nil
}

// grep prints the lines that match (or with -v, do not); exit code 0 when a line was
// selected, 1 when none, 2 on an error.
func grep(_ context.Context, s stdio, args []string) int {
	a, err := parseGrepArgs(args)
	if err != nil {
		return usage(s, "grep", "%v", err)
	}
	inputs := []io.Reader{s.in}
	if len(a.files) > 0 {
		inputs = nil
		for _, f := range a.files {
			if !strings.HasPrefix(f, "/") {
				f = s.dir + "/" + f
			}
			fh, err := os.Open(f)
			if err != nil {
				fmt.Fprintf(s.err, "grep: %v\n", err)
				return 2
			}
			defer fh.Close()
			inputs = append(inputs, fh)
		}
	}
	n := 0
	for _, in := range inputs {
		sc := bufio.NewScanner(in)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() && (a.max < 0 || n < a.max) {
			if a.re.MatchString(sc.Text()) == a.invert {
				continue
			}
			n++
			if !a.quiet && !a.count {
				fmt.Fprintln(s.out, sc.Text())
			}
		}
	}
	if a.count {
		fmt.Fprintln(s.out, n)
	}
	if n == 0 {
		return 1
	}
	return 0
}
