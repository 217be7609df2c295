package local

import (
	"github.com/idsql/idsql/holder"
	"github.com/idsql/idsql/idsql/kinds"
)

// init registers the local holder as holder.kind "local", idsql's default.
func init() {
	kinds.RegisterHolder("local", kinds.Holder{
		CacheDir: true,
		Modes:    []string{"sticky"},
		New: func(s kinds.HolderSettings) (holder.Holder, error) {
			return New(Settings{Workers: s.Workers, Dir: s.CacheDir, Now: s.Now})
		},
	})
}
