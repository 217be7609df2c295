package zookeeper

import (
	"github.com/idsql/idsql/holder"
	"github.com/idsql/idsql/idsql/kinds"
)

// init registers the ZooKeeper holder as holder.kind "zookeeper". A program
// links it with
//
//	import _ "github.com/idsql/idsql/holder/zookeeper"
func init() {
	kinds.RegisterHolder("zookeeper", kinds.Holder{
		CacheDir:              true,
		Modes:                 kinds.Names(Modes),
		DefaultSessionTimeout: DefaultSessionTimeout,
		New: func(s kinds.HolderSettings) (holder.Holder, error) {
			return New(Settings{Servers: s.Servers, Mode: Mode(s.Mode), SessionTimeout: s.SessionTimeout,
				CacheDir: s.CacheDir, Now: s.Now})
		},
	})
}
