// Command chaosproc is the process the chaos tests of package integration
// run many copies of. It inserts rows through idsql's wrapper into the
// configured tables, as fast as -pause allows, and prints every key it
// inserted once its transaction committed, one per line:
//
//	<table> <key>
//
// Errors go to stderr, one line each (repeats are counted, not repeated).
// It runs until it is killed, or until SIGTERM or SIGINT, when it closes
// the database (releasing its worker leases) and exits 0.
//
// -clock-start is for tests only: the snowflake clock (KeysOptions.Clock)
// reads the given time at its first reading, when the first worker lease
// is acquired, and runs at time.Now's rate from there. A test starts a
// successor whose clock is behind its predecessor's last keys by a known
// amount at the moment it takes the worker ID, however long the process
// took to get there (Go ignores faketime). The offset it settles on is
// logged as a note.
//
// -clock-file is for tests only too: the snowflake clock is the true one
// stepped and slewed as the file says ("<step> <slew>", e.g. "-5s 0" or
// "0s -0.05"), read at start and again on every SIGUSR1 (each reading is
// logged as a note). The step moves the wall reading only, as an NTP step
// does: Go's monotonic reading, which such a step leaves alone, stays true.
// The slew is a rate (-0.05: the clock loses 50 ms a second from the
// moment it is read) that moves both readings, as the kernel's frequency
// adjustment moves both clocks.
//
// -draw takes keys straight from the tables' key sources (DB.Keys) without
// inserting rows, and -driver mysql opens a MySQL or MariaDB database (the
// worker table then lives there): the twin and clock tests use them, so
// that what they measure, each key's issue time, does not wait for a
// database round trip.
//
// Every run notes when it was not scheduled for over 50 ms ("note:
// stalled ..."): the checkers do not count such a pause against a fault.
//
// With -db-waits, each inserting goroutine notes when the database took
// over 20 ms to answer one of its own statements (BEGIN, the INSERT once
// its keys were drawn, COMMIT): "note: g1 database 35ms from 15:04:05.000".
// While every goroutine waits so, the process waits for the database, not
// for idsql; a key draw over 50 ms is noted as "note: a key took ...".
//
// On SIGUSR2 it appends a dump of every goroutine's stack, headed by the
// time, to -stacks (default: its name.stacks in the working directory):
// a test that sees it go quiet captures what it waits on.
//
// It is not a tool for users; the chaos tests build and run it.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	_ "github.com/go-sql-driver/mysql"
	_ "github.com/lib/pq"

	_ "github.com/idsql/idsql/holder/etcd"        // holder.kind: etcd
	_ "github.com/idsql/idsql/holder/workertable" // holder.kind: postgres, mysql
	_ "github.com/idsql/idsql/holder/zookeeper"   // holder.kind: zookeeper
	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/idsql/keyform"
	"github.com/idsql/idsql/idsql/keyset"
	_ "github.com/idsql/idsql/idsql/segment/mysqlstore" // segment tables on MySQL
	_ "github.com/idsql/idsql/idsql/segment/redisqueue" // buffer: redis
	"github.com/idsql/idsql/idsql/snowflake"
	"github.com/idsql/idsql/internal/dialect"
)

