// Command pause is the sandbox process of the e2e suite's real node, built into the image
// containerd pins as its sandbox image: it holds the pod's namespaces, reaps any child it
// inherits (as PID 1 of the pod) and exits on SIGTERM or SIGINT.
package main
