package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// wgetArgs is a parsed `wget [-q] [-O FILE|-] [-T SECONDS] URL` (also -qO-).
type wgetArgs struct {
	output  string
	timeout time.Duration
	url     string
}

func parseWgetArgs(args []string) (wgetArgs, error) {
	a := wgetArgs{timeout: 10 * time.Second}
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if !strings.HasPrefix(arg, "-") || arg == "-" {
			if a.url != "" {
				return a, fmt.Errorf("a second URL %s", arg)
			}
			a.url = arg
			continue
		}
		// Bundled short options: -qO- or -qO FILE.
		for j := 1; j < len(arg); j++ {
			switch arg[j] {
			case 'q':
			case 'O', 'T':
				v := arg[j+1:]
				if v == "" {
					if i+1 >= len(args) {
						return a, fmt.Errorf("option -%c needs a value", arg[j])
					}
					i++
					v = args[i]
				}
				if arg[j] == 'O' {
					a.output = v
				} else {
					t, err := seconds(v, nil)
					if err != nil {
						return a, err
					}
					a.timeout = t
				}
				j = len(arg)
			default:
				return a, fmt.Errorf("unknown option -%c", arg[j])
			}
		}
	}
	if a.url == "" {
		return a, errors.New("no URL")
	}
	if a.output == "" {
		return a, errors.New("only -O FILE (or -O - for standard output) is supported")
	}
	if !strings.Contains(a.url, "://") {
		a.url = "http://" + a.url
	}
	return a, nil
}

// wget fetches a URL to standard output (-O -) or a file; a failure or a status other than
// 2xx is exit code 1.
func wget(ctx context.Context, s stdio, args []string) int {
	a, err := parseWgetArgs(args)
	if err != nil {
		return usage(s, "wget", "%v", err)
	}
	client := &http.Client{Timeout: a.timeout, Transport: &http.Transport{DisableKeepAlives: true}}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, a.url, nil)
	if err != nil {
		return usage(s, "wget", "%v", err)
	}
	resp, err := client.Do(req)
	if err != nil {
		fmt.Fprintf(s.err, "wget: %v\n", err)
		return 1
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		fmt.Fprintf(s.err, "wget: server returned error: %s\n", resp.Status)
		return 1
	}
	out := s.out
	if a.output != "-" {
		f, err := createIn(s.dir, a.output)
		if err != nil {
			fmt.Fprintf(s.err, "wget: %v\n", err)
			return 1
		}
		defer f.Close()
		out = f
	}
	if _, err := io.Copy(out, resp.Body); err != nil {
		fmt.Fprintf(s.err, "wget: %v\n", err)
		return 1
	}
	return 0
}
