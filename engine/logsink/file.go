package logsink

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// OpenFile opens a --log-file for appending: created 0600 (logs name
// graphs, instances and failures, which are not every local user's to
// read), never through a symlink (O_NOFOLLOW: a link planted at the path
// would point the writes at a file of the planter's choosing), and only a
// regular file. An existing file readable by others is narrowed to 0600.
func OpenFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		if fi, lerr := os.Lstat(path); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
			return nil, fmt.Errorf("%s is a symbolic link: kroscope does not write logs through one (remove it, or name the file it points to)", path)
		}
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("%s is not a regular file", path)
	}
	if err == nil && fi.Mode().Perm()&0o077 != 0 {
		err = f.Chmod(0o600)
	}
	if err != nil {
		return nil, errors.Join(err, f.Close())
	}
	return f, nil
}
