package idsql_test

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/idsql/idsql/holder"
	"github.com/idsql/idsql/idsql/keyset"
	"github.com/idsql/idsql/idsql/snowflake"
)

// leaseLog grants worker IDs 1, 2, 3, ... and keeps the leases so a test can
// end them.
type leaseLog struct {
	mu      sync.Mutex
	leases  []*holder.StaticLease
	endNext bool // hand out leases that are already lost
}

func (l *leaseLog) Acquire(_ context.Context, req holder.Request) (holder.Lease, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	lease := holder.NewStaticLease(int64(len(l.leases)+1), time.Time{})
	if l.endNext {
		lease.End(holder.ErrLeaseLost)
	}
	l.leases = append(l.leases, lease)
	return lease, nil
}

func TestKeysReacquireAfterLeaseLost(t *testing.T) {
	leases := &leaseLog{}
	keys, err := keyset.NewKeys(testConfig(), keyset.KeysOptions{Holder: leases})
	if err != nil {
		t.Fatal(err)
	}
	defer keys.Close()
	ctx := context.Background()
	before, err := keys.NextID(ctx, "orders")
	if err != nil {
		t.Fatal(err)
	}
	leases.leases[0].End(holder.ErrLeaseLost)
	after, err := keys.NextIDs(ctx, "orders", 3)
	if err != nil {
		t.Fatalf("after the lease was lost: %v", err)
	}
	if len(leases.leases) != 2 {
		t.Fatalf("%d leases acquired, want 2", len(leases.leases))
	}
	for _, id := range after {
		if w := snowflake.Leaf.Decompose(id).Worker; w != 2 || id == before {
			t.Fatalf("key %d from worker %d after the loss, want a new key from worker 2", id, w)
		}
	}
	// When the new lease is lost too, the error is reported, not retried
	// forever.
	leases.mu.Lock()
	leases.endNext = true
	leases.mu.Unlock()
	leases.leases[1].End(holder.ErrLeaseLost)
	if _, err := keys.NextID(ctx, "orders"); !errors.Is(err, snowflake.ErrStopped) || !errors.Is(err, holder.ErrLeaseLost) {
		t.Fatalf("NextID with every lease lost = %v, want ErrStopped wrapping ErrLeaseLost", err)
	}
	if len(leases.leases) != 3 {
		t.Fatalf("%d leases acquired, want 3 (one retry)", len(leases.leases))
	}
}

func TestKeysClosed(t *testing.T) {
	keys, err := keyset.NewKeys(testConfig(), keyset.KeysOptions{Holder: tableWorkers(testConfig(), 1)})
	if err != nil {
		t.Fatal(err)
	}
	keys.Close()
	if _, err := keys.NextID(context.Background(), "orders"); !errors.Is(err, keyset.ErrClosed) {
		t.Fatalf("NextID after Close = %v", err)
	}
}

// tableWorkers gives each table of cfg a worker ID of its own, from base up:
// two tables on one worker ID would issue equal IDs.
func tableWorkers(cfg *keyset.Config, base int64) holder.Holder {
	m := map[string]int64{}
	for _, t := range cfg.TableNames() {
		m[t] = tableWorker(cfg, base, t)
	}
	return holder.Static(m)
}

// tableWorker is the worker ID tableWorkers gives table.
func tableWorker(cfg *keyset.Config, base int64, table string) int64 {
	return base + int64(slices.Index(cfg.TableNames(), table))
}

func TestBatchSizeChecked(t *testing.T) {
	keys, err := keyset.NewKeys(testConfig(), keyset.KeysOptions{Holder: tableWorkers(testConfig(), 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer keys.Close()
	ctx := context.Background()
	for _, n := range []int{-1, keyset.MaxBatch + 1, 1e9} {
		ids, err := keys.NextIDs(ctx, "orders", n)
		if err == nil || !strings.Contains(err.Error(), "orders") || !strings.Contains(err.Error(), strconv.Itoa(keyset.MaxBatch)) {
			t.Errorf("NextIDs(%d) = %d IDs, %v; want an error naming the table and the limit", n, len(ids), err)
		}
	}
	ids, err := keys.NextIDs(ctx, "orders", keyset.MaxBatch)
	if err != nil || len(ids) != keyset.MaxBatch {
		t.Fatalf("NextIDs(MaxBatch) = %d IDs, %v", len(ids), err)
	}
}

// leaseKeeper wraps a holder and remembers every lease it granted.
type leaseKeeper struct {
	holder.Holder
	mu     sync.Mutex
	leases []holder.Lease
}

func (k *leaseKeeper) Acquire(ctx context.Context, req holder.Request) (holder.Lease, error) {
	l, err := k.Holder.Acquire(ctx, req)
	if err == nil {
		k.mu.Lock()
		k.leases = append(k.leases, l)
		k.mu.Unlock()
	}
	return l, err
}

// When a table's lease is lost, Keys releases it before acquiring a new
// one: a holder that grants each worker ID to one live lease (as ZooKeeper's
// recycle claims do) then hands the same worker ID back instead of leaking
// it, and keys keep coming.
func TestLostLeaseReleasedBeforeNewOne(t *testing.T) {
	cfg := testConfig()
	hk := &leaseKeeper{Holder: tableWorkers(cfg, 1)}
	keys, err := keyset.NewKeys(cfg, keyset.KeysOptions{Holder: hk})
	if err != nil {
		t.Fatal(err)
	}
	defer keys.Close()
	ctx := context.Background()
	for round := 0; round < 3; round++ {
		id, err := keys.NextID(ctx, "orders")
		if err != nil {
			t.Fatalf("round %d: NextID = %v", round, err)
		}
		if w, want := snowflake.Leaf.Decompose(id).Worker, tableWorker(cfg, 1, "orders"); w != want {
			t.Fatalf("round %d: worker %d, want the table's %d", round, w, want)
		}
		hk.mu.Lock()
		last := hk.leases[len(hk.leases)-1]
		hk.mu.Unlock()
		last.(interface{ End(error) bool }).End(holder.ErrLeaseLost)
	}
	hk.mu.Lock()
	defer hk.mu.Unlock()
	if len(hk.leases) != 3 {
		t.Fatalf("%d leases acquired for 3 rounds, want 3", len(hk.leases))
	}
	for i, l := range hk.leases[:2] {
		if !errors.Is(l.Err(), holder.ErrLeaseLost) {
			t.Errorf("lease %d: Err = %v", i, l.Err())
		}
	}
}
