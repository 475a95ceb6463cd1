// Package skip is how every test of edgeovn's that needs something of its environment (root,
// a tool, a built binary, the real components `make deps` installs) says it cannot run.
//
// Invariant: under CI=true, which is how CI runs .ci/run, such a test fails instead, naming what
// was missing: CI must never pass because a tier silently did not run. Elsewhere (a laptop, a
// container without privileges) it skips with the same message. Skips that do not depend on
// the environment (a child-process guard, -short) keep using t.Skip.
package skip
