package holdertest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/idsql/idsql/holder"
	"github.com/idsql/idsql/holder/registry"
	"github.com/idsql/idsql/idsql/snowflake"
	"github.com/idsql/idsql/internal/pgtest"
)

// ChurnOptions tune Churn.
type ChurnOptions struct {
	// Tables per holder; 0 means 4.
	Tables int
	// Rounds of acquire, issue, release per table; 0 means 6.
	Rounds int
	// WorkerBits; 0 means 4 (16 worker IDs).
	WorkerBits int
	// Busy reports an Acquire error that means "all worker IDs are held,
	// try again" (the holder's ErrExhausted).
	Busy error
}

// Churn runs len(holders) x Tables generators, one per (holder, table),
// competing for a small worker space: each acquires a lease (retrying while
// Busy), issues IDs, releases, and starts over. It checks that no two live
// leases share a worker ID, that no ID is issued twice, and that reg.Find
// names the right table for a sample of IDs from before and after each
// worker ID was recycled. The holders must record their leases in reg.
func Churn(t *testing.T, holders []holder.Holder, reg *registry.Registry, opts ChurnOptions) {
	if opts.Tables <= 0 {
		opts.Tables = 4
	}
	if opts.Rounds <= 0 {
		opts.Rounds = 6
	}
	if opts.WorkerBits <= 0 {
		opts.WorkerBits = 4
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	tr := NewTracker()
	var mu sync.Mutex
	issued := map[int64]string{} // ID -> table
	var sample []int64
	errs := make(chan error, 1000)
	var wg sync.WaitGroup
	for hi, h := range holders {
		for ti := 0; ti < opts.Tables; ti++ {
			table := fmt.Sprintf("table%d", ti)
			wg.Add(1)
			go func() {
				defer wg.Done()
				req := holder.Request{Namespace: Namespace, Table: table, Instance: Identity(hi), WorkerBits: opts.WorkerBits}
				for r := 0; r < opts.Rounds; r++ {
					l, err := h.Acquire(ctx, req)
					if opts.Busy != nil && errors.Is(err, opts.Busy) {
						r--
						select {
						case <-ctx.Done():
							errs <- fmt.Errorf("holder %d %s: gave up waiting for a worker ID: %w", hi, table, err)
							return
						case <-time.After(time.Duration(1+rand.IntN(5)) * time.Millisecond):
						}
						continue
					}
					if err != nil {
						errs <- fmt.Errorf("holder %d %s: Acquire: %w", hi, table, err)
						return
					}
					if err := tr.Add(l); err != nil {
						errs <- err
					}
					gen, err := snowflake.New(ctx, l, snowflake.Settings{Layout: layout(opts.WorkerBits)})
					if errors.Is(err, snowflake.ErrStopped) {
						// The lease was fenced between Acquire and the
						// start (a slow heartbeat under load): correct
						// behaviour; the next round re-acquires.
						t.Logf("holder %d %s: %v", hi, table, err)
						l.Release(ctx, time.Time{})
						continue
					}
					if err != nil {
						errs <- fmt.Errorf("holder %d %s: snowflake.New: %w", hi, table, err)
						l.Release(ctx, time.Time{})
						return
					}
					ids := make([]int64, 0, 300)
					for i := 0; i < 300; i++ {
						id, err := gen.NextID(ctx)
						if errors.Is(err, snowflake.ErrStopped) {
							// Fenced (a slow heartbeat under load: lease
							// lost, or its horizon not moved in time):
							// correct behaviour; the next round re-acquires.
							t.Logf("holder %d %s: %v", hi, table, err)
							break
						}
						if err != nil {
							errs <- fmt.Errorf("holder %d %s: NextID: %w", hi, table, err)
							break
						}
						ids = append(ids, id)
					}
					if err := l.Release(ctx, gen.Stop()); err != nil {
						errs <- fmt.Errorf("holder %d %s: Release: %w", hi, table, err)
					}
					mu.Lock()
					for _, id := range ids {
						if o, dup := issued[id]; dup {
							errs <- fmt.Errorf("ID %d issued twice (%s and %s)", id, o, table)
						}
						issued[id] = table
					}
					if len(ids) > 0 {
						sample = append(sample, ids[0], ids[len(ids)-1], ids[rand.IntN(len(ids))])
					}
					mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	n := 0
	for err := range errs {
		if n++; n <= 20 {
			t.Error(err)
		}
	}
	lay := layout(opts.WorkerBits)
	recycled := map[int64]map[string]bool{}
	for _, id := range sample {
		p := lay.Decompose(id)
		rec, err := reg.Find(context.Background(), Namespace, p.Worker, p.Time)
		if err != nil {
			t.Errorf("Find(%d): %v", id, err)
			continue
		}
		if rec.Table != issued[id] {
			t.Errorf("Find(%d) = table %q, want %q", id, rec.Table, issued[id])
		}
		if recycled[p.Worker] == nil {
			recycled[p.Worker] = map[string]bool{}
		}
		recycled[p.Worker][rec.Table] = true
	}
	multi := 0
	for _, tables := range recycled {
		if len(tables) > 1 {
			multi++
		}
	}
	t.Logf("churn: %d IDs, %d sampled, %d worker IDs served more than one table", len(issued), len(sample), multi)
	if multi == 0 {
		t.Error("no worker ID was recycled from one table to another: the test proved nothing")
	}
}

// layout is Leaf's with the given worker bits.
func layout(workerBits int) snowflake.Layout {
	l := snowflake.Leaf
	l.Name = "custom"
	l.WorkerBits = workerBits
	l.SequenceBits = 22 - workerBits
	return l
}

// ChurnRecorded runs Churn on n holders from newHolder, each recording its
// leases as kind in a worker table of its own test schema on PostgreSQL
// (heartbeat 50ms); busy is the holder's ErrExhausted.
func ChurnRecorded(t *testing.T, n int, kind string, busy error, newHolder func(t *testing.T) holder.Holder) {
	t.Helper()
	db, _ := pgtest.Open(t)
	reg := registry.New(db, registry.Settings{Heartbeat: 50 * time.Millisecond})
	if err := reg.Migrate(context.Background()); err != nil {
		t.Fatal(err)
	}
	holders := make([]holder.Holder, n)
	for i := range holders {
		holders[i] = registry.Recorded(newHolder(t), reg, kind)
	}
	Churn(t, holders, reg, ChurnOptions{Busy: busy})
}
