// Package kinds is where idsql's plug-ins register: worker-ID holders by
// holder.kind, segment stores by SQL dialect, and key buffers by a segment
// table's buffer setting. It works as database/sql's driver registry: each
// implementation registers itself in an init function, so a program links
// only the kinds it imports, and package idsql looks them up by name.
//
//	import (
//		"github.com/idsql/idsql/idsql"
//		_ "github.com/idsql/idsql/holder/zookeeper"       // holder.kind: zookeeper
//		_ "github.com/idsql/idsql/idsql/segment/mysqlstore" // segment tables on MySQL/MariaDB
//	)
//
// What is registered where:
//
//	holder "local"       holder/local (idsql links it: it is the default)
//	holder "postgres"    holder/postgres
//	holder "mysql"       holder/mysql (holder/postgres too, deprecated)
//	holder "zookeeper"   holder/zookeeper
//	holder "etcd"        holder/etcd
//	store "postgres"     built in (package segment has no driver dependency)
//	store "mysql"        idsql/segment/mysqlstore
//	store "sqlite"       idsql/segment/sqlitestore
//	buffer "redis"       idsql/segment/redisqueue
//
// A name that is not registered is an error that says which import
// registers it; the table above, in kinds.go, is the one place that names
// idsql's own kinds. Everything else about a holder kind is in its
// registration (Holder): its modes, the configuration keys only it reads
// (Keys; keys of its own reach it in HolderSettings.Options) and their
// checks (Check), and the dialect of the worker table it keeps its leases
// in (WorkerTable). A new kind, of idsql or of another module, is its own
// package and its registration, with no edit to package idsql or this
// one. The package imports holder, holder/registry and
// idsql/segment, never idsql, so the implementations can import it
// without a cycle.
package kinds
