//go:build !unix

package wake

import "os/exec"

// ownGroup leaves the command as it is: cancellation kills the process
// (exec.CommandContext's default).
func ownGroup(*exec.Cmd) {}
