package etcd

import (
	"github.com/idsql/idsql/holder"
	"github.com/idsql/idsql/holder/holderkind"
)

// init registers the etcd holder as holder.kind "etcd". A program links it
// with
//
//	import _ "github.com/idsql/idsql/holder/etcd"
func init() {
	holderkind.Register("etcd", holderkind.Kind{
		Modes:                 holderkind.Names(Modes),
		DefaultSessionTimeout: DefaultTTL,
		Keys:                  []string{"endpoints"},
		Check: func(s holderkind.Settings) error {
			if len(s.Servers) > 0 {
				return holderkind.KeyErrorf("servers", "the etcd holder takes its addresses in holder.endpoints")
			}
			if len(s.Endpoints) == 0 {
				return holderkind.KeyErrorf("endpoints", "the etcd holder needs at least one endpoint")
			}
			return nil
		},
		New: func(s holderkind.Settings) (holder.Holder, error) {
			return New(Settings{Endpoints: s.Endpoints, Mode: Mode(s.Mode), TTL: s.SessionTimeout, Now: s.Now})
		},
	})
}
