package segment_test

import (
	"context"
	"database/sql"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/lib/pq"

	"github.com/idsql/idsql/idsql/segment"
	"github.com/idsql/idsql/idsql/segment/mysqlstore"
	"github.com/idsql/idsql/internal/mysqltest"
	"github.com/idsql/idsql/internal/pgtest"
)

// dbCase is one database the store tests run on. Each test of the store
// is a function of a dbCase, run by one top-level test per database whose
// name says which (TestPostgres..., TestMySQL...), so that
// go test -run MySQL selects every MySQL variant.
type dbCase struct {
	name     string // "postgres" or "mysql", also the driver name
	storeSQL func() segment.StoreSQL

	// open returns a pool on a fresh schema (database) of the test's own
	// and the DSN of that schema.
	open func(t testing.TB) (*sql.DB, string)

	// countingDB opens dsn through a dialer that counts round trips.
	countingDB func(t testing.TB, dsn string) (*sql.DB, *roundTrips)

	// adopt creates a table named adoptName (which needs quoting) holding
	// IDs 1..1234 from the database's own key generator, and an empty
	// table empty_t(pk).
	adopt     []string
	adoptName string

	// leafSchema is Meituan Leaf's leaf_alloc table on this database.
	leafSchema string
}

var pg = dbCase{
	name:     "postgres",
	storeSQL: segment.PostgresSQL,
	open:     pgtest.Open,
	countingDB: func(t testing.TB, dsn string) (*sql.DB, *roundTrips) {
		t.Helper()
		c, err := pq.NewConnector(dsn)
		if err != nil {
			t.Fatal(err)
		}
		rt := &roundTrips{}
		c.Dialer(rt)
		db := sql.OpenDB(c)
		t.Cleanup(func() { db.Close() })
		return db, rt
	},
	adopt: []string{
		`CREATE TABLE "Order ""Lines""" (id BIGSERIAL PRIMARY KEY, note TEXT)`,
		`INSERT INTO "Order ""Lines""" (note) SELECT 'x' FROM generate_series(1, 1234)`,
		`CREATE TABLE empty_t (pk BIGSERIAL PRIMARY KEY)`,
	},
	adoptName: `Order "Lines"`,
	leafSchema: `CREATE TABLE leaf_alloc (
	biz_tag     VARCHAR(128) NOT NULL DEFAULT '',
	max_id      BIGINT NOT NULL DEFAULT 1,
	step        INT NOT NULL,
	description VARCHAR(256) DEFAULT NULL,
	update_time TIMESTAMP NOT NULL DEFAULT CURRENT_TIMESTAMP,
	PRIMARY KEY (biz_tag)
)`,
}

var my = dbCase{
	name:     "mysql",
	storeSQL: mysqlstore.SQL,
	open:     mysqltest.Open,
	countingDB: func(t testing.TB, dsn string) (*sql.DB, *roundTrips) {
		t.Helper()
		cfg, err := mysql.ParseDSN(dsn)
		if err != nil {
			t.Fatal(err)
		}
		rt := &roundTrips{}
		cfg.DialFunc = rt.DialContext
		c, err := mysql.NewConnector(cfg)
		if err != nil {
			t.Fatal(err)
		}
		db := sql.OpenDB(c)
		t.Cleanup(func() { db.Close() })
		return db, rt
	},
	adopt: []string{
		"CREATE TABLE `Order ``Lines``` (id BIGINT AUTO_INCREMENT PRIMARY KEY, note TEXT)",
		// 1234 rows numbered by AUTO_INCREMENT (10^4 rows of digits, cut).
		"INSERT INTO `Order ``Lines``` (note) SELECT 'x' FROM " + digits + " a, " + digits + " b, " + digits + " c, " + digits + " d LIMIT 1234",
		"CREATE TABLE empty_t (pk BIGINT AUTO_INCREMENT PRIMARY KEY)",
	},
	adoptName: "Order `Lines`",
	// Leaf's schema as its README gives it, in the utf8 (utf8mb3) character
	// set of its day: the store's procedure must match that collation.
	leafSchema: "CREATE TABLE `leaf_alloc` (\n" +
		"	`biz_tag` varchar(128) NOT NULL DEFAULT '',\n" +
		"	`max_id` bigint(20) NOT NULL DEFAULT '1',\n" +
		"	`step` int(11) NOT NULL,\n" +
		"	`description` varchar(256) DEFAULT NULL,\n" +
		"	`update_time` timestamp NOT NULL DEFAULT CURRENT_TIMESTAMP ON UPDATE CURRENT_TIMESTAMP,\n" +
		"	PRIMARY KEY (`biz_tag`)\n" +
		") ENGINE=InnoDB DEFAULT CHARSET=utf8",
}

