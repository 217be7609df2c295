package rewrite

import (
	"context"
	"strconv"
	"strings"
)

// parser reads the tokens of one query.
type parser struct {
	r    *Rewriter
	q    string
	toks []token
}

func (p *parser) text(i int) string { return p.q[p.toks[i].start:p.toks[i].end] }

// kw reports whether token i is the unquoted keyword w (lower case).
func (p *parser) kw(i int, w string) bool {
	return i >= 0 && i < len(p.toks) && p.toks[i].kind == tIdent && foldEq(p.text(i), w)
}

// punct reports whether token i is the single byte c.
func (p *parser) punct(i int, c byte) bool {
	return i >= 0 && i < len(p.toks) && p.toks[i].kind == tPunct && p.q[p.toks[i].start] == c
}

// ident returns the name token i stands for: folded to lower case when
// unquoted (PostgreSQL), unquoted and unescaped when quoted.
func (p *parser) ident(i int) (string, bool) {
	if i >= len(p.toks) {
		return "", false
	}
	t := p.toks[i]
	s := p.q[t.start:t.end]
	switch t.kind {
	case tIdent:
		if p.r.syn.FoldUnquoted {
			return asciiLower(s), true // as PostgreSQL folds in multi-byte encodings
		}
		return s, true
	case tQIdent:
		open := s[0]
		body := s[1 : len(s)-1]
		switch open {
		case '"':
			return strings.ReplaceAll(body, `""`, `"`), true
		case '`':
			return strings.ReplaceAll(body, "``", "`"), true
		default: // [name]
			return body, true
		}
	}
	return "", false
}

// sameIdent compares a name read from the statement with a configured one.
func (r *Rewriter) sameIdent(stmt, cfg string) bool {
	if !r.syn.FoldUnquoted {
		return strings.EqualFold(stmt, cfg)
	}
	return stmt == cfg
}

// match returns the configured table a statement's name designates.
func (r *Rewriter) match(schema, name string) *Table {
	for i := range r.tables {
		t := &r.tables[i]
		if !r.sameIdent(name, t.Name) {
			continue
		}
		if schema == "" || t.Schema == "" || r.sameIdent(schema, t.Schema) {
			return t
		}
	}
	return nil
}

// row is one VALUES row: where its key value goes (after its last value, or
// after its "(" when it is empty), its number of values, and the tokens of
// its "(" and ")".
type row struct {
	lastEnd     int
	width       int
	open, close int
}

// occurrence is one INSERT (or MERGE) into a configured table.
type occurrence struct {
	tbl       *Table
	schema    string // as written in the statement ("" when unqualified)
	name      string
	tok       int // token index of INSERT / MERGE
	keyListed bool
	keyIdx    int // the key's index in the column list, when keyListed there
	// setKey is the span of tokens of the value a MySQL INSERT ... SET
	// assigns to the key (keyListed, setKey[1] > 0).
	setKey [2]int

	// Set when the statement parsed completely as
	// INSERT INTO t [AS a] [(cols)] [OVERRIDING SYSTEM VALUE]
	//   {VALUES (...), ... | DEFAULT VALUES} [ON ... | RETURNING ...],
	// or one of the MySQL forms (see insert).
	parsed     bool
	failPos    int
	failReason string
	// badForm: failReason says the statement is malformed (and how to
	// mend it), so the key column's default is no help to offer.
	badForm bool

	nameEnd      int // offset after the table name (or alias, or PARTITION list)
	ncols        int // -1: no column list
	colsEnd      int // offset after the last listed column (after "(" when none)
	defStart     int // DEFAULT VALUES span, when defaultVals
	defEnd       int
	defaultVals  bool
	rows         []row
	setEnd       int  // MySQL INSERT ... SET: offset after the last assignment; 0 otherwise
	nset         int  // number of SET assignments
	aliasEnd     int  // MySQL row alias: offset after its last column alias; 0 when none
	primary      bool // the top-level statement of a single-statement query
	inMultiQuery bool
	// upsert: ON CONFLICT ... DO UPDATE or ON DUPLICATE KEY UPDATE, so a
	// row may update an existing one instead of being inserted.
	upsert bool
}

func (o *occurrence) fail(p *parser, i int, reason string) *occurrence {
	o.parsed = false
	o.failReason = reason
	o.badForm = false
	if i < len(p.toks) {
		o.failPos = p.toks[i].start
	} else {
		o.failPos = len(p.q)
	}
	return o
}

// malformed fails o at token i for a statement no database accepts: reason
// says what is wrong with it and how to mend it.
func (o *occurrence) malformed(p *parser, i int, reason string) *occurrence {
	o.fail(p, i, "malformed statement: "+reason)
	o.badForm = true
	return o
}

// count writes n things, the noun in the plural unless n is 1.
func count(n int, noun string) string {
	if n != 1 {
		noun += "s"
	}
	return strconv.Itoa(n) + " " + noun
}

