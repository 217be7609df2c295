package rewrite

import (
	"strings"
	"testing"

	"github.com/idsql/idsql/internal/dialect"
)

// TestLexRules runs each lexer rule alone on text that starts with what it
// reads.
func TestLexRules(t *testing.T) {
	pg, lite, my := dialect.PostgreSQL.Syntax(), dialect.SQLite.Syntax(), dialect.MySQL.Syntax()
	myNoBS := dialect.MySQL.Syntax().WithSQLMode(true, false)
	myANSI := dialect.MySQL.Syntax().WithSQLMode(false, true)
	type rule = func(*lexer, int) (int, string)
	var (
		dash, hash, block    rule = (*lexer).dashComment, (*lexer).hashComment, (*lexer).blockComment
		single, double       rule = (*lexer).singleQuoted, (*lexer).doubleQuoted
		bracket, qmark, dlr  rule = (*lexer).bracketed, (*lexer).questionParam, (*lexer).dollar
		word, number, myWord rule = (*lexer).word, (*lexer).number, (*lexer).mysqlWord
		backtick             rule = func(lx *lexer, i int) (int, string) {
			return lx.enclosed(i, tQIdent, false, "quoted identifier")
		}
	)
	tests := []struct {
		name   string
		rule   rule
		s      syntax
		inExec bool // start inside an executable comment /*! ... */
		q      string
		end    int     // offset after the unit
		kind   tokKind // the token made; 0 for none
		why    string  // a part of the reason the unit is refused; "" when read
	}{
		{"dash comment", dash, pg, false, "-- x\ny", 5, 0, ""},
		{"dash comment at the end", dash, pg, false, "--", 2, 0, ""},
		{"SQLite dash comment", dash, lite, false, "-- x", 4, 0, ""},
		{"SQLite --x", dash, lite, false, "--x", 0, 0, "not followed by a space"},
		{"MySQL --x is a minus", dash, my, false, "--x", 1, tPunct, ""},
		{"MySQL -- and a tab", dash, my, false, "--\tx\ny", 5, 0, ""},
		{"MySQL -- at the end", dash, my, false, "--", 2, 0, ""},
		{"MySQL NUL in a comment", dash, my, false, "-- a\x00b", 0, 0, "NUL byte"},
		{"MySQL -- in /*! */", dash, my, true, "-- x */", 0, 0, "inside an executable comment"},

		{"MySQL # comment", hash, my, false, "# x\ny", 4, 0, ""},
		{"SQLite #", hash, lite, false, "#", 0, 0, "a comment in MySQL"},
		{"MySQL # in /*! */", hash, my, true, "# x */", 0, 0, "inside an executable comment"},

		{"PostgreSQL comments nest", block, pg, false, "/* a /* b */ c */d", 17, 0, ""},
		{"PostgreSQL unterminated nest", block, pg, false, "/* a /* b */", 0, 0, "unterminated comment"},
		{"SQLite comment", block, lite, false, "/* a */b", 7, 0, ""},
		{"SQLite nested", block, lite, false, "/* a /* b */", 0, 0, "nested comment"},
		{"SQLite /*!", block, lite, false, "/*! x */", 0, 0, "MySQL executable comment"},
		{"SQLite unterminated", block, lite, false, "/*", 0, 0, "unterminated comment"},
		{"MySQL comment", block, my, false, "/* a */b", 7, 0, ""},
		{"MySQL /*! opens", block, my, false, "/*! x */", 3, 0, ""},
		{"MySQL versioned", block, my, false, "/*!50001 x */", 0, 0, "versioned comment"},
		{"MariaDB /*M!", block, my, false, "/*M! x */", 0, 0, "MariaDB executable comment"},
		{"MySQL nested", block, my, false, "/* a /* b */", 0, 0, "not supported by MySQL"},
		{"MySQL NUL", block, my, false, "/* \x00 */", 0, 0, "NUL byte"},
		{"MySQL unterminated", block, my, false, "/* x", 0, 0, "unterminated comment"},
		{"MySQL comment in /*! */", block, my, true, "/* x */", 0, 0, "comment inside an executable comment"},

		{"string", single, pg, false, "'a''b'x", 6, tString, ""},
		{"PostgreSQL backslash is text", single, pg, false, `'a\'`, 4, tString, ""},
		{"MySQL backslash escape", single, my, false, `'a\'b'`, 6, tString, ""},
		{"MySQL NO_BACKSLASH_ESCAPES", single, myNoBS, false, `'a\'b'`, 4, tString, ""},
		{"SQLite backslash", single, lite, false, `'a\b'`, 0, 0, "backslash in a string literal"},
		{"unterminated string", single, pg, false, "'abc", 0, 0, "unterminated string literal"},
		{"*/ in a string in /*! */", single, my, true, "'*/'", 0, 0, "'*/' inside a literal"},

		{"quoted identifier", double, pg, false, `"a""b"x`, 6, tQIdent, ""},
		{"MySQL double-quoted string", double, my, false, `"a\"b"`, 6, tString, ""},
		{"MySQL ANSI_QUOTES", double, myANSI, false, `"a\"b"`, 4, tQIdent, ""},
		{"SQLite backslash in quotes", double, lite, false, `"a\b"`, 0, 0, "backslash in a double-quoted literal"},
		{"unterminated identifier", double, pg, false, `"a`, 0, 0, "unterminated quoted identifier"},

		{"backquoted", backtick, my, false, "`a``b`x", 6, tQIdent, ""},
		{"unterminated backquote", backtick, lite, false, "`a", 0, 0, "unterminated quoted identifier"},
		{"bracketed", bracket, lite, false, "[a b]c", 5, tQIdent, ""},
		{"unterminated bracket", bracket, lite, false, "[a", 0, 0, "unterminated [identifier]"},

		{"SQLite ?", qmark, lite, false, "?,", 1, tParam, ""},
		{"SQLite ?NNN", qmark, lite, false, "?1", 0, 0, "numbered parameter"},
		{"MySQL ? then a number", qmark, my, false, "?1", 1, tParam, ""},
		{"$n", dlr, pg, false, "$12x", 3, tParam, ""},
		{"empty dollar tag", dlr, pg, false, "$$a$$b", 5, tString, ""},
		{"dollar tag", dlr, pg, false, "$tag$ $x$ $tag$", 15, tString, ""},
		{"unterminated dollar quote", dlr, pg, false, "$tag$x", 0, 0, "unterminated dollar-quoted string"},
		{"lone $", dlr, pg, false, "$a b", 1, tPunct, ""},

		{"identifier", word, pg, false, "abc$1 d", 5, tIdent, ""},
		{"E string", word, pg, false, `E'a\'b'x`, 7, tString, ""},
		{"unterminated E string", word, pg, false, `e'a`, 0, 0, "unterminated string literal"},
		{"SQLite E is a word", word, lite, false, "E'x'", 1, tIdent, ""},
		{"number", number, pg, false, "1.5e3x y", 6, tNumber, ""},
		{"fraction", number, lite, false, ".5)", 2, tNumber, ""},
		{"MySQL number", myWord, my, false, "1e5 ", 3, tNumber, ""},
		{"MySQL signed exponent", myWord, my, false, "1e-5x", 4, tNumber, ""},
		{"MySQL digit-led name", myWord, my, false, "1st ", 3, tIdent, ""},
		{"MySQL $ name", myWord, my, false, "$x ", 2, tIdent, ""},
	}
	for _, tt := range tests {
		lx := newLexer(tt.q, tt.s)
		if tt.inExec {
			lx.exec = len(tt.q) // an opening past the text: only "inside" matters
		}
		end, why := tt.rule(lx, 0)
		switch {
		case tt.why != "":
			if !strings.Contains(why, tt.why) {
				t.Errorf("%s: %q: reason %q, want one that says %q", tt.name, tt.q, why, tt.why)
			}
			continue
		case why != "":
			t.Errorf("%s: %q refused: %s", tt.name, tt.q, why)
			continue
		case end != tt.end:
			t.Errorf("%s: %q: end %d, want %d", tt.name, tt.q, end, tt.end)
		}
		switch {
		case tt.kind == 0 && len(lx.toks) != 0:
			t.Errorf("%s: %q: tokens %v, want none", tt.name, tt.q, lx.toks)
		case tt.kind != 0 && (len(lx.toks) != 1 || lx.toks[0] != token{tt.kind, 0, tt.end}):
			t.Errorf("%s: %q: tokens %v, want kind %d over [0, %d)", tt.name, tt.q, lx.toks, tt.kind, tt.end)
		}
	}
}

// TestLexExecutableComment: the text of /*! ... */ is read as if there were
// no comment, and its end is not a token.
func TestLexExecutableComment(t *testing.T) {
	lx := lex("a /*! b */ c", dialect.MySQL.Syntax())
	if lx.bad >= 0 || len(lx.toks) != 3 {
		t.Fatalf("lex: %+v", lx)
	}
	lx = lex("a /*! b", dialect.MySQL.Syntax())
	if lx.bad != 2 || !strings.Contains(lx.why, "unterminated executable comment") {
		t.Errorf("unterminated /*!: bad %d, %q", lx.bad, lx.why)
	}
}
