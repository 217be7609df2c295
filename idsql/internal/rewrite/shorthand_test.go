package rewrite

import "database/sql/driver"

// Need returns the number of keys an execution with args takes: one per
// row whose key is not given, or given as a bind value that is 0 or NULL.
// A shorthand of the tests for Decide(args, nil).Need().
func (p *Plan) Need(args []driver.NamedValue) int {
	return p.Decide(args, nil).Need()
}

// Args is ArgsFor for the rows Decide chooses with args, boxing keys as Go
// does: a shorthand of the tests.
func (p *Plan) Args(dst, args []driver.NamedValue, ids []int64) []driver.NamedValue {
	return p.ArgsFor(dst, args, ids, p.Decide(args, nil), nil)
}
