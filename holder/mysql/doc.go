// Package mysql is the old import path of holder.kind "mysql", kept for
// one release: importing it links holder/workertable, which registers the
// worker-table holder as kinds "postgres" and "mysql".
//
// Deprecated: import github.com/idsql/idsql/holder/workertable.
package mysql

import _ "github.com/idsql/idsql/holder/workertable" // registers kind mysql