// name reads a possibly qualified name at i: [catalog.][schema.]name.
func (p *parser) name(i int) (schema, name string, next int, ok bool) {
	var parts [3]string
	n := 0
	for {
		s, ok := p.ident(i)
		if !ok || n == len(parts) {
			return "", "", i, false
		}
		parts[n] = s
		n++
		i++
		if !p.punct(i, '.') {
			break
		}
		i++
	}
	if n == 1 {
		return "", parts[0], i, true
	}
	return parts[n-2], parts[n-1], i, true
}

// subqueryStart lists words that open a query where a column list could be.
var subqueryStart = []string{"select", "values", "with", "table"}

// insert reads the INSERT at token i, ending at token end (exclusive), and
// returns nil unless it inserts into a configured table.
//
// The forms read, beyond PostgreSQL's, are for SQLite
//
//	INSERT OR {ABORT|FAIL|IGNORE|REPLACE|ROLLBACK} INTO ...; REPLACE INTO ...
//
// and for MySQL
//
//	{INSERT [LOW_PRIORITY|DELAYED|HIGH_PRIORITY] [IGNORE] | REPLACE [LOW_PRIORITY|DELAYED]}
//	    [INTO] t [PARTITION (p, ...)]
//	    { [(cols)] {VALUES|VALUE} {(...)|ROW(...)} [, ...] | SET col = expr [, ...] }
//	    [AS alias [(col, ...)]] [ON DUPLICATE KEY UPDATE ... | RETURNING ...]
func (p *parser) insert(i, end int, stmtStart bool) *occurrence {
	o := p.insertForm(i, end, stmtStart)
	if o != nil && o.keyListed && o.failReason != "" {
		// The statement gives the key itself: a form not read further
		// (INSERT ... SELECT, say) passes unchanged, as it always did.
		o.parsed, o.failReason, o.badForm, o.rows, o.setKey = false, "", false, nil, [2]int{}
	}
	return o
}

// insertForm is insert, reading on past a listed key column unless the
// table keeps zero keys.
func (p *parser) insertForm(i, end int, stmtStart bool) *occurrence {
	syn := &p.r.syn
	mysql := syn.MySQLInsert
	j := i + 1
	if syn.InsertModifiers {
		for {
			switch {
			case p.kw(j, "low_priority"), p.kw(j, "delayed"), p.kw(j, "high_priority"), p.kw(j, "ignore"):
				j++
				continue
			case syn.InsertOr && p.kw(i, "insert") && p.kw(j, "or") && j+1 < end && p.toks[j+1].kind == tIdent:
				j += 2
				continue
			}
			break
		}
	}
	if p.kw(j, "into") {
		j++
	} else if !syn.InsertModifiers || !stmtStart {
		return nil
	}
	schema, name, j, ok := p.name(j)
	if !ok || j > end {
		return nil
	}
	tbl := p.r.match(schema, name)
	if tbl == nil {
		return nil
	}
	o := &occurrence{tbl: tbl, schema: schema, name: name, tok: i, ncols: -1, parsed: true, keyIdx: -1}
	key := tbl.key()
	o.nameEnd = p.toks[j-1].end
	if p.kw(j, "as") {
		if mysql {
			return o.fail(p, j, "a table alias is not MySQL INSERT syntax")
		}
		if _, ok := p.ident(j + 1); !ok || j+1 >= end {
			return o.fail(p, j, "alias not understood")
		}
		j += 2
		o.nameEnd = p.toks[j-1].end
	}
	if mysql && p.kw(j, "partition") {
		k, ok := p.names(j+1, end, nil)
		if !ok {
			return o.fail(p, j, "PARTITION list not understood")
		}
		j = k
		o.nameEnd = p.toks[j-1].end
	}
	j, stop := p.insertColumns(o, j, end)
	if stop {
		return o
	}
	width := -1 // values per row, or SET assignments: what a row alias's columns name
	switch {
	case p.kw(j, "default") && p.kw(j+1, "values"):
		if mysql {
			return o.fail(p, j, "DEFAULT VALUES is not MySQL syntax (VALUES () inserts a row of defaults)")
		}
		if o.ncols >= 0 {
			return o.fail(p, j, "DEFAULT VALUES after a column list")
		}
		o.defaultVals = true
		o.defStart, o.defEnd = p.toks[j].start, p.toks[j+1].end
		j += 2
	case p.kw(j, "values"), mysql && p.kw(j, "value"):
		if j, stop = p.insertValues(o, j, end); stop {
			return o
		}
		width = o.rows[0].width
	case mysql && p.kw(j, "set"):
		if j, stop = p.insertSet(o, j, end); stop {
			return o
		}
		width = o.nset
	default:
		return o.fail(p, j, "INSERT ... SELECT (or another query form) cannot be filled")
	}
	if mysql && p.kw(j, "as") {
		// A row alias: AS new [(c1, ...)], its columns naming the
		// inserted columns in order; the key needs a name among them.
		if _, ok := p.ident(j + 1); !ok || j+1 >= end {
			return o.fail(p, j, "row alias not understood")
		}
		j += 2
		if p.punct(j, '(') {
			clash, n := false, 0
			next, ok := p.names(j, end, func(a string) {
				clash = clash || p.r.sameIdent(a, key)
				n++
			})
			switch {
			case !ok:
				return o.fail(p, next, "row alias column list not understood")
			case n != width:
				return o.fail(p, j, "row alias names "+strconv.Itoa(n)+" columns for "+strconv.Itoa(width)+" values")
			case clash && !o.keyListed:
				return o.fail(p, j, "row alias column list already names "+key+", which the generated key needs")
			}
			o.aliasEnd = p.toks[next-2].end
			j = next
		}
	}
	if j < end && !p.kw(j, "on") && !p.kw(j, "returning") {
		after := "VALUES"
		if o.setEnd > 0 {
			after = "SET"
		}
		return o.fail(p, j, "unexpected "+strconv.Quote(p.text(j))+" after "+after)
	}
	o.upsert = p.kw(j, "on") && p.mayUpdate(j, end)
	return o
}

