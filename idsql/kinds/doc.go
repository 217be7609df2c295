// Package kinds is where idsql's segment plug-ins register: segment stores
// by SQL dialect, and key buffers by a segment table's buffer setting
// (worker-ID holders register in holder/holderkind). It works as
// database/sql's driver registry: each implementation registers itself in
// an init function, so a program links only the kinds it imports, and
// package idsql looks them up by name.
//
//	import (
//		"github.com/idsql/idsql/idsql"
//		_ "github.com/idsql/idsql/idsql/segment/mysqlstore" // segment tables on MySQL/MariaDB
//	)
//
// What is registered where:
//
//	store "postgres"     built in (package segment has no driver dependency)
//	store "mysql"        idsql/segment/mysqlstore
//	store "sqlite"       idsql/segment/sqlitestore
//	buffer "redis"       idsql/segment/redisqueue
//
// A name that is not registered is an error that says which import
// registers it; kinds.go is the one place that names idsql's own. The
// package imports idsql/segment, never idsql, so the implementations can
// import it without a cycle.
package kinds
