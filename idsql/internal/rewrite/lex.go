package rewrite

import "strings"

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
	res := lexResult{toks: make([]token, 0, 16+len(q)/4), bad: -1}
	fail := func(at int, why string) lexResult {
		res.bad, res.why = at, why
		return res
	}
	d := s.dialect
	n := len(q)
	i := 0
	exec := -1 // MySQL: offset of the /*! opening the executable comment we are in
	for i < n {
		c := q[i]
		start := i
		switch {
		case isSpace(c):
			i++
			continue
		case c == '-' && i+1 < n && q[i+1] == '-':
			if d == SQLite && i+2 < n && !isSpace(q[i+2]) {
				return fail(i, "'--' not followed by a space (a comment in SQLite, an operator in MySQL)")
			}
			if d == MySQL {
				// A comment only when the second dash is followed by
				// white space, a control character or the end: 1--1 is
				// 1 - (-1).
				if i+2 < n && q[i+2] > ' ' && q[i+2] != 0x7f {
					i++
					res.toks = append(res.toks, token{tPunct, start, i})
					continue
				}
				if exec >= 0 {
					return fail(i, "'-- ' comment inside an executable comment /*! ... */")
				}
			}
			i = lineEnd(q, i)
			if d == MySQL && strings.IndexByte(q[start:i], 0) >= 0 {
				return fail(start, "NUL byte in a comment")
			}
			continue
		case d == MySQL && c == '#':
			if exec >= 0 {
				return fail(i, "'#' comment inside an executable comment /*! ... */")
			}
			i = lineEnd(q, i)
			if strings.IndexByte(q[start:i], 0) >= 0 {
				return fail(start, "NUL byte in a comment")
			}
			continue
		case c == '/' && i+1 < n && q[i+1] == '*':
			switch d {
			case MySQL:
				if exec >= 0 {
					return fail(i, "comment inside an executable comment /*! ... */")
				}
				if i+2 < n && q[i+2] == '!' {
					if i+3 < n && isDigit(q[i+3]) {
						return fail(i, "MySQL versioned comment /*!NNNNN ... */ (run or skipped depending on the server version)")
					}
					// /*! ... */: MySQL and MariaDB run the text inside
					// as if there were no comment; so do we.
					exec = i
					i += 3
					continue
				}
				if i+3 < n && q[i+2] == 'M' && q[i+3] == '!' {
					return fail(i, "MariaDB executable comment /*M! ... */ (run by MariaDB, skipped by MySQL)")
				}
				j := strings.Index(q[i+2:], "*/")
				if j < 0 {
					return fail(i, "unterminated comment")
				}
				body := q[i+2 : i+2+j]
				if strings.Contains(body, "/*") {
					return fail(i, "nested comment (not supported by MySQL)")
				}
				if strings.IndexByte(body, 0) >= 0 {
					return fail(i, "NUL byte in a comment")
				}
				i += j + 4
				continue
			case SQLite:
				if i+2 < n && q[i+2] == '!' {
					return fail(i, "MySQL executable comment /*! ... */")
				}
				j := strings.Index(q[i+2:], "*/")
				if j < 0 {
					return fail(i, "unterminated comment")
				}
				if strings.Contains(q[i+2:i+2+j], "/*") {
					return fail(i, "nested comment (nested in PostgreSQL, not in SQLite or MySQL)")
				}
				i += j + 4
				continue
			}
			depth := 0
			for i < n {
				if q[i] == '/' && i+1 < n && q[i+1] == '*' {
					depth++
					i += 2
				} else if q[i] == '*' && i+1 < n && q[i+1] == '/' {
					depth--
					i += 2
					if depth == 0 {
						break
					}
				} else {
					i++
				}
			}
			if depth != 0 {
				return fail(start, "unterminated comment")
			}
			continue
		case exec >= 0 && c == '*' && i+1 < n && q[i+1] == '/':
			exec = -1
			i += 2
			continue
		case c == '\'':
			j, ok := quoted(q, i, '\'', d == MySQL && !s.noBackslashEscapes)
			if !ok {
				return fail(i, "unterminated string literal")
			}
			if d == SQLite && strings.IndexByte(q[i:j], '\\') >= 0 {
				return fail(i, "backslash in a string literal (an escape in MySQL, not in SQLite)")
			}
			if literalEndsExec(q, i, j, exec) {
				return fail(i, "'*/' inside a literal in an executable comment /*! ... */")
			}
			res.toks = append(res.toks, token{tString, i, j})
			i = j
			continue
		case c == '"' && d == MySQL && !s.ansiQuotes:
			j, ok := quoted(q, i, '"', !s.noBackslashEscapes)
			if !ok {
				return fail(i, "unterminated string literal")
			}
			if literalEndsExec(q, i, j, exec) {
				return fail(i, "'*/' inside a literal in an executable comment /*! ... */")
			}
			res.toks = append(res.toks, token{tString, i, j})
			i = j
			continue
		case c == '"':
			j, ok := quoted(q, i, '"', false)
			if !ok {
				return fail(i, "unterminated quoted identifier")
			}
			if d == SQLite && strings.IndexByte(q[i:j], '\\') >= 0 {
				return fail(i, "backslash in a double-quoted literal")
			}
			if literalEndsExec(q, i, j, exec) {
				return fail(i, "'*/' inside a literal in an executable comment /*! ... */")
			}
			res.toks = append(res.toks, token{tQIdent, i, j})
			i = j
			continue
		case d.positional() && c == '`':
			j, ok := quoted(q, i, '`', false)
			if !ok {
				return fail(i, "unterminated quoted identifier")
			}
			if literalEndsExec(q, i, j, exec) {
				return fail(i, "'*/' inside a literal in an executable comment /*! ... */")
			}
			res.toks = append(res.toks, token{tQIdent, i, j})
			i = j
			continue
		case d == SQLite && c == '[':
			j := strings.IndexByte(q[i:], ']')
			if j < 0 {
				return fail(i, "unterminated [identifier]")
			}
			i += j + 1
			res.toks = append(res.toks, token{tQIdent, start, i})
			continue
		case d == SQLite && c == '#':
			return fail(i, "'#' (a comment in MySQL)")
		case d == SQLite && c == '?':
			if i+1 < n && isDigit(q[i+1]) {
				return fail(i, "numbered parameter ?NNN")
			}
			i++
			res.toks = append(res.toks, token{tParam, start, i})
			continue
		case d == MySQL && c == '?':
			i++
			res.toks = append(res.toks, token{tParam, start, i})
			continue
		case d == SQLite && (c == ':' || c == '@' || c == '$') && i+1 < n && isIdentChar(q[i+1]):
			return fail(i, "named parameter or variable "+string(c)+"name")
		case d == PostgreSQL && c == '$':
			if i+1 < n && isDigit(q[i+1]) {
				i++
				for i < n && isDigit(q[i]) {
					i++
				}
				res.toks = append(res.toks, token{tParam, start, i})
				continue
			}
			// Dollar quoting: $tag$ ... $tag$, the tag an identifier
			// without '$', possibly empty.
			j := i + 1
			if j < n && isIdentStart(q[j]) {
				j++
				for j < n && (isIdentStart(q[j]) || isDigit(q[j])) {
					j++
				}
			}
			if j < n && q[j] == '$' {
				tag := q[i : j+1]
				k := strings.Index(q[j+1:], tag)
				if k < 0 {
					return fail(i, "unterminated dollar-quoted string")
				}
				i = j + 1 + k + len(tag)
				res.toks = append(res.toks, token{tString, start, i})
				continue
			}
			i++
			res.toks = append(res.toks, token{tPunct, start, i})
			continue
		case d == MySQL && (isIdentChar(c) || c == '.' && i+1 < n && isDigit(q[i+1])):
			// MySQL identifiers may begin with a digit or '$'; a word is
			// a number only when it reads as one. After a name and a dot
			// comes a name: t.1a is column 1a of t.
			afterDot := c == '.' && len(res.toks) > 0 && res.toks[len(res.toks)-1].end == i &&
				res.toks[len(res.toks)-1].kind != tNumber && res.toks[len(res.toks)-1].kind != tPunct
			if afterDot {
				i++
				res.toks = append(res.toks, token{tPunct, start, i})
				continue
			}
			kind, j := mysqlWord(q, i)
			res.toks = append(res.toks, token{kind, i, j})
			i = j
			continue
		case isIdentStart(c):
			if d == PostgreSQL && (c == 'e' || c == 'E') && i+1 < n && q[i+1] == '\'' {
				j, ok := quoted(q, i+1, '\'', true)
				if !ok {
					return fail(i, "unterminated string literal")
				}
				res.toks = append(res.toks, token{tString, i, j})
				i = j
				continue
			}
			i++
			for i < n && isIdentChar(q[i]) {
				i++
			}
			res.toks = append(res.toks, token{tIdent, start, i})
			continue
		case isDigit(c) || c == '.' && i+1 < n && isDigit(q[i+1]):
			i++
			for i < n && (isIdentChar(q[i]) || q[i] == '.') && q[i] != '$' {
				i++
			}
			res.toks = append(res.toks, token{tNumber, start, i})
			continue
		case d == MySQL && c == 0:
			return fail(i, "NUL byte")
		default:
			i++
			res.toks = append(res.toks, token{tPunct, start, i})
		}
	}
	if exec >= 0 {
		return fail(exec, "unterminated executable comment /*! ... */")
	}
	return res
}

// literalEndsExec reports whether the literal q[i:j], met inside an
// executable comment, holds "*/": whether the server ends the comment there
// or reads on is not certain.
func literalEndsExec(q string, i, j, exec int) bool {
	return exec >= 0 && strings.Contains(q[i:j], "*/")
}

// lineEnd returns the offset after the line q[i:] begins, or len(q).
func lineEnd(q string, i int) int {
	j := strings.IndexByte(q[i:], '\n')
	if j < 0 {
		return len(q)
	}
	return i + j + 1
}

// mysqlWord reads the word at q[i], which begins with an identifier
// character, a digit, or a dot before a digit, and says whether MySQL reads
// it as a number (123, 1.5, .5, 1e-3, 0x1F, 0b101) or an identifier (a word
// that is not a number, such as 1st or $x).
func mysqlWord(q string, i int) (tokKind, int) {
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
