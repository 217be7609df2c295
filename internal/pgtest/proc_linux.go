package pgtest

import "syscall"

// sysProcAttr runs the postmaster as cred (nil: as ourselves) and kills it
// when the test binary dies without cleanup, so no server outlives its test.
func sysProcAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGKILL}
}
