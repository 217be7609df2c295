package etcd

import (
	"github.com/idsql/idsql/holder"
	"github.com/idsql/idsql/idsql/kinds"
)

// init registers the etcd holder as holder.kind "etcd". A program links it
// with
//
//	import _ "github.com/idsql/idsql/holder/etcd"
func init() {
	kinds.RegisterHolder("etcd", kinds.Holder{
		Modes:                 kinds.Names(Modes),
		DefaultSessionTimeout: DefaultTTL,
		New: func(s kinds.HolderSettings) (holder.Holder, error) {
			return New(Settings{Endpoints: s.Servers, Mode: Mode(s.Mode), TTL: s.SessionTimeout, Now: s.Now})
		},
	})
}
