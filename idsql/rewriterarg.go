package idsql

import (
	"database/sql/driver"
	"fmt"
	"reflect"
	"strings"
	"time"

	"github.com/idsql/idsql/idsql/internal/rewrite"
)

// rewriterArg refuses to fill a statement whose leading arguments carry a
// query rewriter for the inner driver: pgx.NamedArgs, pgx.StrictNamedArgs
// or any pgx.QueryRewriter passed through pgx's database/sql driver. That
// driver rewrites the statement after idsql has numbered the key's
// parameter, renumbering the caller's placeholders from $1, so the key's
// $n would name one of the caller's values and the row would be written
// with it as its key. Like pgx, it looks only at the leading arguments:
// the first one, and those after pgx's option arguments (QueryExecMode,
// ...). Native pgx code gets named arguments filled through idsql/pgxid.
func rewriterArg(p *rewrite.Plan, args []driver.NamedValue) error {
	if len(args) == 0 {
		return nil
	}
	switch args[0].Value.(type) {
	case nil, int64, float64, bool, []byte, string, time.Time:
		return nil // a driver.Value: no rewriter, and pgx reads no further
	}
	for _, a := range args {
		t := reflect.TypeOf(a.Value)
		if t == nil {
			return nil
		}
		if _, ok := t.MethodByName("RewriteQuery"); ok {
			return fmt.Errorf("idsql: insert into %s: argument %d is a %s, a query rewriter the driver applies after idsql has filled the key "+
				"(it would renumber the placeholders under the key's): use github.com/idsql/idsql/idsql/pgxid for pgx's named arguments, "+
				"or $n placeholders, or sqlx's NamedExec (idsql.DB)", p.Table, a.Ordinal, t)
		}
		if !strings.HasPrefix(t.PkgPath(), "github.com/jackc/pgx/") {
			return nil // not one of pgx's option arguments: pgx reads no further
		}
	}
	return nil
}
