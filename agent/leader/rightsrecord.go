package leader

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// rightsRecord is what Config.RightsRecord holds (node.RightsRecordName in edgeovn's runtime
// directory, the CNI socket's, on tmpfs): the last time every controller right was granted, kept for the next process: a
// restart within rightsRecheck of it trusts the grant as the process before would have, instead
// of asking the API server its dozens of reviews again before campaigning (about 30 ms of a
// restart's way to its first allocation). The grant is bound to the credentials and the list
// of rights it was for; anything else, a record from the future or one that does not parse,
// is ignored and the reviews are asked. Uninstalling removes it (node.Cleanup).
type rightsRecord struct {
	Identity  string    `json:"identity"` // sha256 of the kubeconfig's bytes and the rights asked
	GrantedAt time.Time `json:"granted_at"`
}

// rightsIdentity names what a grant was for: the credentials file's content and the rights.
// "" when there is no file to bind it to (in-cluster credentials): nothing is recorded then.
func rightsIdentity(kubeconfig string, rights []right) string {
	if kubeconfig == "" {
		return ""
	}
	b, err := os.ReadFile(kubeconfig)
	if err != nil {
		return ""
	}
	h := sha256.New()
	h.Write(b)
	fmt.Fprintf(h, "\n%+v", rights)
	return hex.EncodeToString(h.Sum(nil))
}

// loadGrant returns when the rights named identity were last granted, per the record at path;
// zero when the record is absent, unreadable, for something else, or not in the past.
func loadGrant(path, identity string, now time.Time) time.Time {
	if path == "" || identity == "" {
		return time.Time{}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return time.Time{}
	}
	var rec rightsRecord
	if json.Unmarshal(b, &rec) != nil || rec.Identity != identity || rec.GrantedAt.After(now) {
		return time.Time{}
	}
	return rec.GrantedAt
}

// saveGrant records a grant (write to a temporary file, then rename: a reader sees the old
// record or the new one). Failing to record only costs the next start its reviews.
func saveGrant(path, identity string, at time.Time) error {
	if path == "" || identity == "" {
		return nil
	}
	b, err := json.Marshal(rightsRecord{Identity: identity, GrantedAt: at})
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".controller-rights-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
