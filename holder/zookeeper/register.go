package zookeeper

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/idsql/idsql/holder"
	"github.com/idsql/idsql/holder/holderkind"
)

// DefaultTickTime is the tickTime of the ZooKeeper servers that
// holder.tick_time stands for when the configuration gives none: that of
// ZooKeeper's sample configuration. It is not sent anywhere: it bounds the
// session timeouts the servers negotiate (see init).
const DefaultTickTime = 2 * time.Second

// init registers the ZooKeeper holder as holder.kind "zookeeper". A program
// links it with
//
//	import _ "github.com/idsql/idsql/holder/zookeeper"
//
// It reads holder.servers (at least one), holder.session_timeout and
// holder.tick_time, and checks the session timeout against what ZooKeeper
// negotiates by default, [2, 20] times the tick time: a server clamps a
// timeout outside it.
func init() {
	holderkind.Register("zookeeper", holderkind.Kind{
		CacheDir:              true,
		Modes:                 holderkind.Names(Modes),
		DefaultSessionTimeout: DefaultSessionTimeout,
		Keys:                  []string{"servers", "tick_time"},
		Check: func(s holderkind.Settings) error {
			if len(s.Servers) == 0 {
				return holderkind.KeyErrorf("servers", "the zookeeper holder needs at least one server")
			}
			if len(s.Endpoints) > 0 {
				return holderkind.KeyErrorf("endpoints", "the zookeeper holder takes its addresses in holder.servers")
			}
			tick, tickFrom := s.TickTime, "holder.tick_time"
			if tick == 0 {
				tick, tickFrom = DefaultTickTime, "the default holder.tick_time"
			}
			st, stFrom := s.SessionTimeout, ""
			if st == 0 {
				st, stFrom = DefaultSessionTimeout, "the default "
			}
			if lo, hi := 2*tick, 20*tick; st < lo || st > hi {
				return holderkind.KeyErrorf("session_timeout", "%s%s is outside [%s, %s], the session timeouts ZooKeeper negotiates with %s %s (2 to 20 ticks)",
					stFrom, st, lo, hi, tickFrom, tick)
			}
			return nil
		},
		New: func(s holderkind.Settings) (holder.Holder, error) {
			var logger zk.Logger
			if s.Logger != nil {
				logger = slogPrinter{s.Logger}
			}
			return New(Settings{Servers: s.Servers, Mode: Mode(s.Mode), SessionTimeout: s.SessionTimeout,
				CacheDir: s.CacheDir, Now: s.Now, Logger: logger})
		},
	})
}

// slogPrinter passes the ZooKeeper client's lines (connections made and
// lost, sessions granted and expired; never pings) to a slog.Logger.
type slogPrinter struct{ l *slog.Logger }

func (p slogPrinter) Printf(format string, args ...any) {
	p.l.Info("idsql: zookeeper client: " + fmt.Sprintf(format, args...))
}
