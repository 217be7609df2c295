// Command redisqproc is the process TestChaosRedisQueue (package
// integration) runs many copies of. It takes keys of one or more segment
// keys (as a table with shard bits has one per shard) through a
// redisqueue.Queue over a PostgreSQL store and a Redis server,
// and prints every key it was handed, one per line, as soon as it has it
// (one write per call, unbuffered, so a kill loses no printed key):
//
//	<key>
//
// Errors go to stderr (repeats folded into a count). It runs until it is
// killed, or until SIGTERM or SIGINT, when it closes the queue and exits 0,
// printing its counters to stderr.
//
// It is not a tool for users; the chaos test builds and runs it.
package main

import (
	"context"
	"database/sql"
	"flag"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	_ "github.com/lib/pq"
	"github.com/redis/go-redis/v9"

	"github.com/idsql/idsql/idsql/segment"
	"github.com/idsql/idsql/idsql/segment/redisqueue"
)

func main() {
	var (
		dsn     = flag.String("dsn", "", "PostgreSQL DSN of the store (required)")
		addr    = flag.String("redis", "", "Redis address host:port (required)")
		name    = flag.String("name", "", "this process's label (required)")
		key     = flag.String("key", "orders", "segment keys, comma-separated: each call takes keys of one, chosen at random")
		ns      = flag.String("namespace", "chaos", "Redis namespace")
		step    = flag.Int64("step", 200, "keys per refill")
		batch   = flag.Int("batch", 20, "keys per pop")
		workers = flag.Int("workers", 2, "goroutines taking keys")
		most    = flag.Int("n", 5, "keys per call: 1 to this many")
		pause   = flag.Duration("pause", 2*time.Millisecond, "pause of each goroutine between calls")
	)
	flag.Parse()
	if *dsn == "" || *addr == "" || *name == "" || *workers < 1 || *most < 1 {
		fmt.Fprintln(os.Stderr, "usage: redisqproc -dsn DSN -redis ADDR -name LABEL [-key K] [-namespace NS] [-step N] [-batch N] [-workers N] [-n N] [-pause D]")
		os.Exit(2)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, nil)).With("proc", *name)
	db, err := sql.Open("postgres", *dsn)
	if err != nil {
		log.Error("open", "err", err)
		os.Exit(1)
	}
	defer db.Close()
	rdb := redis.NewClient(&redis.Options{Addr: *addr, DialTimeout: time.Second,
		ReadTimeout: time.Second, WriteTimeout: time.Second, MaxRetries: 1})
	defer rdb.Close()
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	q, err := redisqueue.New(ctx, rdb, segment.NewPostgresStore(db), redisqueue.Settings{
		Namespace: *ns, Step: *step, Batch: *batch, WaitTimeout: 2 * time.Second, LoadTimeout: 2 * time.Second,
		RetryInterval: 200 * time.Millisecond, Instance: *name, Logger: log,
		// Its own instance name: the test tells the fallback's ranges
		// from those pushed to Redis in idsql_alloc_log.
		Fallback: segment.Settings{RefreshInterval: -1, WaitTimeout: 2 * time.Second, LoadTimeout: 2 * time.Second,
			Instance: *name + fallbackSuffix},
	})
	if err != nil {
		log.Error("new queue", "err", err)
		os.Exit(1)
	}
	keys := strings.Split(*key, ",")
	log.Info("started", "pid", os.Getpid(), "keys", keys)
	var out sync.Mutex
	var errs errLog
	var wg sync.WaitGroup
	for i := range *workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(os.Getpid()), uint64(i)))
			var line []byte
			for ctx.Err() == nil {
				ids, err := q.NextN(ctx, keys[r.IntN(len(keys))], 1+r.IntN(*most))
				if err != nil {
					if ctx.Err() == nil {
						errs.note(log, err)
						sleep(ctx, 50*time.Millisecond)
					}
					continue
				}
				line = line[:0]
				for _, id := range ids {
					line = strconv.AppendInt(line, id, 10)
					line = append(line, '\n')
				}
				out.Lock()
				_, err = os.Stdout.Write(line)
				out.Unlock()
				if err != nil {
					log.Error("write keys", "err", err)
					os.Exit(1)
				}
				sleep(ctx, *pause)
			}
		}()
	}
	wg.Wait()
	q.Close()
	st := q.Stats()
	log.Info("stopping", "handed", st.Handed, "fallback", st.Fallback, "refills", st.Refills,
		"restarts", st.Restarts, "outages", st.Outages, "redis_calls", st.RedisCalls)
}

// fallbackSuffix ends the instance name of the fallback generator's
// ranges; the test's copy is rqFallbackSuffix.
const fallbackSuffix = " fallback"

// errLog prints an error once per second at most, counting the others.
type errLog struct {
	mu     sync.Mutex
	last   time.Time
	folded int
}

func (e *errLog) note(log *slog.Logger, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if time.Since(e.last) < time.Second {
		e.folded++
		return
	}
	log.Warn("take keys", "err", err, "errors_since_last", e.folded)
	e.last, e.folded = time.Now(), 0
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
