package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"mvdan.cc/sh/v3/interp"
	"mvdan.cc/sh/v3/syntax"
)

// shellArgs is a parsed `sh [-ex] [-c SCRIPT [NAME [ARG...]] | FILE [ARG...]]`.
type shellArgs struct {
	opts   []string // set options: -e, -x, -u, -f
	script string
	hasC   bool
	name   string // $0
	params []string
	file   string
}

func parseShellArgs(args []string) (shellArgs, error) {
	var a shellArgs
	for len(args) > 0 && len(args[0]) > 1 && args[0][0] == '-' && args[0] != "--" {
		for _, c := range args[0][1:] {
			switch c {
			case 'c':
				a.hasC = true
			case 'e', 'x', 'u', 'f':
				a.opts = append(a.opts, "-"+string(c))
			default:
				return a, fmt.Errorf("unknown option -%c", c)
			}
		}
		args = args[1:]
	}
	if len(args) > 0 && args[0] == "--" {
		args = args[1:]
	}
	a.name = "sh"
	switch {
	case a.hasC && len(args) == 0:
		return a, errors.New("-c needs a script")
	case a.hasC:
		a.script, args = args[0], args[1:]
		if len(args) > 0 {
			a.name, args = args[0], args[1:]
		}
	case len(args) > 0:
		a.file, a.name, args = args[0], args[0], args[1:]
	}
	a.params = args
	return a, nil
}

// runShell interprets a script from -c, a file or standard input.
func runShell(ctx context.Context, s stdio, args []string) int {
	a, err := parseShellArgs(args)
	if err != nil {
		return usage(s, "sh", "%v", err)
	}
	var src io.Reader = strings.NewReader(a.script)
	switch {
	case a.file != "":
		f, err := os.Open(a.file)
		if err != nil {
			fmt.Fprintf(s.err, "sh: %v\n", err)
			return 127
		}
		defer f.Close()
		src = f
	case !a.hasC:
		src = s.in
	}
	prog, err := syntax.NewParser().Parse(src, a.name)
	if err != nil {
		fmt.Fprintf(s.err, "sh: %v\n", err)
		return 2
	}
	r, err := interp.New(interp.StdIO(s.in, s.out, s.err), interp.Dir(s.dir),
		interp.Params(append(a.opts, append([]string{"--"}, a.params...)...)...),
		interp.ExecHandlers(inProcess))
	if err != nil {
		return usage(s, "sh", "%v", err)
	}
	return exitCode(s, r.Run(ctx, prog))
}

// inProcess runs the toolbox's own tools inside the shell's process; anything else is looked
// up in PATH and executed.
func inProcess(next interp.ExecHandlerFunc) interp.ExecHandlerFunc {
	return func(ctx context.Context, args []string) error {
		t, ok := tools[args[0]]
		if !ok {
			return next(ctx, args)
		}
		hc := interp.HandlerCtx(ctx)
		in := hc.Stdin
		if in == nil {
			in = strings.NewReader("")
		}
		if code := t(ctx, stdio{in: in, out: hc.Stdout, err: hc.Stderr, dir: hc.Dir}, args[1:]); code != 0 {
			return interp.ExitStatus(uint8(code))
		}
		return nil
	}
}

// exitCode turns the interpreter's result into the shell's exit code.
func exitCode(s stdio, err error) int {
	if err == nil {
		return 0
	}
	if st, ok := errors.AsType[interp.ExitStatus](err); ok {
		return int(st)
	}
	fmt.Fprintf(s.err, "sh: %v\n", err)
	return 1
}
