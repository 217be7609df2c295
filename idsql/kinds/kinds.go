package kinds

import (
	"context"
	"database/sql"
	"log/slog"

	"github.com/idsql/idsql/idsql/segment"
	"github.com/idsql/idsql/internal/plugins"
)

// StoreFunc makes the segment store on an application's database.
type StoreFunc func(db *sql.DB) *segment.SQLStore

// BufferSettings is what a buffer kind's queue is made from.
type BufferSettings struct {
	Addr      string           // redis.addr: the server
	Namespace string           // prefix of the buffer's names ("idsql:<namespace>")
	Step      int64            // keys per refill: the table's step
	Batch     int              // keys per pop; zero means the kind's default
	Store     segment.Store    // where ranges are allocated
	Fallback  segment.Settings // the generator used while the server is down
	Instance  string           // this process, in the range log
	Logger    *slog.Logger
}

// A Buffer hands out the pre-allocated keys of segment keys, shared by
// every process that uses the same server.
type Buffer interface {
	Next(ctx context.Context, key string) (int64, error)
	NextN(ctx context.Context, key string, n int) ([]int64, error)
	// Close stops the buffer and closes its connections.
	Close() error
}

// BufferFunc starts a buffer.
type BufferFunc func(ctx context.Context, s BufferSettings) (Buffer, error)

var (
	// PostgreSQL's segment store needs no import: it is in package
	// segment, which has no driver dependency.
	stores = func() *plugins.Table[StoreFunc] {
		t := plugins.New[StoreFunc]("segment store", map[string]string{
			"mysql":  "github.com/idsql/idsql/idsql/segment/mysqlstore",
			"sqlite": "github.com/idsql/idsql/idsql/segment/sqlitestore",
		})
		t.Register("postgres", segment.NewPostgresStore)
		return t
	}()
	buffers = plugins.New[BufferFunc]("buffer", map[string]string{
		"redis": "github.com/idsql/idsql/idsql/segment/redisqueue",
	})
)

// RegisterStore makes the segment store of a dialect ("postgres",
// "mysql", "sqlite") available. It is called from the init function of
// the store's package, and panics when the dialect has one.
func RegisterStore(dialect string, f StoreFunc) { stores.Register(dialect, f) }

// RegisterBuffer makes a buffer kind (the `buffer:` of a segment table)
// available. It is called from the init function of the kind's package,
// and panics when the name is taken.
func RegisterBuffer(kind string, f BufferFunc) { buffers.Register(kind, f) }

// LookupStore returns the segment store registered for a dialect.
func LookupStore(dialect string) (StoreFunc, error) { return stores.Lookup(dialect) }

// LookupBuffer returns the buffer kind registered under kind.
func LookupBuffer(kind string) (BufferFunc, error) { return buffers.Lookup(kind) }
