package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"
)

// readFile reads a file named relative to dir, or absolute.
func readFile(dir, name string) ([]byte, error) {
	if !filepath.IsAbs(name) {
		name = filepath.Join(dir, name)
	}
	return os.ReadFile(name)
}

// cat copies the files (or standard input, for none or "-") to standard output.
func cat(_ context.Context, s stdio, args []string) int {
	if len(args) == 0 {
		args = []string{"-"}
	}
	code := 0
	for _, name := range args {
		if name == "-" {
			_, _ = io.Copy(s.out, s.in)
			continue
		}
		b, err := readFile(s.dir, name)
		if err != nil {
			fmt.Fprintf(s.err, "cat: %v\n", err)
			code = 1
			continue
		}
		_, _ = s.out.Write(b)
	}
	return code
}

// hostname prints the kernel's host name (the pod's).
func hostname(_ context.Context, s stdio, args []string) int {
	if len(args) != 0 {
		return usage(s, "hostname", "no arguments are supported, got %q", args)
	}
	h, err := os.Hostname()
	if err != nil {
		fmt.Fprintf(s.err, "hostname: %v\n", err)
		return 1
	}
	fmt.Fprintln(s.out, h)
	return 0
}

// seq prints integers: seq LAST, seq FIRST LAST, seq FIRST STEP LAST.
func seq(_ context.Context, s stdio, args []string) int {
	nums := make([]int, len(args))
	for i, a := range args {
		n, err := strconv.Atoi(a)
		if err != nil {
			return usage(s, "seq", "bad number %q", a)
		}
		nums[i] = n
	}
	first, step, last := 1, 1, 0
	switch len(nums) {
	case 1:
		last = nums[0]
	case 2:
		first, last = nums[0], nums[1]
	case 3:
		first, step, last = nums[0], nums[1], nums[2]
	default:
		return usage(s, "seq", "want 1 to 3 numbers, got %d", len(nums))
	}
	if step == 0 {
		return usage(s, "seq", "step 0")
	}
	for i := first; (step > 0 && i <= last) || (step < 0 && i >= last); i += step {
		fmt.Fprintln(s.out, i)
	}
	return 0
}

// sleep waits SECONDS (fractions allowed; "infinity" for ever) or until cancelled.
func sleep(ctx context.Context, s stdio, args []string) int {
	if len(args) != 1 {
		return usage(s, "sleep", "want one duration, got %q", args)
	}
	if args[0] == "infinity" {
		<-ctx.Done()
		return 1
	}
	d, err := seconds(args[0], nil)
	if err != nil {
		return usage(s, "sleep", "%v", err)
	}
	select {
	case <-time.After(d):
		return 0
	case <-ctx.Done():
		return 1
	}
}

// timeout runs a command (a toolbox tool in this process, or a program) and stops it after
// SECONDS: exit code 124, as coreutils' timeout.
func timeout(ctx context.Context, s stdio, args []string) int {
	if len(args) < 2 {
		return usage(s, "timeout", "want SECONDS COMMAND [ARG...], got %q", args)
	}
	d, err := seconds(args[0], nil)
	if err != nil {
		return usage(s, "timeout", "%v", err)
	}
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var code int
	if _, ok := tools[filepath.Base(args[1])]; ok {
		code = run(ctx, s, args[1], args[2:])
	} else {
		code = execute(ctx, s, args[1:])
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return 124
	}
	return code
}

// execute runs a program with the tool's streams and returns its exit code.
func execute(ctx context.Context, s stdio, args []string) int {
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr, cmd.Dir = s.in, s.out, s.err, s.dir
	err := cmd.Run()
	var exitErr *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &exitErr):
		return exitErr.ExitCode()
	default:
		fmt.Fprintf(s.err, "timeout: %v\n", err)
		return 127
	}
}