// insertColumns reads o's column list, and PostgreSQL's OVERRIDING SYSTEM
// VALUE, from token j: the token after them, or stop when insertForm ends
// with o (failed, or a listed key of a table that keeps zero keys).
func (p *parser) insertColumns(o *occurrence, j, end int) (next int, stop bool) {
	mysql := p.r.syn.MySQLInsert
	key := o.tbl.key()
	if p.punct(j, '(') {
		k := j + 1
		for _, w := range subqueryStart {
			if p.kw(k, w) {
				o.fail(p, k, "INSERT from a parenthesised query cannot be filled")
				return j, true
			}
		}
		if p.punct(k, ')') {
			if !mysql {
				o.fail(p, k, "empty column list")
				return j, true
			}
			// MySQL: () VALUES () inserts a row of defaults.
			o.ncols = 0
			o.colsEnd = p.toks[j].end
			j = k + 1
		} else {
			next, ok := p.names(j, end, func(col string) {
				if p.r.sameIdent(col, key) && !o.keyListed {
					o.keyListed = true
					o.keyIdx = o.ncols + 1 // ncols counts from -1
				}
				o.ncols++
			})
			if !ok {
				o.fail(p, next, "column list not understood")
				return j, true
			}
			o.ncols++ // from -1
			o.colsEnd = p.toks[next-2].end
			j = next
			if o.keyListed && o.tbl.KeepZero {
				return j, true
			}
		}
	}
	if !mysql && p.kw(j, "overriding") {
		if !p.kw(j+1, "system") || !p.kw(j+2, "value") {
			o.fail(p, j, "OVERRIDING USER VALUE would discard the generated key")
			return j, true
		}
		j += 3
	}
	return j, false
}

// insertValues reads the rows of VALUES (MySQL: VALUE, ROW(...)) from
// token j, just past the keyword: the token after them, or stop when o
// failed.
func (p *parser) insertValues(o *occurrence, j, end int) (next int, stop bool) {
	mysql := p.r.syn.MySQLInsert
	j++
	// MySQL: VALUES ROW(...), ROW(...), all rows alike.
	rowWord := mysql && p.kw(j, "row")
	for {
		if mysql && p.kw(j, "row") != rowWord {
			o.fail(p, j, "VALUES mixes ROW(...) and (...) rows")
			return j, true
		}
		if rowWord {
			j++
		}
		if !p.punct(j, '(') || j >= end {
			o.fail(p, j, "VALUES row not understood")
			return j, true
		}
		k, n, ok := p.group(j, end)
		if !ok {
			o.fail(p, j, "unbalanced parentheses or brackets in VALUES")
			return j, true
		}
		if n == 0 && !mysql {
			o.fail(p, j, "empty VALUES row")
			return j, true
		}
		switch row := strconv.Itoa(len(o.rows) + 1); {
		case o.ncols >= 0 && n != o.ncols:
			o.malformed(p, j, "VALUES row "+row+" has "+count(n, "value")+" for "+count(o.ncols, "listed column")+
				"; give each row one value per listed column")
			return j, true
		case o.ncols < 0 && len(o.rows) > 0 && n != o.rows[0].width:
			o.malformed(p, j, "VALUES row "+row+" has "+count(n, "value")+" where row 1 has "+strconv.Itoa(o.rows[0].width)+
				"; give each row as many values as the first")
			return j, true
		}
		o.rows = append(o.rows, row{lastEnd: p.toks[k-1].end, width: n, open: j, close: k})
		j = k + 1
		if p.punct(j, ',') {
			j++
			continue
		}
		break
	}
	return j, false
}

