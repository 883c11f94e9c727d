//go:build unix

package fileowner

import (
	"io/fs"
	"syscall"
)

// UID returns the owner of the file fi describes.
func UID(fi fs.FileInfo) (int, bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}
