package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// curl's exit codes that the tests' scripts see.
const (
	curlOK         = 0
	curlResolve    = 6
	curlConnect    = 7
	curlTimeout    = 28
	curlOtherError = 56
)

// curlArgs is a parsed curl command line: the options the e2e tests pass.
type curlArgs struct {
	url            string
	method         string
	include        bool   // -i: the status line and headers first
	output         string // -o
	writeOut       string // -w, with %{http_code}
	connectTimeout time.Duration
	maxTime        time.Duration
	iface          string // --interface: a local address
}

func parseCurlArgs(args []string) (curlArgs, error) {
	a := curlArgs{method: http.MethodGet}
	for i := 0; i < len(args); i++ {
		arg := args[i]
		value := func() (string, error) {
			if i+1 >= len(args) {
				return "", fmt.Errorf("option %s needs a value", arg)
			}
			i++
			return args[i], nil
		}
		var err error
		switch arg {
		case "-g", "-q", "-s", "--silent", "-S", "-v", "-L", "-k":
		case "-i", "--include":
			a.include = true
		case "-o", "--output":
			a.output, err = value()
		case "-w", "--write-out":
			a.writeOut, err = value()
		case "-X", "--request":
			a.method, err = value()
		case "--connect-timeout":
			a.connectTimeout, err = seconds(value())
		case "-m", "--max-time":
			a.maxTime, err = seconds(value())
		case "--interface":
			a.iface, err = value()
		default:
			if strings.HasPrefix(arg, "-") {
				return a, fmt.Errorf("unknown option %s", arg)
			}
			if a.url != "" {
				return a, fmt.Errorf("a second URL %s (the first is %s)", arg, a.url)
			}
			a.url = arg
		}
		if err != nil {
			return a, err
		}
	}
	if a.url == "" {
		return a, errors.New("no URL")
	}
	if !strings.Contains(a.url, "://") {
		a.url = "http://" + a.url
	}
	return a, nil
}

// seconds parses a (possibly fractional) number of seconds.
func seconds(v string, err error) (time.Duration, error) {
	if err != nil {
		return 0, err
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < 0 {
		return 0, fmt.Errorf("bad number of seconds %q", v)
	}
	return time.Duration(f * float64(time.Second)), nil
}

// curl fetches one URL over plain HTTP and writes the body (with -i, the head first) to
// standard output or -o's file, then -w's text.
func curl(ctx context.Context, s stdio, args []string) int {
	a, err := parseCurlArgs(args)
	if err != nil {
		return usage(s, "curl", "%v", err)
	}
	client, err := a.client()
	if err != nil {
		return usage(s, "curl", "%v", err)
	}
	req, err := http.NewRequestWithContext(ctx, a.method, a.url, nil)
	if err != nil {
		return usage(s, "curl", "%v", err)
	}
	resp, err := client.Do(req)
	if err != nil {
		fmt.Fprintf(s.err, "curl: %v\n", err)
		return curlErrorCode(err)
	}
	defer resp.Body.Close()
	out := s.out
	if a.output != "" {
		f, err := createIn(s.dir, a.output)
		if err != nil {
			fmt.Fprintf(s.err, "curl: %v\n", err)
			return 23
		}
		defer f.Close()
		out = f
	}
	if a.include {
		fmt.Fprintf(out, "%s %s\r\n", resp.Proto, resp.Status)
		_ = resp.Header.Write(out)
		fmt.Fprint(out, "\r\n")
	}
	if _, err := io.Copy(out, resp.Body); err != nil {
		fmt.Fprintf(s.err, "curl: %v\n", err)
		return curlErrorCode(err)
	}
	fmt.Fprint(s.out, strings.ReplaceAll(a.writeOut, "%{http_code}", strconv.Itoa(resp.StatusCode)))
	return curlOK
}

func (a curlArgs) client() (*http.Client, error) {
	d := &net.Dialer{Timeout: a.connectTimeout}
	if a.iface != "" {
		ip := net.ParseIP(a.iface)
		if ip == nil {
			return nil, fmt.Errorf("--interface %q: only a local address is supported", a.iface)
		}
		d.LocalAddr = &net.TCPAddr{IP: ip}
	}
	return &http.Client{Timeout: a.maxTime, Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true}}, nil
}

// curlErrorCode maps a request's error to curl's exit code.
func curlErrorCode(err error) int {
	var dnsErr *net.DNSError
	var netErr net.Error
	var opErr *net.OpError
	switch {
	case errors.As(err, &dnsErr):
		return curlResolve
	case errors.As(err, &netErr) && netErr.Timeout():
		return curlTimeout
	case errors.As(err, &opErr) && opErr.Op == "dial":
		return curlConnect
	default:
		return curlOtherError
	}
}

// createIn creates a file named relative to dir (or absolute); /dev/null discards.
func createIn(dir, name string) (*os.File, error) {
	if !filepath.IsAbs(name) {
		name = filepath.Join(dir, name)
	}
	return os.Create(name)
}