// insertSet reads MySQL's SET assignments from token j, at SET: the token
// after them, or stop when insertForm ends with o (failed, or a key of a
// table that keeps zero keys).
func (p *parser) insertSet(o *occurrence, j, end int) (next int, stop bool) {
	key := o.tbl.key()
	if o.ncols >= 0 {
		o.fail(p, j, "SET after a column list")
		return j, true
	}
	j++
	for {
		_, col, k, ok := p.name(j)
		if !ok || k >= end || !p.punct(k, '=') {
			o.fail(p, j, "SET assignment not understood")
			return j, true
		}
		isKey := p.r.sameIdent(col, key) && !o.keyListed
		if isKey {
			o.keyListed = true
			if o.tbl.KeepZero {
				return j, true
			}
		}
		first := k + 1
		k, depth := p.setValueEnd(first, end)
		if depth < 0 {
			o.fail(p, k, "unbalanced parentheses in SET")
			return j, true
		}
		if k == first || depth != 0 {
			o.fail(p, first, "SET value not understood")
			return j, true
		}
		if isKey {
			o.setKey = [2]int{first, k}
		}
		o.setEnd = p.toks[k-1].end
		o.nset++
		j = k
		if p.punct(j, ',') {
			j++
			continue
		}
		break
	}
	return j, false
}

// setValueEnd finds the end of a SET value starting at token j: the
// top-level "," or AS, ON or RETURNING after it, or end. depth is the
// nesting of parentheses and brackets there, negative at a closing one
// that opened nothing (k is then that token).
func (p *parser) setValueEnd(j, end int) (k, depth int) {
	for k = j; k < end; k++ {
		switch {
		case p.punct(k, '('), p.punct(k, '['):
			depth++
		case p.punct(k, ')'), p.punct(k, ']'):
			if depth--; depth < 0 {
				return k, depth
			}
		case depth == 0 && (p.punct(k, ',') || p.kw(k, "as") || p.kw(k, "on") || p.kw(k, "returning")):
			return k, 0
		}
	}
	return k, depth
}

// mayUpdate reports whether the ON clauses at tokens j..end of an INSERT
// may update an existing row instead of inserting one: ON CONFLICT ... DO
// UPDATE (PostgreSQL, SQLite) or ON DUPLICATE KEY UPDATE (MySQL).
func (p *parser) mayUpdate(j, end int) bool {
	for k := j; k+1 < end; k++ {
		if p.kw(k, "do") && p.kw(k+1, "update") || p.kw(k, "duplicate") && p.kw(k+1, "key") {
			return true
		}
	}
	return false
}

// names reads a parenthesised list of names opening at token j, calling
// each (when not nil) with every name, and returns the token after ")". When
// ok is false, next is the token where reading stopped.
func (p *parser) names(j, end int, each func(string)) (next int, ok bool) {
	if !p.punct(j, '(') {
		return j, false
	}
	k := j + 1
	for {
		s, ok := p.ident(k)
		if !ok || k >= end {
			return k, false
		}
		if each != nil {
			each(s)
		}
		k++
		if p.punct(k, ',') {
			k++
			continue
		}
		if p.punct(k, ')') && k < end {
			return k + 1, true
		}
		return k, false
	}
}

// group reads the group that the "(" or "[" at token j opens, in which
// parentheses and brackets nest, and returns the index of its closing token
// and its number of values: the commas at its top level plus one, or 0 when
// it is empty. ok is false when the group does not close properly before
// end.
func (p *parser) group(j, end int) (closeAt, n int, ok bool) {
	var buf [16]byte
	open := buf[:0]
	n = 1
	for k := j; k < end; k++ {
		if p.toks[k].kind != tPunct {
			continue
		}
		switch c := p.q[p.toks[k].start]; c {
		case '(', '[':
			open = append(open, c)
		case ')', ']':
			want := byte('(')
			if c == ']' {
				want = '['
			}
			if len(open) == 0 || open[len(open)-1] != want {
				return k, 0, false
			}
			open = open[:len(open)-1]
			if len(open) == 0 {
				if k == j+1 {
					n = 0
				}
				return k, n, true
			}
		case ',':
			if len(open) == 1 {
				n++
			}
		}
	}
	return end, 0, false
}

// merge reads MERGE INTO t at token i: an occurrence when t is configured and
// one of its INSERT actions does not list the key column.
func (p *parser) merge(i, end int) *occurrence {
	if !p.kw(i+1, "into") {
		return nil
	}
	schema, name, _, ok := p.name(i + 2)
	if !ok {
		return nil
	}
	tbl := p.r.match(schema, name)
	if tbl == nil {
		return nil
	}
	o := &occurrence{tbl: tbl, schema: schema, name: name, tok: i, ncols: -1}
	for k := i + 3; k < end; k++ {
		if !p.kw(k, "insert") {
			continue
		}
		listed := false
		if p.punct(k+1, '(') {
			for c := k + 2; c < end && !p.punct(c, ')'); c++ {
				if s, ok := p.ident(c); ok && p.r.sameIdent(s, tbl.key()) {
					listed = true
				}
			}
		}
		if !listed {
			return o.fail(p, k, "MERGE ... INSERT cannot be filled")
		}
	}
	return nil
}

