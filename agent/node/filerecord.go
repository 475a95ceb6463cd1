package node

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// FilesRecordName is the file, in the CNI socket's directory (edgeovn's runtime directory,
// kept across restarts and emptied at boot), that carries the CNI files' stamps from one
// start to the next: the shipped sources and the installed files as the last full check
// left them. A start that finds every stamp unchanged knows installFiles would write nothing
// and skips reading and hashing some 25 MB of binaries (hundreds of milliseconds on a busy
// host, most of the way to READY=1); any difference, a missing or unreadable record, or
// another socket path means the full check.
const FilesRecordName = "cni-files.json"

// RightsRecordName is the controller role's record of its last API rights grant, beside
// FilesRecordName (written by the agent's eligibility check; removed here with it).
const RightsRecordName = "controller-rights.json"

// filesRecord is what FilesRecordName holds.
type filesRecord struct {
	// Socket is the CNI socket the config names: it is rendered into the conflist.
	Socket string                 `json:"socket"`
	Stamps map[string]recordStamp `json:"stamps"`
}

// recordStamp is a stamp as JSON.
type recordStamp struct {
	Exists bool        `json:"exists"`
	Ino    uint64      `json:"ino"`
	Size   int64       `json:"size"`
	Mode   fs.FileMode `json:"mode"`
	MTime  int64       `json:"mtime_ns"`
}

func (s stamp) record() recordStamp {
	r := recordStamp{Exists: s.exists, Ino: s.ino, Size: s.size, Mode: s.mode}
	if s.exists {
		r.MTime = s.mtime.UnixNano()
	}
	return r
}

func (r recordStamp) stamp() stamp {
	s := stamp{exists: r.Exists, ino: r.Ino, size: r.Size, mode: r.Mode}
	if r.Exists {
		s.mtime = time.Unix(0, r.MTime)
	}
	return s
}

// filesRecordPath is where the record lives for this role.
func (r *Role) filesRecordPath() string {
	return filepath.Join(filepath.Dir(r.req.CNISocket), FilesRecordName)
}

// recordPaths are the files whose stamps decide whether installFiles would write: the
// installed ones and the shipped sources they are compared with.
func (r *Role) recordPaths() ([]string, error) {
	src, err := binarySource(r.req.CNIBinarySource)
	if err != nil {
		return nil, err
	}
	paths := append(r.filePaths(), src)
	for _, p := range Plugins {
		paths = append(paths, filepath.Join(filepath.Dir(src), p))
	}
	return paths, nil
}

// filesUnchanged reports whether every file in paths still has the stamp the record holds,
// for the same socket. Any doubt (no record, a damaged one, a stat that fails) is "changed".
func (r *Role) filesUnchanged(paths []string) bool {
	b, err := os.ReadFile(r.filesRecordPath())
	if err != nil {
		return false
	}
	var rec filesRecord
	if err := json.Unmarshal(b, &rec); err != nil || rec.Socket != r.req.CNISocket || len(rec.Stamps) != len(paths) {
		return false
	}
	for _, p := range paths {
		want, ok := rec.Stamps[p]
		if !ok {
			return false
		}
		st, err := stampOf(p)
		if err != nil || st != want.stamp() {
			return false
		}
	}
	return true
}

// saveFilesRecord records the stamps of paths now, after a full check found or made them
// right. The record is a shortcut: failing to write it costs the next start a full check.
func (r *Role) saveFilesRecord(paths []string) error {
	rec := filesRecord{Socket: r.req.CNISocket, Stamps: map[string]recordStamp{}}
	for _, p := range paths {
		st, err := stampOf(p)
		if err != nil {
			return fmt.Errorf("stamp %s: %w", p, err)
		}
		rec.Stamps[p] = st.record() // a plugin neither shipped nor installed is a stamp too
	}
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return fmt.Errorf("render %s: %w", FilesRecordName, err)
	}
	_, err = writeFileAtomic(r.filesRecordPath(), append(b, '\n'), 0o600)
	return err
}
