// Package fileowner tells who owns a file, for the checks that refuse a
// secret (a key file, a passphrase file, the compilation cache's key) that
// another user could have planted or can read.
package fileowner

import (
	"fmt"
	"io/fs"
	"os"
)

// CurrentUID returns the user the process runs as (os.Getuid); tests that
// cannot chown a file to another user, because they are not root, replace
// it to make their own files look foreign.
var CurrentUID = os.Getuid

// Check fails when fi reports an owner other than the current user. Where
// the platform reports no owner (Windows), it accepts.
func Check(fi fs.FileInfo) error {
	uid, ok := UID(fi)
	if !ok {
		return nil
	}
	if me := CurrentUID(); uid != me {
		return &Error{Owner: uid, User: me}
	}
	return nil
}

// Error is a file owned by someone else.
type Error struct {
	Owner int // the file's owner
	User  int // the current user
}

// Error says who owns the file.
func (e *Error) Error() string {
	return fmt.Sprintf("owned by uid %d, not by the user running apconnect (uid %d)", e.Owner, e.User)
}