// analyze plans a query the cache does not know. keep reports whether the
// result may be cached (it may not when the catalog failed).
func (r *Rewriter) analyze(ctx context.Context, q string, cat Catalog) (plan *Plan, keep bool, err error) {
	lx := lex(q, r.syn)
	if lx.bad >= 0 {
		// The text cannot be read with certainty: every configured table
		// it may mention is touched.
		var occs []*occurrence
		for i := range r.tables {
			if containsFold(q, r.tables[i].Name) {
				occs = append(occs, &occurrence{tbl: &r.tables[i], failPos: lx.bad, failReason: lx.why + " makes the statement ambiguous"})
			}
		}
		return r.unfillable(ctx, q, cat, occs)
	}
	p := &parser{r: r, q: q, toks: lx.toks}

	// Statements, split at top-level semicolons.
	type span struct{ start, end int }
	var stmts []span
	depth, start := 0, 0
	for i := range p.toks {
		switch {
		case p.punct(i, '('):
			depth++
		case p.punct(i, ')'):
			if depth > 0 {
				depth--
			}
		case p.punct(i, ';') && depth == 0:
			if i > start {
				stmts = append(stmts, span{start, i})
			}
			start = i + 1
		}
	}
	if len(p.toks) > start {
		stmts = append(stmts, span{start, len(p.toks)})
	}

	var occs []*occurrence
	for _, s := range stmts {
		if p.ddl(s.start) {
			// DDL runs no INSERT now: CREATE RULE ... DO ALSO INSERT,
			// CREATE TRIGGER ... INSERT, a routine's body pass unchanged.
			continue
		}
		primary := -1
		switch {
		case p.kw(s.start, "insert"), r.syn.Replace && p.kw(s.start, "replace"):
			primary = s.start
		case p.kw(s.start, "with"):
			d := 0
		scan:
			for k := s.start + 1; k < s.end; k++ {
				switch {
				case p.punct(k, '('):
					d++
				case p.punct(k, ')'):
					d--
				case d == 0 && p.kw(k, "insert"):
					primary = k
					break scan
				case d == 0 && (p.kw(k, "select") || p.kw(k, "update") || p.kw(k, "delete") ||
					p.kw(k, "merge") || p.kw(k, "values") || p.kw(k, "table")):
					break scan
				}
			}
		}
		for k := s.start; k < s.end; k++ {
			var o *occurrence
			switch {
			case p.kw(k, "insert"), r.syn.Replace && k == s.start && p.kw(k, "replace"):
				o = p.insert(k, s.end, k == s.start)
			case p.kw(k, "merge"):
				o = p.merge(k, s.end)
			}
			if o == nil {
				continue
			}
			o.primary = k == primary && len(stmts) == 1
			o.inMultiQuery = len(stmts) > 1
			occs = append(occs, o)
		}
	}

	var fill *occurrence
	var bad []*occurrence
	for _, o := range occs {
		switch {
		case o.keyListed && o.failReason == "" && (!o.parsed || o.tbl.KeepZero || o.inMultiQuery || !o.primary):
			continue // the caller gives the key: unchanged
		case !o.parsed:
			bad = append(bad, o)
		case o.inMultiQuery:
			o.failPos, o.failReason = p.toks[o.tok].start, "an INSERT in a string of several statements cannot be filled"
			bad = append(bad, o)
		case !o.primary:
			o.failPos, o.failReason = p.toks[o.tok].start, "an INSERT that is not the statement itself (in WITH, EXPLAIN, PREPARE, ...) cannot be filled"
			bad = append(bad, o)
		default:
			fill = o
		}
	}
	if len(bad) > 0 {
		// The others pass unchanged when their key columns have defaults;
		// the top-level INSERT is filled all the same.
		plan, keep, err := r.unfillable(ctx, q, cat, bad)
		if err != nil || fill == nil {
			return plan, keep, err
		}
	}
	if fill == nil {
		return nil, true, nil
	}
	plan, keep, err = r.build(ctx, p, fill, cat)
	if plan != nil && fill.tbl.ShardColumn != "" {
		if plan.Shards, err = p.shardValues(fill, plan.Rows, fill.tbl.ShardColumn); err != nil {
			return nil, keep, err
		}
	}
	return plan, keep, err
}

// ddlWords open statements that define things rather than run them.
var ddlWords = []string{"create", "alter", "drop", "comment"}

// ddl reports whether the statement at token i is DDL.
func (p *parser) ddl(i int) bool {
	for _, w := range ddlWords {
		if p.kw(i, w) {
			return true
		}
	}
	return false
}

