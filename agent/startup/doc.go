// Package startup records how long the daemon's start takes, phase by phase, so that the
// time from exec to READY=1 can be read off one log line ("startup phases") instead of being
// guessed: main marks its own steps, the node role marks its own, and the first healthy
// verdict closes the record.
//
// Invariants: every phase is measured from one origin (the moment main began) with the
// monotonic clock, so the offsets are cumulative and comparable across phases; a phase
// marked twice keeps its first mark (a later repair is not the start); marks after Done are
// ignored. A nil *Phases accepts every call and records nothing, so code paths that are not
// a daemon start (tests, the diagnostics commands) need no checks.
//
// Concurrency: safe for concurrent use; phases are marked from the node role's goroutines.
package startup