func main() {
	var (
		configPath = flag.String("config", "", "idsql YAML configuration (required)")
		dsn        = flag.String("dsn", "", "DSN of the database holding the tables, PostgreSQL or (-driver mysql) MySQL (required)")
		name       = flag.String("name", "", "this process's label, stored in every row (required)")
		tables     = flag.String("tables", "", "comma-separated tables to insert into; empty means every configured table")
		clockStart = flag.String("clock-start", "", "test only: the snowflake clock's first reading (RFC 3339); it runs at the real rate from there")
		clockFile  = flag.String("clock-file", "", "test only: a file holding the clock's step and slew, read at start and on SIGUSR1")
		driver     = flag.String("driver", "postgres", "database driver: postgres or mysql")
		draw       = flag.Bool("draw", false, "take keys without inserting rows")
		workers    = flag.Int("workers", 2, "goroutines inserting at once")
		batch      = flag.Int("batch", 5, "rows per INSERT: 1 to this many")
		pause      = flag.Duration("pause", 5*time.Millisecond, "pause of each goroutine between INSERTs")
		work       = flag.Duration("work", 0, "CPU work (a busy loop) in each transaction before its INSERT, as an application does")
		procs      = flag.Int("procs", 0, "GOMAXPROCS; 0 leaves the default")
		stacks     = flag.String("stacks", "", "file to append goroutine dumps to on SIGUSR2; empty means <name>.stacks")
		dbWaits    = flag.Bool("db-waits", false, "note each wait of an inserting goroutine over 20 ms for the database to answer its own statements")
	)
	flag.Parse()
	if *procs > 0 {
		runtime.GOMAXPROCS(*procs)
	}
	if *configPath == "" || *dsn == "" || *name == "" || *workers < 1 || *batch < 1 {
		fmt.Fprintln(os.Stderr, "usage: chaosproc -config FILE -dsn DSN -name LABEL [-driver postgres|mysql] [-draw] [-tables a,b] [-clock-start T | -clock-file F] [-workers N] [-batch N] [-pause D] [-work D] [-procs N]")
		os.Exit(2)
	}
	p := &proc{name: *name, pid: os.Getpid()}
	if *stacks == "" {
		*stacks = *name + ".stacks"
	}
	go p.dumpOnSignal(*stacks)
	var clock snowflake.Clock
	if *clockStart != "" {
		start, err := time.Parse(time.RFC3339Nano, *clockStart)
		if err != nil {
			p.logf("-clock-start: %v", err)
			os.Exit(2)
		}
		clock = &startClock{start: start, logf: p.logf}
	}
	if *clockFile != "" {
		c, err := newFileClock(*clockFile, p.logf)
		if err != nil {
			p.logf("-clock-file: %v", err)
			os.Exit(2)
		}
		clock = c
	}
	d, err := dialect.ByName(*driver)
	if err != nil {
		p.logf("-driver: %v", err)
		os.Exit(2)
	}
	p.driver, p.dialect, p.draw, p.dbWaits = *driver, d, *draw, *dbWaits
	if err := p.run(*configPath, *dsn, *tables, clock, *workers, *batch, *pause, *work); err != nil {
		p.logf("%v", err)
		os.Exit(1)
	}
}

type proc struct {
	name    string
	pid     int
	driver  string
	dialect dialect.Dialect // the driver's: its placeholders
	draw    bool            // take keys without inserting
	dbWaits bool            // note the database's slow answers (-db-waits)

	outMu sync.Mutex // one write per committed INSERT
	errMu sync.Mutex
	last  string                       // the last error line printed, digits masked
	lastT time.Time                    // when it was printed
	again int                          // repeats of last not printed
	uuids map[string]*keyform.UUIDKeys // the tables' UUID codecs (uuid7 tables), nil entries for others
}

func (p *proc) logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "chaosproc %s: %s\n", p.name, fmt.Sprintf(format, args...))
}

// fail prints an error line, folding repeats of the same message (the same
// but for numbers: times, worker IDs) into a count printed at most every
// two seconds.
func (p *proc) fail(msg string) {
	p.errMu.Lock()
	defer p.errMu.Unlock()
	shape := strings.Map(func(r rune) rune {
		if r >= '0' && r <= '9' {
			return '#'
		}
		return r
	}, msg)
	if shape == p.last && time.Since(p.lastT) < 2*time.Second {
		p.again++
		return
	}
	if p.again > 0 {
		p.logf("(last error repeated %d more times)", p.again)
	}
	p.last, p.lastT, p.again = shape, time.Now(), 0
	p.logf("%s", msg)
}

