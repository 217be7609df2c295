package testproc

import "syscall"

// sysProcAttr runs the process as cred (nil: as ourselves) and kills it when
// the test binary dies without cleanup (a panic, a timeout, kill -9).
func sysProcAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGKILL}
}
