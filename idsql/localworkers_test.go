package idsql_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/idsql/idsql/holder"
	"github.com/idsql/idsql/idsql/keyset"
)

// A local holder without a worker ID for a snowflake table of this process
// is refused when the keys are made, with the map to add, not at the
// table's first INSERT.
func TestLocalHolderWithoutWorkersRefusedEarly(t *testing.T) {
	inst := holder.Instance{ID: "web-1"}
	for _, tc := range []struct {
		name, yaml string
		want       []string // in the error; none: accepted
	}{
		{"no workers map", "holder: {kind: local}\n",
			[]string{"holder.workers", "has no workers map", "events, orders", `workers: {"events@web-1": 1, "orders@web-1": 2}`, "holder.instance"}},
		{"default kind", "",
			[]string{"holder.workers", "has no workers map", `"events@web-1": 1`}},
		{"another process's entries", "holder: {kind: local, workers: {\"orders@web-2\": 1, \"events@web-2\": 2}}\n",
			[]string{"has no entry for this process", `workers: {"events@web-1": 3, "orders@web-1": 4}`}},
		{"one table missing", "holder: {kind: local, workers: {\"orders@web-1\": 1}}\n",
			[]string{"snowflake table events would", `workers: {"events@web-1": 2}`}},
		{"per table", "holder: {kind: local, workers: {\"orders@web-1\": 1, \"events@web-1\": 2}}\n", nil},
		{"per process", "holder: {kind: local, workers: {\"web-1\": 1}}\n", nil},
		{"another holder", "holder: {kind: zookeeper, servers: [127.0.0.1:2181]}\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "idsql.yaml")
			y := "namespace: shop\n" + tc.yaml + "tables:\n  orders: {strategy: snowflake}\n  events: {strategy: snowflake}\n  users: {strategy: segment}\n"
			if err := os.WriteFile(path, []byte(y), 0o644); err != nil {
				t.Fatal(err)
			}
			cfg, err := keyset.Load(path)
			if err != nil {
				t.Fatal(err)
			}
			keys, err := keyset.NewKeys(cfg, keyset.KeysOptions{Instance: inst})
			if err == nil {
				keys.Close()
			}
			if tc.want == nil {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var fe *keyset.FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("NewKeys: %v, want a *FieldError", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
			// A holder given in code needs no map.
			keys, err = keyset.NewKeys(cfg, keyset.KeysOptions{Instance: inst, Holder: holder.Fixed(1)})
			if err != nil {
				t.Fatalf("with a holder given in code: %v", err)
			}
			keys.Close()
		})
	}
}