func (p *proc) run(configPath, dsn, tableList string, clock snowflake.Clock, workers, batch int, pause, work time.Duration) error {
	cfg, err := keyset.Load(configPath)
	if err != nil {
		return err
	}
	db, err := idsql.Open(p.driver, dsn, cfg, idsql.Options{ObserveKeys: p.observeKeys,
		KeysOptions: keyset.KeysOptions{Clock: clock, Logger: slog.New(logHandler{p: p})}})
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(workers)
	db.SetMaxIdleConns(workers)

	names := cfg.TableNames()
	if tableList != "" {
		names = strings.Split(tableList, ",")
	}
	p.uuids = map[string]*keyform.UUIDKeys{}
	for _, t := range names {
		if p.uuids[t], err = cfg.UUIDKeys(t); err != nil {
			return err
		}
	}
	clockDesc := "true"
	switch c := clock.(type) {
	case *startClock:
		clockDesc = "starting at " + c.start.UTC().Format(time.RFC3339Nano)
	case *fileClock:
		clockDesc = "from " + c.path
	}
	p.logf("pid %d, instance %q, clock %s, tables %s, workers %d", p.pid, cfg.Holder.Instance, clockDesc, strings.Join(names, ","), workers)

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	go p.probe(ctx)
	var wg sync.WaitGroup
	for i := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.insertLoop(ctx, db, names, batch, pause, work, i, rand.New(rand.NewPCG(uint64(p.pid), uint64(i))))
		}()
	}
	wg.Wait()
	p.logf("stopping: %v", context.Cause(ctx))
	return nil
}

// logHandler writes idsql's log lines (a worker lease ended) to stderr
// like the process's own, each with the time it was logged, to the
// millisecond: "... (at 15:04:05.000)".
type logHandler struct {
	p     *proc
	attrs []slog.Attr // from WithAttrs
}

func (h logHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h logHandler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Message)
	for _, a := range h.attrs {
		fmt.Fprintf(&b, " %s", a)
	}
	r.Attrs(func(a slog.Attr) bool {
		fmt.Fprintf(&b, " %s", a)
		return true
	})
	h.p.logf("%s (at %s)", b.String(), r.Time.UTC().Format("15:04:05.000"))
	return nil
}

func (h logHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return logHandler{p: h.p, attrs: append(append([]slog.Attr(nil), h.attrs...), as...)}
}

// WithGroup keeps the handler: idsql logs no groups.
func (h logHandler) WithGroup(string) slog.Handler { return h }

// dumpOnSignal appends every goroutine's stack to path at each SIGUSR2.
func (p *proc) dumpOnSignal(path string) {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGUSR2)
	for range sig {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
		if err != nil {
			p.logf("stacks: %v", err)
			continue
		}
		fmt.Fprintf(f, "=== goroutines at %s\n", time.Now().UTC().Format("15:04:05.000"))
		err = pprof.Lookup("goroutine").WriteTo(f, 2)
		fmt.Fprintln(f, "=== end")
		if err = errors.Join(err, f.Close()); err != nil {
			p.logf("stacks: %v", err)
		}
	}
}

// probe notes each time the process did not run for over 50 ms (the
// machine did not schedule it, or its runtime stopped the world): a pause
// in its keys then is not idsql's. It wakes every 5 ms.
func (p *proc) probe(ctx context.Context) {
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	last := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			if d := now.Sub(last); d > 50*time.Millisecond {
				p.logf("note: stalled %s from %s", d.Round(time.Millisecond), last.UTC().Format("15:04:05.000"))
			}
			last = now
		}
	}
}

// insertLoop inserts batches of rows until ctx ends, printing the keys of
// every committed batch.
func (p *proc) insertLoop(ctx context.Context, db *idsql.DB, tables []string, batch int, pause, work time.Duration, g int, r *rand.Rand) {
	queries := map[string]string{}
	var line []byte
	for ctx.Err() == nil {
		table := tables[r.IntN(len(tables))]
		n := 1 + r.IntN(batch)
		key := table + "/" + strconv.Itoa(n)
		q, ok := queries[key]
		if !ok {
			q = insertQuery(table, n, p.dialect)
			queries[key] = q
		}
		args := make([]any, 0, 2*n)
		for range n {
			args = append(args, p.name, p.pid)
		}
		var ids []int64
		var err error
		if p.draw {
			start := time.Now()
			ids, err = db.Keys().NextIDs(ctx, table, n)
			if took := time.Since(start); took > 50*time.Millisecond {
				// A pause inside idsql, not the scheduler's.
				p.logf("note: a key took %s from %s", took.Round(time.Millisecond), start.UTC().Format("15:04:05.000"))
			}
		} else {
			ids, err = p.insert(ctx, db, q, args, n, work, g, p.uuids[table])
		}
		if err != nil {
			if ctx.Err() == nil {
				p.fail(fmt.Sprintf("insert into %s: %v", table, err))
				sleep(ctx, 100*time.Millisecond)
			}
			continue
		}
		line = line[:0]
		for _, id := range ids {
			line = append(line, table...)
			line = append(line, ' ')
			line = strconv.AppendInt(line, id, 10)
			line = append(line, '\n')
		}
		p.outMu.Lock()
		_, err = os.Stdout.Write(line)
		p.outMu.Unlock()
		if err != nil {
			p.logf("write keys: %v", err)
			os.Exit(1)
		}
		sleep(ctx, pause)
	}
}

