//go:build !linux

package zktest

import (
	"os"
	"syscall"
)

var syscallTerm os.Signal = os.Interrupt

func sysProcAttr() *syscall.SysProcAttr { return nil }
