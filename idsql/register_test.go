package idsql_test

import (
	"strings"
	"testing"

	"github.com/idsql/idsql/idsql"
	"github.com/idsql/idsql/idsql/keyset"
)

// Register names what it could not do: an inner driver nobody registered,
// and a name that is taken (database/sql itself would panic).
func TestRegisterErrors(t *testing.T) {
	cfg := &keyset.Config{Namespace: "reg", Tables: map[string]keyset.TableConfig{"t": {Strategy: keyset.Snowflake}}}
	if err := idsql.Register("idsql-register-test", "sqlite", cfg, idsql.Options{}); err != nil {
		t.Fatalf("first Register: %v", err)
	}
	err := idsql.Register("idsql-register-test", "sqlite", cfg, idsql.Options{})
	if err == nil || !strings.Contains(err.Error(), `register "idsql-register-test"`) || !strings.Contains(err.Error(), "twice") {
		t.Fatalf("Register of a taken name: %v, want an error naming it", err)
	}
	err = idsql.Register("idsql-register-other", "no-such-driver", cfg, idsql.Options{})
	if err == nil || !strings.Contains(err.Error(), `"no-such-driver" is not registered`) {
		t.Fatalf("Register over an unknown driver: %v, want an error naming it", err)
	}
}
