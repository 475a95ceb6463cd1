// Command toolbox is the shell and the handful of tools the upstream Kubernetes e2e tests run
// inside their test images (agnhost's, jessie-dnsutils', busybox's): `/bin/sh -c` scripts with
// curl, nc, wget, dig, getent, nslookup, grep, cat, hostname, seq, sleep and timeout. It is one static binary
// that acts as the program it is linked as (the images link each name to it), or as the one
// its first argument names (`toolbox curl ...`). The shell is mvdan.cc/sh's POSIX interpreter;
// it runs these tools in its own process instead of looking them up in PATH.
//
// Each tool implements the options those tests pass, with the exit codes the scripts branch
// on (curl 7 for a refused connection and 28 for a timeout, dig 9 for no reply, getent 2 for
// an unknown name); an option it does not know is refused with exit code 2 and a message
// naming it, never ignored.
package main
