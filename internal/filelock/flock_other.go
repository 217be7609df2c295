//go:build !unix

package filelock

import (
	"errors"
	"os"
)

func lock(*os.File) error {
	return errors.New("filelock: file locks are not supported on this system")
}
