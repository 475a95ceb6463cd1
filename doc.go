// Command edgeovn is the per-host daemon of edgeovn (subcommand run) and its diagnostics.
// main only wires: configuration, logging, signals and systemd notifications.
package main
