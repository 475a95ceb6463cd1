package sqlitestore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// fileMode is the mode of the database and its -wal and -shm files.
const fileMode = 0o600

// restrictFiles creates the database file 0600 before SQLite does (SQLite would make it 0644,
// and gives the -wal and -shm files the mode of the database file), and tightens the files
// of a database made by an older edgeovn.
func restrictFiles(path string) error {
	f, err := os.OpenFile(path, os.O_RDONLY|os.O_CREATE, fileMode)
	if err != nil {
		return fmt.Errorf("create ipam database %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("create ipam database %s: %w", path, err)
	}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		err := os.Chmod(path+suffix, fileMode)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("restrict ipam database file %s to root: %w", path+suffix, err)
		}
	}
	return nil
}
