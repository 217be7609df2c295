package local

import (
	"github.com/idsql/idsql/holder"
	"github.com/idsql/idsql/holder/holderkind"
)

// init registers the local holder as holder.kind "local", idsql's default.
func init() {
	holderkind.Register("local", holderkind.Kind{
		CacheDir: true,
		Modes:    []string{"sticky"},
		New: func(s holderkind.Settings) (holder.Holder, error) {
			return New(Settings{Workers: s.Workers, Dir: s.CacheDir, Now: s.Now})
		},
	})
}