// insertQuery is an INSERT of n rows that leaves the key to idsql, with
// the dialect's placeholders ($1 for postgres, ? for mysql). MySQL refuses
// RETURNING; MariaDB (10.5 and later) takes it.
func insertQuery(table string, n int, d dialect.Dialect) string {
	var b strings.Builder
	b.WriteString("INSERT INTO " + table + " (proc, pid) VALUES ")
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(?, ?)")
	}
	b.WriteString(" RETURNING id")
	return d.Rebind(b.String())
}

// insert runs q in a transaction, after work (CPU work inside the
// transaction, right before the INSERT takes its keys), and returns the
// keys once it committed. g numbers the calling goroutine, for notes.
// A uuid7 table's keys (uuids not nil) come back as UUIDs: the keys
// returned are the ones they carry.
func (p *proc) insert(ctx context.Context, db *idsql.DB, q string, args []any, n int, work time.Duration, g int, uuids *keyform.UUIDKeys) ([]int64, error) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	drew := new(time.Duration) // set by observeKeys
	ctx = context.WithValue(ctx, drawKey{}, drew)
	start := time.Now()
	tx, err := db.BeginTx(ctx, nil)
	p.waited(g, start)
	if err != nil {
		return nil, fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback()
	spin(work)
	start = time.Now()
	rows, err := tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	ids := make([]int64, 0, n)
	for rows.Next() {
		var id int64
		var err error
		if uuids == nil {
			err = rows.Scan(&id)
		} else {
			var text string
			if err = rows.Scan(&text); err == nil {
				id, err = uuidKey(uuids, text)
			}
		}
		if err != nil {
			rows.Close()
			return nil, err
		}
		ids = append(ids, id)
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, err
	}
	p.waited(g, start.Add(*drew))
	if len(ids) != n {
		return nil, fmt.Errorf("RETURNING gave %d keys for %d rows", len(ids), n)
	}
	start = time.Now()
	err = tx.Commit()
	p.waited(g, start)
	if err != nil {
		return nil, fmt.Errorf("commit: %w", err)
	}
	return ids, nil
}

// uuidKey returns the key a uuid7 table's UUID carries.
func uuidKey(uuids *keyform.UUIDKeys, text string) (int64, error) {
	b, err := keyform.ParseUUID(text)
	if err != nil {
		return 0, err
	}
	return uuids.Key(b)
}

// drawKey keys the context value where observeKeys puts how long an
// INSERT's keys took to draw.
type drawKey struct{}

// observeKeys is the wrapper's ObserveKeys: it notes a draw over 50 ms (a
// pause inside idsql) and tells insert how long the draw took.
func (p *proc) observeKeys(ctx context.Context, table string, keys int, took time.Duration) {
	if d, ok := ctx.Value(drawKey{}).(*time.Duration); ok {
		*d = took
	}
	if took > 50*time.Millisecond {
		p.logf("note: a key took %s from %s", took.Round(time.Millisecond), time.Now().Add(-took).UTC().Format("15:04:05.000"))
	}
}

// waited notes, with -db-waits, that goroutine g waited since start for
// the database to answer one of its own statements, if over 20 ms.
func (p *proc) waited(g int, start time.Time) {
	if d := time.Since(start); p.dbWaits && d > 20*time.Millisecond {
		p.logf("note: g%d database %s from %s", g, d.Round(time.Millisecond), start.UTC().Format("15:04:05.000"))
	}
}

// spin keeps the CPU busy for d: a process stopped while its goroutines
// spin resumes them first, before its runtime gets to run timers.
func spin(d time.Duration) {
	if d <= 0 {
		return
	}
	x := 0
	for start := time.Now(); time.Since(start) < d; {
		for i := range 1000 {
			x += i
		}
	}
	runtime.KeepAlive(x)
}

