package segment_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/idsql/idsql/idsql/segment"
	"github.com/idsql/idsql/idsql/segment/sqlitestore"
)

// A generator over the embedded SQLite store: create a key, take IDs one at
// a time and in a batch, then ask which key an ID belongs to. With
// PostgreSQL, use segment.NewPostgresStore(db) instead of sqlitestore.Open.
func Example() {
	ctx := context.Background()
	dir, _ := os.MkdirTemp("", "segment-example")
	defer os.RemoveAll(dir)

	store, err := sqlitestore.Open(ctx, filepath.Join(dir, "ids.db")) // runs Migrate
	if err != nil {
		fmt.Println(err)
		return
	}
	defer store.DB().Close()
	if err := store.CreateKey(ctx, segment.KeySpec{Key: "orders", Step: 1000}); err != nil {
		fmt.Println(err)
		return
	}

	gen, err := segment.New(ctx, store, segment.Settings{Instance: "example"})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer gen.Close()

	orders, err := gen.Key(ctx, "orders") // keep the handle: no lookup per ID
	if err != nil {
		fmt.Println(err)
		return
	}
	for range 3 {
		id, _ := orders.Next(ctx)
		fmt.Println(id)
	}
	batch, _ := orders.NextIDs(ctx, 3)
	fmt.Println(batch)

	_, err = gen.NextID(ctx, "invoices")
	fmt.Println(err)

	found, _ := store.Lookup(ctx, 5)
	fmt.Println(found.Keys(), found.Ranges[0].First, found.Ranges[0].Last, found.Ranges[0].Instance)
	// Output:
	// 1
	// 2
	// 3
	// [4 5 6]
	// segment: key "invoices": find key: segment: unknown key
	// [orders] 1 1000 example
}
