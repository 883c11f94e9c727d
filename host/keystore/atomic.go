package keystore

import (
	"errors"
	"io/fs"

	"apconnect/host/internal/atomicfile"
)

// writeNewFile creates path with data, mode 0600, atomically and without ever
// replacing an existing file (see atomicfile.WriteNew). On any failure path
// is left as it was.
func writeNewFile(path string, data []byte) error {
	if err := atomicfile.WriteNew(path, data); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return existsErr(path)
		}
		return newErr(CodeIO, path, "cannot write the key file", err)
	}
	return nil
}