func sleep(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// startClock is the snowflake clock of a process whose clock is off: its
// first reading is start, and it runs at time.Now's rate from there, off
// by a fixed amount. Now keeps time.Now's monotonic reading.
type startClock struct {
	start time.Time
	logf  func(format string, args ...any)
	once  sync.Once
	off   time.Duration // set by the first Now
}

func (c *startClock) Now() time.Time {
	now := time.Now()
	c.once.Do(func() {
		c.off = c.start.Sub(now)
		c.logf("note: clock offset %s from its first reading on", c.off)
	})
	return now.Add(c.off)
}

func (c *startClock) Sleep(ctx context.Context, d time.Duration) error {
	return snowflake.SystemClock{}.Sleep(ctx, d)
}

// fileClock is the clock -clock-file describes; see the command's doc.
type fileClock struct {
	path string
	logf func(format string, args ...any)
	st   atomic.Pointer[clockState]
}

// clockState is one reading of the clock file.
type clockState struct {
	step time.Duration // of the wall reading only
	rate float64       // slew: clock time gained per true second
	from time.Time     // when the rate was read
	base time.Duration // slew gained before from
}

func newFileClock(path string, logf func(format string, args ...any)) (*fileClock, error) {
	if err := checkWallShift(); err != nil {
		return nil, err
	}
	c := &fileClock{path: path, logf: logf}
	c.st.Store(&clockState{from: time.Now()})
	if err := c.reload(); err != nil {
		return nil, err
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGUSR1)
	go func() {
		for range sig {
			if err := c.reload(); err != nil {
				logf("-clock-file: %v", err)
			}
		}
	}()
	return c, nil
}

// reload reads the file; the slew gained so far is kept.
func (c *fileClock) reload() error {
	b, err := os.ReadFile(c.path)
	if err != nil {
		return err
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return fmt.Errorf("%s: want \"<step> <slew>\", have %q", c.path, b)
	}
	step, err := time.ParseDuration(f[0])
	if err != nil {
		return fmt.Errorf("%s: step: %w", c.path, err)
	}
	rate, err := strconv.ParseFloat(f[1], 64)
	if err != nil {
		return fmt.Errorf("%s: slew: %w", c.path, err)
	}
	now := time.Now()
	old := c.st.Load()
	c.st.Store(&clockState{step: step, rate: rate, from: now,
		base: old.base + time.Duration(float64(now.Sub(old.from))*old.rate)})
	c.logf("note: clock step %s slew %g: it reads %s", step, rate, c.Now().UTC().Format(time.RFC3339Nano))
	return nil
}

func (c *fileClock) Now() time.Time {
	now := time.Now()
	s := c.st.Load()
	slew := s.base + time.Duration(float64(now.Sub(s.from))*s.rate)
	return wallShift(now.Add(slew), s.step)
}

func (c *fileClock) Sleep(ctx context.Context, d time.Duration) error {
	return snowflake.SystemClock{}.Sleep(ctx, d)
}

// timeWords is package time's layout of a time.Time.
type timeWords struct {
	wall uint64
	ext  int64
	loc  *time.Location
}

// wallShift returns t with its wall reading moved by d and its monotonic
// reading kept. Package time has no way to do it (Add moves both), so it
// takes the wall word of t.Add(d); checkWallShift makes sure that works.
func wallShift(t time.Time, d time.Duration) time.Time {
	if d == 0 {
		return t
	}
	u := t.Add(d)
	(*timeWords)(unsafe.Pointer(&t)).wall = (*timeWords)(unsafe.Pointer(&u)).wall
	return t
}

// checkWallShift fails when wallShift does not move the wall reading alone
// (a Go release with another layout of time.Time).
func checkWallShift() error {
	now := time.Now()
	s := wallShift(now, time.Hour)
	if unsafe.Sizeof(now) != unsafe.Sizeof(timeWords{}) || s.Sub(now) != 0 || s.Round(0).Sub(now.Round(0)) != time.Hour {
		return errors.New("cannot step the wall clock alone with this Go release's time.Time")
	}
	return nil
}
