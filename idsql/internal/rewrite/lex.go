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
	tParam                     // $n (PostgreSQL) or ? (SQLite)
	tPunct                     // any other single byte
)

// token is one lexical unit of the statement: q[start:end].
type token struct {
	kind       tokKind
	start, end int
}

// lexResult holds the tokens of a statement. bad >= 0 is the byte offset
// where the lexer met something it cannot read with certainty (an
// unterminated literal or comment, or, in the SQLite dialect, a construct
// SQLite and MySQL read differently); why says what.
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

// lex splits q into tokens following the lexical rules of d: PostgreSQL's;
// for SQLite the rules SQLite and MySQL agree on, with every construct they
// read differently reported as bad.
func lex(q string, d Dialect) lexResult {
	res := lexResult{toks: make([]token, 0, 16+len(q)/4), bad: -1}
	fail := func(at int, why string) lexResult {
		res.bad, res.why = at, why
		return res
	}
	n := len(q)
	i := 0
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
			j := strings.IndexByte(q[i:], '\n')
			if j < 0 {
				i = n
			} else {
				i += j + 1
			}
			continue
		case c == '/' && i+1 < n && q[i+1] == '*':
			if d == SQLite {
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
		case c == '\'':
			j, ok := quoted(q, i, '\'', false)
			if !ok {
				return fail(i, "unterminated string literal")
			}
			if d == SQLite && strings.IndexByte(q[i:j], '\\') >= 0 {
				return fail(i, "backslash in a string literal (an escape in MySQL, not in SQLite)")
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
			res.toks = append(res.toks, token{tQIdent, i, j})
			i = j
			continue
		case d == SQLite && c == '`':
			j, ok := quoted(q, i, '`', false)
			if !ok {
				return fail(i, "unterminated quoted identifier")
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
		default:
			i++
			res.toks = append(res.toks, token{tPunct, start, i})
		}
	}
	return res
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
