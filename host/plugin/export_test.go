package plugin

// SetCurrentUID makes the cache's ownership checks compare file owners
// with uid instead of the process's user, until restore is called.
func SetCurrentUID(uid int) (restore func()) {
	old := currentUID
	currentUID = func() int { return uid }
	return func() { currentUID = old }
}
