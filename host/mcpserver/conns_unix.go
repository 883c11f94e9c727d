//go:build unix

package mcpserver

import "syscall"

// fitDescriptors lowers max so the connections use at most half of the
// descriptors left after a reserve for the store, the hosts and plugins.
func fitDescriptors(max int) int {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil || rl.Cur > 1<<30 {
		return max
	}
	const reserve = 64
	avail := (int64(rl.Cur) - reserve) / 2
	switch {
	case avail < 4:
		return 4
	case avail < int64(max):
		return int(avail)
	}
	return max
}
