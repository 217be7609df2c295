package dialect

// Syntax is how a database reads the text of a statement: what the
// rewriter (idsql/internal/rewrite) needs to find an INSERT's table,
// columns and values and to splice a key into it. The rewriter reads these
// answers and never a database's name. Where two products a driver of the
// dialect can reach read a construct differently (SQLite's driver accepts
// statements written for MySQL's lexer in tests and tools), the answer
// refuses the construct rather than guess.
//
// Every descriptor answers every field (TestDescriptorsAnswerEveryQuestion
// reads their source); the rules with more than two answers start at 1, so
// that a zero is no answer.
type Syntax struct {
	// Bind is how bind parameters are written: $n or ?.
	Bind Bind
	// FoldUnquoted: an unquoted identifier folds to lower case and names
	// then compare exactly (PostgreSQL); otherwise names compare without
	// regard to case and unquoted ones keep theirs.
	FoldUnquoted bool
	// BacktickQuotes: `name` quotes an identifier.
	BacktickQuotes bool
	// BracketQuotes: [name] quotes an identifier.
	BracketQuotes bool
	// DoubleQuotedStrings: "..." is a string literal, not a quoted
	// identifier (MySQL, unless the session's sql_mode has ANSI_QUOTES).
	DoubleQuotedStrings bool
	// BackslashEscapes: a backslash escapes the next byte in a quoted
	// string (MySQL, unless sql_mode has NO_BACKSLASH_ESCAPES).
	BackslashEscapes bool
	// RefuseBackslash: a backslash in a quoted literal is refused, since
	// it is an escape to some readers of the statement and not to others.
	RefuseBackslash bool
	// EscapeStrings: E'...' is a string with backslash escapes.
	EscapeStrings bool
	// DollarQuotes: $n is a parameter and $tag$...$tag$ a string.
	DollarQuotes bool
	// DigitWords: a word may begin with a digit or '$' and is a number
	// only when it reads as one (MySQL: 1st is a name, 1e5 a number).
	DigitWords bool
	// RefuseNUL: a NUL byte outside a string is refused.
	RefuseNUL bool
	// RefuseNamedParams: :name, @name and $name are refused (parameters
	// of the driver or variables, which the rewriter cannot count).
	RefuseNamedParams bool
	// RefuseNumberedParams: ?NNN is refused.
	RefuseNumberedParams bool
	// HashComments: what '#' starts.
	HashComments HashRule
	// DashComments: when "--" starts a comment.
	DashComments DashRule
	// BlockComments: how /* ... */ comments read.
	BlockComments BlockRule

	// Replace: REPLACE [INTO] inserts rows.
	Replace bool
	// InsertModifiers: LOW_PRIORITY, DELAYED, HIGH_PRIORITY and IGNORE may
	// follow INSERT, and INTO may be left out.
	InsertModifiers bool
	// InsertOr: INSERT OR <conflict action> INTO.
	InsertOr bool
	// MySQLInsert: MySQL's INSERT forms: VALUE as VALUES, VALUES ROW(...),
	// INSERT ... SET, PARTITION (...), a row alias AS new (c1, ...), and
	// empty () lists and rows; and neither a table alias nor DEFAULT
	// VALUES.
	MySQLInsert bool
	// TypeCasts: value::type casts a value.
	TypeCasts bool
	// SpliceQuote is the quote the rewriter writes a key column's name
	// with inside a statement, when the name needs quoting.
	SpliceQuote byte
	// AlwaysQuote: the rewriter quotes every name it writes (MySQL
	// reserves more words with every version).
	AlwaysQuote bool
}

// HashRule is what a '#' starts.
type HashRule uint8

// The rules of '#'.
const (
	HashOperator HashRule = iota + 1 // an operator (PostgreSQL)
	HashComment                      // a comment to the end of the line (MySQL)
	HashRefused                      // refused: a comment to some readers, not to others
)

// DashRule is when "--" starts a comment.
type DashRule uint8

// The rules of "--".
const (
	DashAlways DashRule = iota + 1 // always (PostgreSQL)
	// DashSpaced: only before white space, a control character or the
	// end; otherwise it is a minus sign (MySQL: 1--1 is 1 - (-1)).
	DashSpaced
	// DashRefusedUnspaced: always a comment, but one before anything else
	// is refused (a minus sign to MySQL's lexer).
	DashRefusedUnspaced
)

// BlockRule is how a /* ... */ comment reads.
type BlockRule uint8

// The rules of block comments.
const (
	BlockNested BlockRule = iota + 1 // comments nest (PostgreSQL)
	// BlockExecutable: comments do not nest, and the text of /*! ... */ is
	// read as if there were no comment (MySQL); versioned and MariaDB-only
	// executable comments are refused.
	BlockExecutable
	// BlockFlat: comments do not nest; /*! and a "/*" inside a comment are
	// refused.
	BlockFlat
)

// Syntax returns how the dialect reads a statement's text; the zero Syntax
// for Unknown.
func (d Dialect) Syntax() Syntax { return d.descriptor().syntax }

// WithSQLMode returns s as a session whose sql_mode has
// NO_BACKSLASH_ESCAPES (noBackslashEscapes) and ANSI_QUOTES (ansiQuotes)
// reads, on a dialect with SessionMode.
func (s Syntax) WithSQLMode(noBackslashEscapes, ansiQuotes bool) Syntax {
	if noBackslashEscapes {
		s.BackslashEscapes = false
	}
	if ansiQuotes {
		s.DoubleQuotedStrings = false
	}
	return s
}