// unfillable decides for statements touching configured tables that cannot
// be filled: unchanged when every such key column has a default, else an
// *Error for the first that has none.
func (r *Rewriter) unfillable(ctx context.Context, q string, cat Catalog, occs []*occurrence) (*Plan, bool, error) {
	asked := map[*Table]bool{}
	for _, o := range occs {
		if asked[o.tbl] {
			continue
		}
		asked[o.tbl] = true
		cols, err := r.columns(ctx, q, cat, o)
		if err != nil {
			return nil, false, err
		}
		has, found := false, false
		for _, c := range cols {
			if r.sameIdent(c.Name, o.tbl.key()) {
				has, found = c.HasDefault, true
			}
		}
		if !has {
			why := "has no default"
			if !found {
				why = "is not in the catalog's columns of " + o.tbl.Name
			}
			if o.badForm {
				return nil, true, newError(o.tbl, q, o.failPos, o.failReason, nil)
			}
			return nil, true, newError(o.tbl, q, o.failPos, o.failReason+", and key column "+o.tbl.key()+" "+why+
				"; list "+o.tbl.key()+" in the column list and pass a key from idsql's DB.NextID(ctx, "+strconv.Quote(o.tbl.String())+
				") or Keys.NextID, or give the column a default", nil)
		}
	}
	return nil, true, nil
}

// columns asks the catalog for the columns of o's table.
func (r *Rewriter) columns(ctx context.Context, q string, cat Catalog, o *occurrence) ([]Column, error) {
	if cat == nil {
		return nil, newError(o.tbl, q, o.failPos, o.failReason+"; the catalog is needed to decide", ErrNoCatalog)
	}
	schema, name := o.schema, o.name
	if name == "" {
		schema, name = o.tbl.Schema, o.tbl.Name
	}
	cols, err := cat.Columns(ctx, schema, name)
	if err != nil {
		return nil, newError(o.tbl, q, o.failPos, "reading the catalog", err)
	}
	if len(cols) == 0 {
		return nil, newError(o.tbl, q, o.failPos, "the catalog has no table "+strconv.Quote(name), nil)
	}
	return cols, nil
}

// build writes the filled statement for o.
func (r *Rewriter) build(ctx context.Context, p *parser, o *occurrence, cat Catalog) (*Plan, bool, error) {
	q := p.q
	key := r.quote(o.tbl.key())
	if o.keyListed {
		return r.buildZero(p, o, o.keyIdx)
	}
	var colList string // inserted after the table name when there is no column list
	switch {
	case o.ncols >= 0 || o.defaultVals || o.setEnd > 0:
	case o.rows[0].width == 0:
		colList = " (" + key + ")" // MySQL: VALUES () takes every default
	default:
		o.failPos, o.failReason = p.toks[o.tok].start, "INSERT without a column list"
		cols, err := r.columns(ctx, q, cat, o)
		if err != nil {
			return nil, false, err
		}
		keyAt := -1
		for i, c := range cols {
			if r.sameIdent(c.Name, o.tbl.key()) {
				keyAt = i
			}
		}
		// Without a column list the values go to the table's first columns
		// in order, as PostgreSQL assigns them: a key among those columns
		// is the caller's; otherwise the first columns are listed and the
		// key added after them.
		width := o.rows[0].width
		switch {
		case keyAt < 0:
			return nil, true, newError(o.tbl, q, o.failPos, "the catalog's columns of "+o.tbl.Name+" lack key column "+o.tbl.key(), nil)
		case width > len(cols):
			o.failReason = "malformed statement: INSERT without a column list gives " + count(width, "value") + " for the " +
				count(len(cols), "column") + " of " + o.tbl.Name + "; give at most one value per column"
			o.badForm = true
			return r.unfillable(ctx, q, cat, []*occurrence{o})
		case keyAt < width && o.tbl.KeepZero:
			return nil, true, nil // the key is given by position
		case keyAt < width:
			return r.buildZero(p, o, keyAt)
		}
		var b strings.Builder
		b.WriteString(" (")
		for _, c := range cols[:width] {
			b.WriteString(r.quote(c.Name))
			b.WriteString(", ")
		}
		b.WriteString(key)
		b.WriteString(")")
		colList = b.String()
	}

	// Existing placeholders.
	positional := positional(&r.syn)
	params, qmarks, _, bad := p.placeholders()
	if bad >= 0 {
		o.failPos, o.failReason = p.toks[bad].start, "placeholder "+p.text(bad)+" out of range"
		return r.unfillable(ctx, q, cat, []*occurrence{o})
	}
	ph := func(i int) string {
		if positional {
			return "?"
		}
		return "$" + strconv.Itoa(params+1+i)
	}

	var ins []splice
	switch {
	case o.defaultVals:
		// DEFAULT VALUES -> (key) VALUES ($n), keeping the VALUES word.
		ins = append(ins,
			splice{o.defStart, o.defEnd - len("values"), "(" + key + ") ", false},
			splice{o.defEnd, 0, " (" + ph(0) + ")", true})
	case o.setEnd > 0:
		ins = append(ins, splice{o.setEnd, 0, ", " + key + " = " + ph(0), true})
	default:
		switch {
		case colList != "":
			ins = append(ins, splice{o.nameEnd, 0, colList, false})
		case o.ncols == 0:
			ins = append(ins, splice{o.colsEnd, 0, key, false})
		default:
			ins = append(ins, splice{o.colsEnd, 0, ", " + key, false})
		}
		for i, rw := range o.rows {
			sep := ", "
			if rw.width == 0 {
				sep = ""
			}
			ins = append(ins, splice{rw.lastEnd, 0, sep + ph(i), true})
		}
	}
	if o.aliasEnd > 0 {
		ins = append(ins, splice{o.aliasEnd, 0, ", " + key, false})
	}

	plan := &Plan{Table: *o.tbl, Params: params, positional: positional, Upsert: o.upsert}
	plan.Query = plan.splice(q, ins, qmarks, len(colList))
	plan.Rows, plan.addedN = plan.addedN, 0
	return plan, true, nil
}

