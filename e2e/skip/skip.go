// Package skip is how every test of edgeovn's that needs something of its environment (root,
// a tool, a built binary, the real components `make deps` installs) says it cannot run.
//
// Invariant: under CI=true, which is how CI runs .ci/run, such a test fails instead, naming what
// was missing: CI must never pass because a tier silently did not run. Elsewhere (a laptop, a
// container without privileges) it skips with the same message. Skips that do not depend on
// the environment (a child-process guard, -short) keep using t.Skip.
package skip

import (
	"fmt"
	"os"
	"testing"
)

// InCI reports whether the tests run under CI (CI=true).
func InCI() bool { return os.Getenv("CI") == "true" }

// Now skips t, or fails it under CI, saying what the environment lacks.
func Now(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if InCI() {
		t.Fatalf("CI=true and this test cannot run (CI must not pass by skipping): %s", msg)
	}
	t.Skip(msg)
}
