package podsim

import (
	"os"
	"path/filepath"
	"testing"
)

// TestRemoveLeftSweepsOnlyItsOwn: a rig's teardown removes the namespaces its kubelet made and
// nobody removed, and leaves another rig's (a test running beside it) alone.
func TestRemoveLeftSweepsOnlyItsOwn(t *testing.T) {
	dir := t.TempDir()
	mine, removed, theirs := filepath.Join(dir, "cnitest-mine"), filepath.Join(dir, "cnitest-removed"), filepath.Join(dir, "cnitest-theirs")
	for _, p := range []string{mine, removed, theirs} {
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	remember(mine, "rig-a/net.d")
	remember(removed, "rig-a/net.d")
	remember(theirs, "rig-b/net.d")
	t.Cleanup(func() { forget(theirs) })
	if err := RemoveNetns(removed); err != nil { // removed by its test: forgotten
		t.Fatal(err)
	}
	if err := os.WriteFile(removed, nil, 0o600); err != nil { // a new file at that path is not ours
		t.Fatal(err)
	}

	if err := (&Kubelet{ConfDir: "rig-a/net.d"}).RemoveLeft(); err != nil {
		t.Fatalf("RemoveLeft: %v", err)
	}
	if _, err := os.Stat(mine); !os.IsNotExist(err) {
		t.Errorf("rig a's left namespace %s still there (stat err %v)", mine, err)
	}
	for _, p := range []string{removed, theirs} {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s was removed by rig a's sweep: %v", p, err)
		}
	}
	made.Lock()
	defer made.Unlock()
	if _, ok := made.owner[mine]; ok {
		t.Errorf("%s still remembered after its sweep", mine)
	}
}
