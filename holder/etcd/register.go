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
		Keys:                  []string{"endpoints"},
		Check: func(s kinds.HolderSettings) error {
			if len(s.Servers) > 0 {
				return kinds.KeyErrorf("servers", "the etcd holder takes its addresses in holder.endpoints")
			}
			if len(s.Endpoints) == 0 {
				return kinds.KeyErrorf("endpoints", "the etcd holder needs at least one endpoint")
			}
			return nil
		},
		New: func(s kinds.HolderSettings) (holder.Holder, error) {
			return New(Settings{Endpoints: s.Endpoints, Mode: Mode(s.Mode), TTL: s.SessionTimeout, Now: s.Now})
		},
	})
}
