// Package orm tests idsql under real ORMs (gorm and bun) on real PostgreSQL
// and MariaDB. It is a module of its own so that the ORMs stay out of the
// library's go.mod.
package orm
