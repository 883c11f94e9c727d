package plugin

import "os"

// Test hooks into the sealed cache, for the tests of the plugin_test
// package that forge entries the way only a holder of the key could.

// DescribeBinding and GuardBinding are the bindings of this host's
// cached descriptions and rewritten modules.
var (
	DescribeBinding = describeBinding
	GuardBinding    = guardBinding
)

// SealBlob seals data as a blob of kind ("description" or "guarded") for
// digest under binding, in r's cache, at the path where a load under
// pathBinding looks for it.
func SealBlob(r *Runtime, kind, digest, binding, pathBinding string, data []byte) error {
	if err := r.sealed.putBlob(kind, digest, binding, data); err != nil {
		return err
	}
	from, to := r.sealed.blobPath(kind, digest, binding), r.sealed.blobPath(kind, digest, pathBinding)
	if from == to {
		return nil
	}
	return renameFile(from, to)
}

// BlobPath is where r's cache keeps the blob of kind for digest under
// binding.
func BlobPath(r *Runtime, kind, digest, binding string) string {
	return r.sealed.blobPath(kind, digest, binding)
}

func renameFile(from, to string) error { return os.Rename(from, to) }
