package rewrite

import (
	"strings"

	"github.com/idsql/idsql/internal/dialect"
)

// tokKind classifies a token. Comments and white space produce no tokens;
// the byte offsets of the tokens that remain are enough to splice the
// statement.
type tokKind uint8

const (
	tIdent  tokKind = iota + 1 // unquoted word: keyword or identifier
	tQIdent                    // "quoted", `quoted` or [quoted] identifier
	tString                    // any string literal ('..', E'..', $tag$..$tag$)
	tNumber                    // numeric literal
	tParam                     // $n (PostgreSQL) or ? (SQLite, MySQL)
	tPunct                     // any other single byte
)

// token is one lexical unit of the statement: q[start:end].
type token struct {
	kind       tokKind
	start, end int
}

// lexResult holds the tokens of a statement. bad >= 0 is the byte offset
// where the lexer met something it cannot read with certainty (an
// unterminated literal or comment, a construct that SQLite and MySQL read
// differently in the SQLite dialect, a MySQL comment whose text runs on some
// servers only); why says what.
type lexResult struct {
	toks []token
	bad  int
	why  string
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

func isIdentStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c >= 0x80
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isIdentChar(c byte) bool { return isIdentStart(c) || isDigit(c) || c == '$' }

// lex splits q into tokens following the lexical rules of s: PostgreSQL's;
// for SQLite the rules SQLite and MySQL agree on, with every construct they
// read differently reported as bad; MySQL's, in the sql_mode s describes.
func lex(q string, s syntax) lexResult {
	lx := newLexer(q, s)
	for i := 0; i < len(q); {
		j, why := lx.next(i)
		if why != "" {
			return lexResult{toks: lx.toks, bad: i, why: why}
		}
		i = j
	}
	if lx.exec >= 0 {
		return lexResult{toks: lx.toks, bad: lx.exec, why: "unterminated executable comment /*! ... */"}
	}
	return lexResult{toks: lx.toks, bad: -1}
}

// lexer holds the state of one lex call. Its rules each read one kind of
// lexical unit starting at q[i]: they append the token they read (white
// space and comments make none) and return the offset after it, or a
// non-empty reason why the unit cannot be read with certainty, which makes
// q[i] the bad offset of the statement.
type lexer struct {
	q    string
	s    syntax
	toks []token
	exec int // MySQL: offset of the /*! opening the executable comment we are in, or -1
}

func newLexer(q string, s syntax) *lexer {
	return &lexer{q: q, s: s, toks: make([]token, 0, 16+len(q)/4), exec: -1}
}

// at returns q[i], or 0 past the end.
func (lx *lexer) at(i int) byte {
	if i < len(lx.q) {
		return lx.q[i]
	}
	return 0
}

// emit appends the token q[start:end] and returns end.
func (lx *lexer) emit(kind tokKind, start, end int) int {
	lx.toks = append(lx.toks, token{kind, start, end})
	return end
}

// next reads the unit at q[i], choosing its rule by the first bytes.
func (lx *lexer) next(i int) (int, string) {
	s := &lx.s
	c, c1 := lx.q[i], lx.at(i+1)
	switch {
	case isSpace(c):
		return i + 1, ""
	case c == '-' && c1 == '-':
		return lx.dashComment(i)
	case c == '#' && s.HashComments != dialect.HashOperator:
		return lx.hashComment(i)
	case c == '/' && c1 == '*':
		return lx.blockComment(i)
	case c == '*' && c1 == '/' && lx.exec >= 0:
		lx.exec = -1 // the end of /*! ... */
		return i + 2, ""
	case c == '\'':
		return lx.singleQuoted(i)
	case c == '"':
		return lx.doubleQuoted(i)
	case c == '`' && s.BacktickQuotes:
		return lx.enclosed(i, tQIdent, false, "quoted identifier")
	case c == '[' && s.BracketQuotes:
		return lx.bracketed(i)
	case c == '?' && s.Bind == dialect.Question:
		return lx.questionParam(i)
	case (c == ':' || c == '@' || c == '$') && s.RefuseNamedParams && isIdentChar(c1):
		return i, "named parameter or variable " + string(c) + "name"
	case c == '$' && s.DollarQuotes:
		return lx.dollar(i)
	case s.DigitWords && (isIdentChar(c) || c == '.' && isDigit(c1)):
		return lx.mysqlWord(i)
	case isIdentStart(c):
		return lx.word(i)
	case isDigit(c) || c == '.' && isDigit(c1):
		return lx.number(i)
	case c == 0 && s.RefuseNUL:
		return i, "NUL byte"
	}
	return lx.emit(tPunct, i, i+1), ""
}

// dashComment reads a "--" comment to the end of its line. In MySQL "--"
// starts a comment only when white space, a control character or the end
// follows (1--1 is 1 - (-1)); in SQLite it always does, so "--x", which
// MySQL reads otherwise, is refused.
func (lx *lexer) dashComment(i int) (int, string) {
	c2, more := lx.at(i+2), i+2 < len(lx.q)
	switch lx.s.DashComments {
	case dialect.DashRefusedUnspaced:
		if more && !isSpace(c2) {
			return i, "'--' not followed by a space (a comment in SQLite, an operator in MySQL)"
		}
	case dialect.DashSpaced:
		if more && c2 > ' ' && c2 != 0x7f {
			return lx.emit(tPunct, i, i+1), "" // a minus sign
		}
		if lx.exec >= 0 {
			return i, "'-- ' comment inside an executable comment /*! ... */"
		}
	}
	return lx.lineComment(i)
}

// hashComment reads a MySQL '#' comment to the end of its line; SQLite
// refuses the '#' (PostgreSQL reads it as an operator).
func (lx *lexer) hashComment(i int) (int, string) {
	switch {
	case lx.s.HashComments == dialect.HashRefused:
		return i, "'#' (a comment in MySQL)"
	case lx.exec >= 0:
		return i, "'#' comment inside an executable comment /*! ... */"
	}
	return lx.lineComment(i)
}

// lineComment reads a comment to the end of its line; MySQL refuses a NUL
// byte in it.
func (lx *lexer) lineComment(i int) (int, string) {
	j := lineEnd(lx.q, i)
	if lx.s.RefuseNUL && strings.IndexByte(lx.q[i:j], 0) >= 0 {
		return i, "NUL byte in a comment"
	}
	return j, ""
}

// blockComment reads a /* ... */ comment by the rules of the dialect.
func (lx *lexer) blockComment(i int) (int, string) {
	switch lx.s.BlockComments {
	case dialect.BlockFlat:
		return lx.sqliteComment(i)
	case dialect.BlockExecutable:
		return lx.mysqlComment(i)
	}
	return lx.nestedComment(i)
}

// nestedComment reads a PostgreSQL block comment, in which comments nest.
func (lx *lexer) nestedComment(i int) (int, string) {
	q, n := lx.q, len(lx.q)
	depth := 0
	for j := i; j < n; {
		switch {
		case q[j] == '/' && lx.at(j+1) == '*':
			depth++
			j += 2
		case q[j] == '*' && lx.at(j+1) == '/':
			depth--
			j += 2
			if depth == 0 {
				return j, ""
			}
		default:
			j++
		}
	}
	return i, "unterminated comment"
}

// flatComment reads a block comment in which comments do not nest (SQLite,
// MySQL) and returns its end and body. A "/*" inside is refused with the
// reason nested: PostgreSQL would read a nested comment there.
func (lx *lexer) flatComment(i int, nested string) (end int, body, why string) {
	j := strings.Index(lx.q[i+2:], "*/")
	switch {
	case j < 0:
		return i, "", "unterminated comment"
	case strings.Contains(lx.q[i+2:i+2+j], "/*"):
		return i, "", nested
	}
	return i + 2 + j + 2, lx.q[i+2 : i+2+j], ""
}

// sqliteComment reads an SQLite block comment, refusing what MySQL reads
// otherwise: /*! ... */ and a comment holding "/*".
func (lx *lexer) sqliteComment(i int) (int, string) {
	if lx.at(i+2) == '!' {
		return i, "MySQL executable comment /*! ... */"
	}
	end, _, why := lx.flatComment(i, "nested comment (nested in PostgreSQL, not in SQLite or MySQL)")
	return end, why
}

// mysqlComment reads a MySQL block comment. The text of an executable
// comment /*! ... */ is read as if there were no comment, as MySQL and
// MariaDB run it (lexer.exec marks it); versioned and MariaDB-only ones,
// which some servers skip, are refused.
func (lx *lexer) mysqlComment(i int) (int, string) {
	if lx.exec >= 0 {
		return i, "comment inside an executable comment /*! ... */"
	}
	switch c2, c3 := lx.at(i+2), lx.at(i+3); {
	case c2 == '!' && isDigit(c3):
		return i, "MySQL versioned comment /*!NNNNN ... */ (run or skipped depending on the server version)"
	case c2 == '!':
		lx.exec = i
		return i + 3, ""
	case c2 == 'M' && c3 == '!':
		return i, "MariaDB executable comment /*M! ... */ (run by MariaDB, skipped by MySQL)"
	}
	end, body, why := lx.flatComment(i, "nested comment (not supported by MySQL)")
	if why == "" && strings.IndexByte(body, 0) >= 0 {
		return i, "NUL byte in a comment"
	}
	return end, why
}

// singleQuoted reads a '...' string literal. MySQL reads backslash escapes
// in it unless NO_BACKSLASH_ESCAPES is set; PostgreSQL and SQLite do not,
// so SQLite refuses a backslash.
func (lx *lexer) singleQuoted(i int) (int, string) {
	j, why := lx.enclosed(i, tString, lx.s.BackslashEscapes, "string literal")
	if why == "" && lx.s.RefuseBackslash && strings.IndexByte(lx.q[i:j], '\\') >= 0 {
		return i, "backslash in a string literal (an escape in MySQL, not in SQLite)"
	}
	return j, why
}

// doubleQuoted reads a "..." literal: a string in MySQL without
// ANSI_QUOTES, a quoted identifier otherwise. SQLite refuses a backslash in
// it (MySQL may read it as an escape).
func (lx *lexer) doubleQuoted(i int) (int, string) {
	if lx.s.DoubleQuotedStrings {
		return lx.enclosed(i, tString, lx.s.BackslashEscapes, "string literal")
	}
	j, why := lx.enclosed(i, tQIdent, false, "quoted identifier")
	if why == "" && lx.s.RefuseBackslash && strings.IndexByte(lx.q[i:j], '\\') >= 0 {
		return i, "backslash in a double-quoted literal"
	}
	return j, why
}

// enclosed reads a literal between two of the quote at q[i], in which a
// doubled quote (and, with backslash, a backslash before any byte) is
// escaped, and emits it as kind; what names it in errors. Inside an
// executable comment a literal holding "*/" is refused: whether the server
// ends the comment there is not certain.
func (lx *lexer) enclosed(i int, kind tokKind, backslash bool, what string) (int, string) {
	j, ok := quoted(lx.q, i, lx.q[i], backslash)
	switch {
	case !ok:
		return i, "unterminated " + what
	case lx.exec >= 0 && strings.Contains(lx.q[i:j], "*/"):
		return i, "'*/' inside a literal in an executable comment /*! ... */"
	}
	return lx.emit(kind, i, j), ""
}

// bracketed reads an SQLite [identifier], which has no escapes.
func (lx *lexer) bracketed(i int) (int, string) {
	j := strings.IndexByte(lx.q[i:], ']')
	if j < 0 {
		return i, "unterminated [identifier]"
	}
	return lx.emit(tQIdent, i, i+j+1), ""
}

// questionParam reads a ? parameter (SQLite, MySQL). SQLite's numbered
// ?NNN is refused: MySQL has none.
func (lx *lexer) questionParam(i int) (int, string) {
	if lx.s.RefuseNumberedParams && isDigit(lx.at(i+1)) {
		return i, "numbered parameter ?NNN"
	}
	return lx.emit(tParam, i, i+1), ""
}

// dollar reads what starts with '$' in PostgreSQL: a parameter $n, a
// dollar-quoted string $tag$ ... $tag$ (the tag an identifier without '$',
// possibly empty), or else the '$' alone.
func (lx *lexer) dollar(i int) (int, string) {
	q, n := lx.q, len(lx.q)
	j := i + 1
	if isDigit(lx.at(j)) {
		for j < n && isDigit(q[j]) {
			j++
		}
		return lx.emit(tParam, i, j), ""
	}
	if j < n && isIdentStart(q[j]) {
		j++
		for j < n && (isIdentStart(q[j]) || isDigit(q[j])) {
			j++
		}
	}
	if lx.at(j) != '$' {
		return lx.emit(tPunct, i, i+1), ""
	}
	tag := q[i : j+1]
	k := strings.Index(q[j+1:], tag)
	if k < 0 {
		return i, "unterminated dollar-quoted string"
	}
	return lx.emit(tString, i, j+1+k+len(tag)), ""
}

// word reads an identifier or keyword (PostgreSQL, SQLite); in PostgreSQL
// E'...' is a string with backslash escapes.
func (lx *lexer) word(i int) (int, string) {
	q, n := lx.q, len(lx.q)
	if lx.s.EscapeStrings && q[i]|0x20 == 'e' && lx.at(i+1) == '\'' {
		j, ok := quoted(q, i+1, '\'', true)
		if !ok {
			return i, "unterminated string literal"
		}
		return lx.emit(tString, i, j), ""
	}
	j := i + 1
	for j < n && isIdentChar(q[j]) {
		j++
	}
	return lx.emit(tIdent, i, j), ""
}

// number reads a numeric literal (PostgreSQL, SQLite): digits, letters and
// dots, whose extent is all the parser needs.
func (lx *lexer) number(i int) (int, string) {
	q, n := lx.q, len(lx.q)
	j := i + 1
	for j < n && (isIdentChar(q[j]) || q[j] == '.') && q[j] != '$' {
		j++
	}
	return lx.emit(tNumber, i, j), ""
}

// mysqlWord reads a MySQL word: identifiers may begin with a digit or '$',
// and a word is a number only when it reads as one (see mysqlWordEnd).
// After a name and a dot comes a name: t.1a is column 1a of t, so the dot
// there is punctuation.
func (lx *lexer) mysqlWord(i int) (int, string) {
	if lx.q[i] == '.' && len(lx.toks) > 0 {
		if last := lx.toks[len(lx.toks)-1]; last.end == i && last.kind != tNumber && last.kind != tPunct {
			return lx.emit(tPunct, i, i+1), ""
		}
	}
	kind, j := mysqlWordEnd(lx.q, i)
	return lx.emit(kind, i, j), ""
}

// lineEnd returns the offset after the line q[i:] begins, or len(q).
func lineEnd(q string, i int) int {
	j := strings.IndexByte(q[i:], '\n')
	if j < 0 {
		return len(q)
	}
	return i + j + 1
}

// mysqlWordEnd reads the word at q[i], which begins with an identifier
// character, a digit, or a dot before a digit, and says whether MySQL reads
// it as a number (123, 1.5, .5, 1e-3, 0x1F, 0b101) or an identifier (a word
// that is not a number, such as 1st or $x).
func mysqlWordEnd(q string, i int) (tokKind, int) {
	n := len(q)
	j := i
	for j < n && isIdentChar(q[j]) {
		j++
	}
	w := q[i:j]
	digits := func(s string, ok func(byte) bool) bool {
		if s == "" {
			return false
		}
		for k := 0; k < len(s); k++ {
			if !ok(s[k]) {
				return false
			}
		}
		return true
	}
	isHex := func(c byte) bool { return isDigit(c) || c|0x20 >= 'a' && c|0x20 <= 'f' }
	isBin := func(c byte) bool { return c == '0' || c == '1' }
	switch {
	case len(w) > 2 && w[0] == '0' && w[1] == 'x' && digits(w[2:], isHex),
		len(w) > 2 && w[0] == '0' && w[1] == 'b' && digits(w[2:], isBin):
		return tNumber, j
	case w == "" || digits(w, isDigit):
		// Digits, then perhaps a fraction and an exponent.
		if j < n && q[j] == '.' {
			j++
			for j < n && isDigit(q[j]) {
				j++
			}
		}
		return tNumber, mysqlExponent(q, j)
	}
	// Digits and an exponent: 1e5, or 1e followed by +5 or -5.
	k := 0
	for k < len(w) && isDigit(w[k]) {
		k++
	}
	if k > 0 && k < len(w) && w[k]|0x20 == 'e' {
		if digits(w[k+1:], isDigit) {
			return tNumber, j
		}
		if k+1 == len(w) && j+1 < n && (q[j] == '+' || q[j] == '-') && isDigit(q[j+1]) {
			return tNumber, mysqlExponent(q, i+k)
		}
	}
	return tIdent, j
}

// mysqlExponent returns the offset after the exponent at q[j], if any.
func mysqlExponent(q string, j int) int {
	n := len(q)
	if j < n && q[j]|0x20 == 'e' {
		k := j + 1
		if k < n && (q[k] == '+' || q[k] == '-') {
			k++
		}
		if k < n && isDigit(q[k]) {
			for k < n && isDigit(q[k]) {
				k++
			}
			return k
		}
	}
	return j
}

// quoted returns the offset just past the literal opened by the quote at
// q[i]. A doubled quote is an escaped quote; with backslash set, so is a
// backslash followed by any byte.
func quoted(q string, i int, quote byte, backslash bool) (int, bool) {
	for j := i + 1; j < len(q); j++ {
		switch q[j] {
		case '\\':
			if backslash {
				j++
			}
		case quote:
			if j+1 < len(q) && q[j+1] == quote {
				j++
				continue
			}
			return j + 1, true
		}
	}
	return len(q), false
}
