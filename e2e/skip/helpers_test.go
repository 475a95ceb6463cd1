package skip

import (
	"os"
	"strings"
	"testing"
)

func testBinary(t *testing.T) string {
	p, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// cleanEnv is the environment without CI and SKIP_CHILD, which the cases set themselves.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "CI=") && !strings.HasPrefix(kv, "SKIP_CHILD=") {
			env = append(env, kv)
		}
	}
	return env
}
