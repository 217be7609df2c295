package rewrite

import (
	"fmt"
	"strconv"
	"strings"
)

// ValueKind says where a row's value for a column comes from.
type ValueKind uint8

// Kinds of Value.
const (
	ValueArg    ValueKind = iota + 1 // a bind parameter: Value.Arg
	ValueInt                         // an integer literal: Value.Int
	ValueString                      // a string literal: Value.Str
)

// Value is what one VALUES row (or a MySQL SET) gives a column.
type Value struct {
	Kind ValueKind
	Arg  int // ValueArg: the index of the caller's argument, from 0
	Int  int64
	Str  string
}

// shardValues reads, for the INSERT o that a plan of rows rows fills,
// what each row gives column (its table's ShardColumn): a bind parameter
// or a literal (an integer or a plain string). It fails with an *Error
// naming the table when the statement does not set the column, or sets it
// to anything else (an expression, NULL, DEFAULT, a named parameter, a
// string with escapes).
func (ps *parser) shardValues(o *occurrence, rows int, column string) ([]Value, error) {
	r, query := ps.r, ps.q
	end := len(ps.toks)
	depth := 0
	for i := range ps.toks {
		switch {
		case ps.punct(i, '('):
			depth++
		case ps.punct(i, ')'):
			depth--
		case depth == 0 && ps.punct(i, ';'):
			end = min(end, i)
		}
	}
	notSet := func() ([]Value, error) {
		return nil, newError(o.tbl, query, -1, "the statement does not set column "+column+
			", which picks the shard of each row's key; list it in the column list and give each row a value", nil)
	}
	var vals []Value
	j := o.tok
	for j < end && ps.toks[j].start < o.nameEnd {
		j++
	}
	switch {
	case o.setEnd > 0: // MySQL INSERT ... SET col = value, ...
		for j < end && !ps.kw(j, "set") {
			j++
		}
		for j++; j < end; {
			_, col, k, ok := ps.name(j)
			if !ok || !ps.punct(k, '=') {
				break
			}
			v, next, err := ps.value(o, k+1, end, column)
			if err != nil {
				return nil, err
			}
			if r.sameIdent(col, column) {
				vals = append(vals, v)
			}
			if j = next; !ps.punct(j, ',') {
				break
			}
			j++
		}
	case o.ncols > 0:
		idx, n := -1, 0
		next, ok := ps.names(j, end, func(col string) {
			if idx < 0 && r.sameIdent(col, column) {
				idx = n
			}
			n++
		})
		if !ok || idx < 0 {
			return notSet()
		}
		if j = next; ps.kw(j, "overriding") {
			j += 3 // OVERRIDING SYSTEM VALUE
		}
		if !ps.kw(j, "values") && !ps.kw(j, "value") {
			return notSet()
		}
		for j++; j < end; {
			if ps.kw(j, "row") {
				j++
			}
			closeAt, _, ok := ps.group(j, end)
			if !ok {
				break
			}
			v, err := ps.nth(o, j, closeAt, idx, column)
			if err != nil {
				return nil, err
			}
			vals = append(vals, v)
			if j = closeAt + 1; !ps.punct(j, ',') {
				break
			}
			j++
		}
	case o.ncols < 0 && !o.defaultVals:
		return nil, newError(o.tbl, query, -1, "an INSERT without a column list: list the columns, "+column+
			" among them, so that the shard of each row's key can be read from the statement", nil)
	default:
		return notSet()
	}
	if len(vals) != rows {
		if len(vals) == 0 {
			return notSet()
		}
		return nil, newError(o.tbl, query, -1, fmt.Sprintf("found a value of column %s for %d of %d rows", column, len(vals), rows), nil)
	}
	return vals, nil
}

// nth reads the idx-th value of the row group opening at token open and
// closing at closeAt.
func (p *parser) nth(o *occurrence, open, closeAt, idx int, column string) (Value, error) {
	start, n, depth := open+1, 0, 0
	for k := open + 1; k <= closeAt; k++ {
		switch {
		case p.punct(k, '('), p.punct(k, '['):
			depth++
		case depth > 0 && (p.punct(k, ')') || p.punct(k, ']')):
			depth--
		case depth == 0 && (p.punct(k, ',') || k == closeAt):
			if n == idx {
				v, err := p.literal(o, start, k, column)
				return v, err
			}
			n++
			start = k + 1
		}
	}
	return Value{}, newError(o.tbl, p.q, p.toks[open].start, "row has no value for column "+column, nil)
}

// value reads a SET value starting at token j of a statement insertSet
// read (so its nesting balances): it ends at a top-level "," or the clause
// after it (setValueEnd). It returns the token after the value.
func (p *parser) value(o *occurrence, j, end int, column string) (Value, int, error) {
	k, _ := p.setValueEnd(j, end)
	v, err := p.literal(o, j, k, column)
	return v, k, err
}

// literal reads tokens [a, b) as a bind parameter, an integer literal
// (optionally signed) or a plain string literal.
func (p *parser) literal(o *occurrence, a, b int, column string) (Value, error) {
	bad := func(why string) (Value, error) {
		pos := len(p.q)
		if a < len(p.toks) {
			pos = p.toks[a].start
		}
		return Value{}, newError(o.tbl, p.q, pos, "the value of column "+column+" (which picks the shard of the row's key) "+why, nil)
	}
	neg := false
	if b-a == 2 && (p.punct(a, '-') || p.punct(a, '+')) && p.toks[a+1].kind == tNumber {
		neg = p.punct(a, '-')
		a++
	}
	if b-a != 1 {
		return bad("is an expression: pass it as a bind parameter or a literal")
	}
	t := p.toks[a]
	s := p.q[t.start:t.end]
	switch t.kind {
	case tParam:
		switch {
		case s == "?":
			n := 0
			for k := 0; k < a; k++ {
				if p.toks[k].kind == tParam {
					n++
				}
			}
			return Value{Kind: ValueArg, Arg: n}, nil
		case (s[0] == '$' || s[0] == '?') && len(s) > 1:
			if n, err := strconv.Atoi(s[1:]); err == nil && n >= 1 {
				return Value{Kind: ValueArg, Arg: n - 1}, nil
			}
		}
		return bad("is a named parameter " + s + ": use a positional one")
	case tNumber:
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return bad("is not a 64-bit integer literal: " + s)
		}
		if neg {
			v = -v
		}
		return Value{Kind: ValueInt, Int: v}, nil
	case tString:
		q := s[0]
		if (q != '\'' && q != '"') || s[len(s)-1] != q || strings.IndexByte(s, '\\') >= 0 {
			return bad("is a string literal with a prefix, escapes or dollar quotes: pass it as a bind parameter")
		}
		if q == '"' && !p.r.syn.DoubleQuotedStrings {
			return bad("is a quoted identifier, not a value")
		}
		return Value{Kind: ValueString, Str: strings.ReplaceAll(s[1:len(s)-1], string([]byte{q, q}), string(q))}, nil
	}
	return bad("is " + strconv.Quote(s) + ", not a bind parameter or a literal")
}