// placeholders reads the caller's placeholders: their number (the highest
// $n, or the number of ?s), the offsets of the ?s, and how often each $n
// occurs. bad is the token of a $n out of range, or -1.
func (p *parser) placeholders() (params int, qmarks []int, uses map[int]int, bad int) {
	uses = map[int]int{}
	for i, t := range p.toks {
		if t.kind != tParam {
			continue
		}
		if positional(&p.r.syn) {
			qmarks = append(qmarks, t.start)
			params++
			continue
		}
		n, err := strconv.Atoi(p.q[t.start+1 : t.end])
		if err != nil || n < 1 || n > 1<<20 {
			return 0, nil, nil, i
		}
		uses[n]++
		params = max(params, n)
	}
	return params, qmarks, uses, -1
}

// splice is text to insert, in order of offset: text goes at q[at],
// replacing q[at:cut] when cut > at; id marks an added placeholder.
type splice struct {
	at, cut int
	text    string
	id      bool
}

// splice writes q with ins applied and records, for ? placeholders, how
// many of the caller's (at qmarks) precede each added one.
func (p *Plan) splice(q string, ins []splice, qmarks []int, extra int) string {
	var b strings.Builder
	b.Grow(len(q) + 16 + 8*len(ins) + extra)
	last := 0
	for _, s := range ins {
		b.WriteString(q[last:s.at])
		last = max(s.at, s.cut)
		b.WriteString(s.text)
		if s.id {
			p.addedN++
			if p.positional {
				p.at = append(p.at, countBefore(qmarks, s.at))
			}
		}
	}
	b.WriteString(q[last:])
	return b.String()
}

// keyValue is what a row gives for its key.
type keyValue uint8

const (
	kvOther   keyValue = iota // an expression: kept
	kvDefault                 // DEFAULT, NULL or 0: replaced by a generated key
	kvParam                   // a bind parameter: its value decides at execution
)

// keyValue classifies the value in tokens [a, b): one token, optionally
// cast (PostgreSQL's value::type).
func (p *parser) keyValue(a, b int) keyValue {
	if b-a > 1 {
		if !p.r.syn.TypeCasts || b-a < 4 || !p.punct(a+1, ':') || !p.punct(a+2, ':') ||
			p.toks[a+2].start != p.toks[a+1].end || p.kw(a, "default") {
			return kvOther
		}
		for k := a + 3; k < b; k++ {
			if p.toks[k].kind != tIdent {
				return kvOther
			}
		}
	}
	t := p.toks[a]
	switch {
	case p.kw(a, "default"), p.kw(a, "null"):
		return kvDefault
	case t.kind == tNumber && zeroNumber(p.q[t.start:t.end]):
		return kvDefault
	case t.kind == tParam:
		return kvParam
	}
	return kvOther
}

// zeroNumber reports whether a numeric literal is a zero written with
// digits and a point (0, 00, 0.0).
func zeroNumber(s string) bool {
	zero := false
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '0':
			zero = true
		case '.':
		default:
			return false
		}
	}
	return zero
}

// element returns the tokens [a, b) of the value at index idx of the row
// whose "(" and ")" are at tokens open and closeAt.
func (p *parser) element(open, closeAt, idx int) (a, b int, ok bool) {
	depth, n := 0, 0
	a = open + 1
	for k := open + 1; k < closeAt; k++ {
		switch {
		case p.punct(k, '('), p.punct(k, '['):
			depth++
		case p.punct(k, ')'), p.punct(k, ']'):
			depth--
		case depth == 0 && p.punct(k, ','):
			if n == idx {
				return a, k, k > a
			}
			n++
			a = k + 1
		}
	}
	return a, closeAt, n == idx && closeAt > a
}

