// Package shop is an example of idsqlgen: idsql.yaml configures three
// tables, and go generate writes idsql_gen.go with their typed IDs
// (OrderID, OrderItemID, UserID). The generated file is committed; the
// drift check of scripts/test fails when it is not what go generate writes.
package shop

//go:generate go tool idsqlgen -config idsql.yaml -pkg shop -out idsql_gen.go
