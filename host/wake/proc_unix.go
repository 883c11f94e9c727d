//go:build unix

package wake

import (
	"os/exec"
	"syscall"
)

// ownGroup starts the command in a process group of its own and makes its
// cancellation (timeout, the connector stopping) kill the whole group, so
// a run leaves no child behind.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