// buildZero plans a statement that gives the key itself: in the value at
// keyIdx of each VALUES row, or in MySQL's SET. A row giving DEFAULT, NULL
// or 0 gets an added placeholder for a generated key; a row giving a bind
// parameter gets a slot whose argument is replaced at execution when it is
// 0 or NULL; any other expression is kept. When no row may take a key the
// statement passes unchanged.
func (r *Rewriter) buildZero(p *parser, o *occurrence, keyIdx int) (*Plan, bool, error) {
	q := p.q
	positional := positional(&r.syn)
	var spans [][2]int
	if o.setKey[1] > 0 {
		spans = append(spans, o.setKey)
	} else {
		for _, rw := range o.rows {
			a, b, ok := p.element(rw.open, rw.close, keyIdx)
			if !ok {
				return nil, true, nil
			}
			spans = append(spans, [2]int{a, b})
		}
	}
	params, qmarks, uses, bad := p.placeholders()
	if bad >= 0 {
		return nil, true, nil // the caller's statement as it is: the server judges it
	}
	keyUses := map[int]int{} // $n: occurrences as a row's key
	kinds := make([]keyValue, len(spans))
	for i, sp := range spans {
		kinds[i] = p.keyValue(sp[0], sp[1])
		if kinds[i] == kvParam && !positional {
			n, _ := strconv.Atoi(q[p.toks[sp[0]].start+1 : p.toks[sp[0]].end])
			keyUses[n]++
		}
	}
	var ins []splice
	var slots []slot
	placed := map[int]bool{} // $n already given its in-place slot
	for i, sp := range spans {
		t := p.toks[sp[0]]
		var s slot
		switch kinds[i] {
		case kvOther:
			continue
		case kvDefault:
			s = slot{arg: -1, added: true}
		case kvParam:
			if positional {
				s = slot{arg: countBefore(qmarks, t.start)}
				break
			}
			n, _ := strconv.Atoi(q[t.start+1 : t.end])
			// In place only when $n stands for keys alone, and once: a
			// generated key must not reach another use of $n.
			s = slot{arg: n - 1, added: uses[n] != keyUses[n] || placed[n]}
			placed[n] = true
		}
		if s.added {
			ins = append(ins, splice{t.start, t.end, "", true})
		}
		slots = append(slots, s)
	}
	if len(slots) == 0 {
		return nil, true, nil
	}
	k := 0
	for i := range ins {
		if positional {
			ins[i].text = "?"
		} else {
			ins[i].text = "$" + strconv.Itoa(params+1+k)
		}
		k++
	}
	plan := &Plan{Table: *o.tbl, Params: params, positional: positional, Rows: len(slots), slots: slots, Upsert: o.upsert}
	plan.Query = plan.splice(q, ins, qmarks, 0)
	plan.addedN = 0
	return plan, true, nil
}

func countBefore(offsets []int, at int) int {
	n := 0
	for _, o := range offsets {
		if o < at {
			n++
		}
	}
	return n
}

// quote writes a catalog name as an identifier of the dialect: bare when it
// reads back as itself, quoted otherwise. MySQL names are always quoted:
// MySQL reserves more words with every version (rank in 8.0, for one).
func (r *Rewriter) quote(name string) string {
	quote := string(r.syn.SpliceQuote)
	if r.syn.AlwaysQuote {
		return quote + strings.ReplaceAll(name, quote, quote+quote) + quote
	}
	bare := name != "" && !reserved[strings.ToLower(name)]
	for i := 0; i < len(name) && bare; i++ {
		c := name[i]
		ok := c >= 'a' && c <= 'z' || c == '_' || i > 0 && c >= '0' && c <= '9'
		if !r.syn.FoldUnquoted {
			ok = ok || c >= 'A' && c <= 'Z'
		}
		bare = ok
	}
	if bare {
		return name
	}
	return quote + strings.ReplaceAll(name, quote, quote+quote) + quote
}

// reserved holds words quoted when written as column names: the reserved
// keywords of PostgreSQL, and common ones of SQLite and MySQL.
var reserved = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`all analyse analyze and any array as asc asymmetric
	authorization between binary both by case cast check collate collation column
	concurrently constraint create cross current_catalog current_date current_role
	current_schema current_time current_timestamp current_user default deferrable
	delete desc distinct do else end except exists false fetch for foreign freeze from
	full grant group having if ignore ilike in index initially inner insert intersect
	interval into is isnull join key lateral leading left like limit localtime
	localtimestamp match natural not notnull null offset on only or order outer
	overlaps placing primary range references replace returning right select
	session_user set similar some symmetric system_user table tablesample then to
	trailing true union unique update user using values variadic verbose when where
	window with`) {
		m[w] = true
	}
	return m
}()

// containsFold reports whether s contains sub, ignoring ASCII case.
func containsFold(s, sub string) bool {
	return strings.Contains(strings.ToLower(s), strings.ToLower(sub))
}

// asciiLower folds A-Z to a-z and leaves every other byte alone.
func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if b[j] >= 'A' && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}
