package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path"
	"sort"
	"strings"
)

// stdio is a tool's standard streams and working directory.
type stdio struct {
	in       io.Reader
	out, err io.Writer
	dir      string
}

// tool runs with its arguments (without its name) and returns its exit code.
type tool func(ctx context.Context, s stdio, args []string) int

// tools are the programs the toolbox acts as, by name.
var tools map[string]tool

func init() {
	tools = map[string]tool{
		"sh": runShell, "curl": curl, "nc": netcat, "wget": wget, "dig": dig, "getent": getent,
		"nslookup": nslookup, "grep": grep, "cat": cat, "hostname": hostname, "seq": seq, "sleep": sleep, "timeout": timeout,
	}
}

// Names lists the tools, sorted: the names an image links to the toolbox.
func names() []string {
	var out []string
	for n := range tools {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func main() {
	name, args := path.Base(os.Args[0]), os.Args[1:]
	if name == "toolbox" {
		if len(args) == 0 {
			fmt.Fprintf(os.Stderr, "usage: toolbox TOOL [ARG...]; tools: %s\n", strings.Join(names(), " "))
			os.Exit(2)
		}
		name, args = args[0], args[1:]
	}
	wd, _ := os.Getwd()
	os.Exit(run(context.Background(), stdio{in: os.Stdin, out: os.Stdout, err: os.Stderr, dir: wd}, name, args))
}

// run runs the tool called name; an unknown name is exit code 127, as a shell has it.
func run(ctx context.Context, s stdio, name string, args []string) int {
	t, ok := tools[path.Base(name)]
	if !ok {
		fmt.Fprintf(s.err, "toolbox: %s: not found\n", name)
		return 127
	}
	return t(ctx, s, args)
}

// usage reports a bad invocation of a tool: exit code 2.
func usage(s stdio, name string, format string, a ...any) int {
	fmt.Fprintf(s.err, "%s: %s\n", name, fmt.Sprintf(format, a...))
	return 2
}
