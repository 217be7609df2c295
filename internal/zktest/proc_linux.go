package zktest

import "syscall"

const syscallTerm = syscall.SIGTERM

// sysProcAttr kills the server when the test binary dies without cleanup
// (a panic, a timeout, kill -9), so no ZooKeeper outlives its test.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
