package skip

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestNowFailsUnderCI runs a test that calls Now in a child process, with CI=true and without:
// it fails naming what was missing under CI, and skips elsewhere.
func TestNowFailsUnderCI(t *testing.T) {
	if os.Getenv("SKIP_CHILD") == "1" {
		Now(t, "tool %s missing", "frobnicate")
		return
	}
	for _, c := range []struct {
		ci   string
		want string
		fail bool
	}{{"true", "CI must not pass by skipping): tool frobnicate missing", true}, {"", "--- SKIP", false}} {
		cmd := exec.Command(testBinary(t), "-test.run=^TestNowFailsUnderCI$", "-test.v")
		cmd.Env = append(cleanEnv(), "SKIP_CHILD=1", "CI="+c.ci)
		out, err := cmd.CombinedOutput()
		if (err != nil) != c.fail || !strings.Contains(string(out), c.want) {
			t.Errorf("CI=%q: err %v, output:\n%s\nwant failure %v and %q", c.ci, err, out, c.fail, c.want)
		}
	}
}
