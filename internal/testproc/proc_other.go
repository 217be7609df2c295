//go:build !linux

package testproc

import "syscall"

// sysProcAttr runs the process as cred (nil: as ourselves). Outside Linux
// there is no parent-death signal: cleanup relies on the test's Cleanup.
func sysProcAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	if cred == nil {
		return nil
	}
	return &syscall.SysProcAttr{Credential: cred}
}