// digits is a derived table of ten rows.
const digits = "(SELECT 0 AS n UNION ALL SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3 UNION ALL SELECT 4 UNION ALL SELECT 5 UNION ALL SELECT 6 UNION ALL SELECT 7 UNION ALL SELECT 8 UNION ALL SELECT 9)"

// form is one way a dialect allocates.
type form struct {
	name string
	d    segment.StoreSQL
}

// forms returns the dialect's one-statement allocation and the
// transaction (UPDATE, INSERT) it falls back to without one.
func (c dbCase) forms() []form {
	tx := c.storeSQL()
	tx.Allocate = nil
	return []form{{"one statement", c.storeSQL()}, {"transaction", tx}}
}

// store returns a migrated store (Migrate run twice: it is idempotent) on
// a fresh schema, its pool and the schema's DSN.
func (c dbCase) store(t testing.TB) (*segment.SQLStore, *sql.DB, string) {
	t.Helper()
	db, dsn := c.open(t)
	return c.migrated(t, db, c.storeSQL(), segment.StoreSettings{}), db, dsn
}

// migrated returns a store of d on db, migrated twice.
func (c dbCase) migrated(t testing.TB, db *sql.DB, d segment.StoreSQL, st segment.StoreSettings) *segment.SQLStore {
	t.Helper()
	s, err := segment.NewSQLStoreWith(db, d, st)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if err := s.Migrate(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Migrate(ctx); err != nil {
		t.Fatalf("second Migrate: %v", err)
	}
	return s
}

// storeSQLNamed is the store SQL of a dbCase name, for helper processes.
func storeSQLNamed(name string) segment.StoreSQL {
	if name == my.name {
		return mysqlstore.SQL()
	}
	return segment.PostgresSQL()
}

// roundTrips counts the round trips of the connections it dials: every
// read from the server that follows a write to it. Requests that expect
// no answer (COM_STMT_CLOSE, Terminate) are counted with the next one.
type roundTrips struct{ n atomic.Int64 }

func (rt *roundTrips) Count() int64 { return rt.n.Load() }

func (rt *roundTrips) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: c, rt: rt}, nil
}

// Dial and DialTimeout make roundTrips a pq.Dialer.
func (rt *roundTrips) Dial(network, addr string) (net.Conn, error) {
	return rt.DialContext(context.Background(), network, addr)
}

func (rt *roundTrips) DialTimeout(network, addr string, timeout time.Duration) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return rt.DialContext(ctx, network, addr)
}

type countingConn struct {
	net.Conn
	rt    *roundTrips
	wrote atomic.Bool
}

func (c *countingConn) Write(p []byte) (int, error) {
	c.wrote.Store(true)
	return c.Conn.Write(p)
}

func (c *countingConn) Read(p []byte) (int, error) {
	if c.wrote.Swap(false) {
		c.rt.n.Add(1)
	}
	return c.Conn.Read(p)
}

// cutProxy forwards TCP connections to a server until Cut, which closes
// them all and refuses new ones until Restore: the server looks down to
// its clients, while it keeps serving everyone else.
type cutProxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	down  bool
	conns map[net.Conn]bool
}

func newCutProxy(t testing.TB, target string) *cutProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cutProxy{ln: ln, target: target, conns: map[net.Conn]bool{}}
	t.Cleanup(func() { ln.Close(); p.Cut() })
	go p.serve()
	return p
}

func (p *cutProxy) Addr() string { return p.ln.Addr().String() }

func (p *cutProxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.forward(c)
	}
}

func (p *cutProxy) forward(c net.Conn) {
	p.mu.Lock()
	if p.down {
		p.mu.Unlock()
		c.Close()
		return
	}
	p.mu.Unlock()
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	if p.down {
		p.mu.Unlock()
		c.Close()
		s.Close()
		return
	}
	p.conns[c], p.conns[s] = true, true
	p.mu.Unlock()
	copyClose := func(dst, src net.Conn) {
		buf := make([]byte, 32<<10)
		for {
			n, err := src.Read(buf)
			if n > 0 {
				if _, werr := dst.Write(buf[:n]); werr != nil {
					break
				}
			}
			if err != nil {
				break
			}
		}
		dst.Close()
		src.Close()
	}
	go copyClose(s, c)
	go copyClose(c, s)
}

// Cut closes every forwarded connection and refuses new ones.
func (p *cutProxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

// Restore accepts connections again.
func (p *cutProxy) Restore() {
	p.mu.Lock()
	p.down = false
	p.mu.Unlock()
}
