/* lexer.re - the tokenizer of the rule language (re2c); see docs/rule-language.md.
 *
 * parse.c calls dsl_next_token() in a loop and hands each token to the
 * Lemon parser (grammar.y), SQLite-style.  Tokens are spans of the source
 * with their line, column and caret width; only strings are decoded (into
 * the file's arena).  The text must be followed by a NUL (parse.c copies it
 * so), which re2c uses as its sentinel; a NUL before the end is an error.
 *
 * Source files are UTF-8: every ill-formed sequence, wherever it is
 * (comments and strings included), is reported as "invalid UTF-8 byte 0xNN"
 * at its first byte.  Columns count characters, not bytes, so the caret
 * lines up under non-ASCII text.  A malformed number ("0.5.1", "1e", "0x1F")
 * is one error at the whole literal; inf and nan are numbers (TK_FLOAT).  Lexical errors skip the bad bytes and
 * go on, so one run reports everything. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "gen/dsl_grammar.h"
#include "dsl/parse_internal.h"

int dsl_utf8_len(const unsigned char *s, const unsigned char *end, bool *ok)
{
	unsigned c = s[0], lo = 0x80, hi = 0xBF;
	int need;
	*ok = true;
	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF)
		need = 1;
	else if (c == 0xE0)
		need = 2, lo = 0xA0;
	else if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF)
		need = 2;
	else if (c == 0xED)
		need = 2, hi = 0x9F;          /* no surrogates */
	else if (c == 0xF0)
		need = 3, lo = 0x90;
	else if (c >= 0xF1 && c <= 0xF3)
		need = 3;
	else if (c == 0xF4)
		need = 3, hi = 0x8F;          /* nothing above U+10FFFF */
	else {
		*ok = false;                  /* 0x80..0xC1, 0xF5..0xFF never start a character */
		return 1;
	}
	int i = 1;
	for (; i <= need && s + i < end; i++) {
		if (s[i] < lo || s[i] > hi)
			break;
		lo = 0x80, hi = 0xBF;
	}
	*ok = i > need;
	return i;
}

/* Advance (line, col) over [from, to); to must be on a character boundary. */
static void advance(const char *from, const char *to, int *line, int *col)
{
	const unsigned char *s = (const unsigned char *)from, *e = (const unsigned char *)to;
	while (s < e) {
		if (*s == '\n') {
			++*line;
			*col = 1;
			s++;
		} else if (*s < 0x80) {
			++*col;
			s++;
		} else {
			bool ok;
			s += dsl_utf8_len(s, e, &ok);
			++*col;
		}
	}
}

SrcPos dsl_pos(Lexer *lx, const char *at, unsigned n)
{
	if (at < lx->mark) {          /* rare: start over */
		lx->mark = lx->src;
		lx->mark_line = lx->mark_col = 1;
	}
	advance(lx->mark, at, &lx->mark_line, &lx->mark_col);
	lx->mark = at;
	SrcPos pos = {lx->mark_line, lx->mark_col, 0, (uint32_t)(at - lx->src)};
	/* caret width: the token's columns on its first line */
	const char *e = at;
	while (e < at + n && *e != '\n')
		e++;
	int line = 0, col = 0;
	advance(at, e, &line, &col);
	pos.len = col > 0 ? col : 1;
	return pos;
}

static void lex_error(Lexer *lx, const char *at, unsigned n, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void lex_error(Lexer *lx, const char *at, unsigned n, const char *fmt, ...)
{
	SrcPos pos = dsl_pos(lx, at, n);
	char msg[200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	dsl_error(lx->d, lx->f, pos, "%s", msg);
	lx->nerrors++;
}

static void bad_utf8(Lexer *lx, const char *at)
{
	SrcPos pos = dsl_pos(lx, at, 1);
	dsl_error(lx->d, lx->f, pos, "invalid UTF-8 byte 0x%02x", (unsigned)(unsigned char)*at);
	lx->nerrors++;
}

/* Report every ill-formed UTF-8 sequence in [s, e) (a comment's text). */
static void check_utf8(Lexer *lx, const char *s, const char *e)
{
	while (s < e) {
		if ((unsigned char)*s < 0x80) {
			s++;
			continue;
		}
		bool ok;
		int n = dsl_utf8_len((const unsigned char *)s, (const unsigned char *)e, &ok);
		if (!ok)
			bad_utf8(lx, s);
		s += n;
	}
}

static int hexval(int c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
	       c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* A run of digits, letters and dots that is no number (the rules of
 * dsl_next_token make it: "0.5.1", "1e", "2.", ".5", "0x1F", "2x"): one
 * error at the whole run saying what is wrong with it. */
static int bad_number(Lexer *lx, const char *start, const char *end)
{
	unsigned n = (unsigned)(end - start);
	int w = n > 40 ? 40 : (int)n;
	const char *s = start, *dot = memchr(start, '.', n);
	if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		unsigned long long v = 0;
		unsigned i = 2;
		for (; i < n && i < 17 && hexval((unsigned char)s[i]) >= 0; i++)
			v = v * 16 + (unsigned)hexval((unsigned char)s[i]);
		if (i == n)
			lex_error(lx, start, n, "malformed number '%.*s' (hexadecimal is not supported; write %llu)", w, s, v);
		else
			lex_error(lx, start, n, "malformed number '%.*s' (hexadecimal is not supported)", w, s);
		return -1;
	}
	if (dot && memchr(dot + 1, '.', n - (unsigned)(dot + 1 - s))) {
		lex_error(lx, start, n, "malformed number '%.*s' (more than one '.')", w, s);
		return -1;
	}
	if (s[0] == '.') {
		lex_error(lx, start, n, "malformed number '%.*s' (no digit before '.'; write 0%.*s)", w, s, w, s);
		return -1;
	}
	while (s < end && *s >= '0' && *s <= '9')
		s++;
	if (s < end && *s == '.') {
		if (s + 1 == end || s[1] < '0' || s[1] > '9') {
			int k = (int)(s + 1 - start);      /* up to the '.': 2. -> 2.0, 1.e5 -> 1.0e5 */
			lex_error(lx, start, n, "malformed number '%.*s' (no digit after '.'; write %.*s0%.*s)", w, start,
			          k, start, w > k ? w - k : 0, s + 1);
			return -1;
		}
		for (s++; s < end && *s >= '0' && *s <= '9'; s++)
			;
	}
	if (s < end && (*s == 'e' || *s == 'E')) {
		const char *x = s + 1;
		if (x < end && (*x == '+' || *x == '-'))
			x++;
		if (x == end || *x < '0' || *x > '9') {
			lex_error(lx, start, n, "malformed number '%.*s' (the exponent has no digits)", w, start);
			return -1;
		}
	}
	lex_error(lx, start, n, "malformed number '%.*s'", w, start);
	return -1;
}

/* A string from its opening quote: decodes \n \t \r \\ \" \' and \u{hex}
 * into the arena.  Strings end on their line; one left open is reported at
 * its opening quote and ends there (the next line is lexed as usual). */
static int lex_string(Lexer *lx, const char *start, Token *tok)
{
	const char *s = start + 1;
	size_t cap = 16, n = 0;
	char *out = arena_alloc(lx->f->arena, cap);
	for (;;) {
		unsigned char c = (unsigned char)*s;
		if (c == '"') {
			s++;
			break;
		}
		if (c == '\n' || (c == 0 && s >= lx->end) || c == '\r') {
			lex_error(lx, start, 1, "unterminated string");
			lx->cur = s;
			return -1;
		}
		char buf[4];
		int len = 1;
		if (c == 0) {
			lex_error(lx, s, 1, "NUL character in a string");
			s++;
			continue;
		} else if (c == '\\') {
			unsigned char e = (unsigned char)s[1];
			int w = 2;
			switch (e) {
			case 'n': buf[0] = '\n'; break;
			case 't': buf[0] = '\t'; break;
			case 'r': buf[0] = '\r'; break;
			case '\\': buf[0] = '\\'; break;
			case '"': buf[0] = '"'; break;
			case '\'': buf[0] = '\''; break;
			case 'u': {
				/* \u{1F600}: 1 to 6 hex digits, a scalar value other than NUL */
				const char *q = s + 2;
				unsigned long v = 0;
				int nd = 0;
				if (*q == '{') {
					for (q++; hexval((unsigned char)*q) >= 0 && nd < 7; q++, nd++)
						v = v * 16 + (unsigned long)hexval((unsigned char)*q);
				}
				if (*q != '}' || nd == 0 || nd > 6 || v == 0 || v > 0x10FFFF || (v >= 0xD800 && v <= 0xDFFF)) {
					lex_error(lx, s, 2, "bad escape '\\u' (expected \\u{HEX} naming a character)");
					s += 2;
					continue;
				}
				w = (int)(q + 1 - s);
				if (v < 0x80) {
					buf[0] = (char)v;
				} else if (v < 0x800) {
					buf[0] = (char)(0xC0 | v >> 6), buf[1] = (char)(0x80 | (v & 0x3F)), len = 2;
				} else if (v < 0x10000) {
					buf[0] = (char)(0xE0 | v >> 12), buf[1] = (char)(0x80 | ((v >> 6) & 0x3F));
					buf[2] = (char)(0x80 | (v & 0x3F)), len = 3;
				} else {
					buf[0] = (char)(0xF0 | v >> 18), buf[1] = (char)(0x80 | ((v >> 12) & 0x3F));
					buf[2] = (char)(0x80 | ((v >> 6) & 0x3F)), buf[3] = (char)(0x80 | (v & 0x3F)), len = 4;
				}
				break;
			}
			default:
				if (e == '\n' || e == '\r' || (e == 0 && s + 1 >= lx->end)) {
					s++;          /* the string is left open: reported above */
					continue;
				}
				if (e >= 0x20 && e < 0x7f) {
					char esc[3] = {'\\', (char)e, 0};
					lex_error(lx, s, 2, "unknown escape '%s' in a string (expected \\n \\t \\r \\\\ \\\" \\' or \\u{HEX})", esc);
				} else {
					lex_error(lx, s, 1, "unknown escape in a string (expected \\n \\t \\r \\\\ \\\" \\' or \\u{HEX})");
				}
				s += 1;       /* the escaped byte is looked at again */
				continue;
			}
			s += w;
		} else if (c >= 0x80) {
			bool ok;
			len = dsl_utf8_len((const unsigned char *)s, (const unsigned char *)lx->end, &ok);
			if (!ok) {
				bad_utf8(lx, s);
				s += len;
				continue;
			}
			memcpy(buf, s, (size_t)len);
			s += len;
		} else {
			buf[0] = (char)c;
			s++;
		}
		if (n + (size_t)len + 1 > cap) {
			char *bigger = arena_alloc(lx->f->arena, cap * 2);
			memcpy(bigger, out, n);
			out = bigger;
			cap *= 2;
		}
		memcpy(out + n, buf, (size_t)len);
		n += (size_t)len;
	}
	out[n] = 0;
	tok->n = (unsigned)(s - start);
	tok->pos = dsl_pos(lx, start, tok->n);
	tok->s = out;
	lx->cur = s;
	return TK_STRING;
}

int dsl_next_token(Lexer *lx, Token *tok)
{
	const unsigned char *YYCURSOR = (const unsigned char *)lx->cur, *YYMARKER;
	for (;;) {
		const unsigned char *start = YYCURSOR;
		tok->z = (const char *)start;
		tok->s = NULL;
#define TOKEN(code) do { \
		tok->n = (unsigned)(YYCURSOR - start); \
		tok->pos = dsl_pos(lx, (const char *)start, tok->n); \
		lx->cur = (const char *)YYCURSOR; \
		return (code); \
	} while (0)
	/*!re2c
		re2c:define:YYCTYPE = "unsigned char";
		re2c:yyfill:enable = 0;

		digit = [0-9];
		idchar = [A-Za-z0-9_];
		ident = [A-Za-z_] idchar*;
		exp = [eE] [+-]? digit+;

		"\x00" {
			if ((const char *)start >= lx->end) {
				tok->n = 0;
				tok->pos = dsl_pos(lx, lx->end, 0);
				lx->cur = lx->end;
				return 0;
			}
			lex_error(lx, (const char *)start, 1, "unexpected NUL character");
			lx->cur = (const char *)YYCURSOR;
			return -1;
		}
		[ \t\r\n\f\v]+ { continue; }
		"//" [^\n\x00]* {
			check_utf8(lx, (const char *)start, (const char *)YYCURSOR);
			continue;
		}
		"/*" {
			const char *close = NULL;
			for (const char *q = (const char *)YYCURSOR; q + 1 < lx->end; q++)
				if (q[0] == '*' && q[1] == '/') {
					close = q + 2;
					break;
				}
			if (!close) {
				lex_error(lx, (const char *)start, 2, "unterminated comment");
				check_utf8(lx, (const char *)YYCURSOR, lx->end);
				lx->cur = lx->end;
				YYCURSOR = (const unsigned char *)lx->end;
				continue;
			}
			check_utf8(lx, (const char *)YYCURSOR, close);
			YYCURSOR = (const unsigned char *)close;
			continue;
		}

		"rule" { TOKEN(TK_RULE); }
		"level" { TOKEN(TK_LEVEL); }
		"extern" { TOKEN(TK_EXTERN); }
		"if" { TOKEN(TK_IF); }
		"shared" { TOKEN(TK_SHARED); }
		"const" { TOKEN(TK_CONST); }
		"true" { TOKEN(TK_TRUE); }
		"false" { TOKEN(TK_FALSE); }
		/* the float constants, numbers like 0.5 (not names) */
		"inf" | "nan" { TOKEN(TK_FLOAT); }
		"NaN" | "NAN" | "Nan" | "Inf" | "INF" | "Infinity" {
			lex_error(lx, (const char *)start, (unsigned)(YYCURSOR - start), "'%.*s' is written %s in rules",
			          (int)(YYCURSOR - start), (const char *)start, *start == 'N' ? "nan" : "inf");
			lx->cur = (const char *)YYCURSOR;
			return -1;
		}
		[a-z_] idchar* { TOKEN(TK_NAME); }
		(ident ".")* [A-Z] idchar* { TOKEN(TK_OP); }

		digit+ { TOKEN(TK_INT); }
		digit+ "." digit+ exp? { TOKEN(TK_FLOAT); }
		digit+ exp { TOKEN(TK_FLOAT); }
		/* Anything else that starts like a number runs on to the next
		 * character that cannot be in one (a '.' only before a name
		 * character, so 13..17 stays a range; a sign only after e):
		 * "0.5.1", "1e", "0x1F", "2x", ".5", and "2." before anything but
		 * a '.' (that character is matched, then given back). */
		numrun = digit (idchar | "." idchar | [eE] [+-])*;
		numrun | "." digit (idchar | "." idchar | [eE] [+-])* {
			lx->cur = (const char *)YYCURSOR;
			return bad_number(lx, (const char *)start, (const char *)YYCURSOR);
		}
		numrun "." [^.] {
			lx->cur = (const char *)YYCURSOR - 1;
			return bad_number(lx, (const char *)start, lx->cur);
		}

		"\"" { return lex_string(lx, (const char *)start, tok); }

		"=>" { TOKEN(TK_ARROW); }
		"..." { TOKEN(TK_ELLIPSIS); }
		".." { TOKEN(TK_DOTDOT); }
		"??" { TOKEN(TK_QQ); }
		"++" { TOKEN(TK_CONCAT); }
		"&&" { TOKEN(TK_ANDAND); }
		"||" { TOKEN(TK_OROR); }
		"==" { TOKEN(TK_EQEQ); }
		"!=" { TOKEN(TK_NE); }
		"<=" { TOKEN(TK_LE); }
		">=" { TOKEN(TK_GE); }
		"<" { TOKEN(TK_LT); }
		">" { TOKEN(TK_GT); }
		"=" { TOKEN(TK_ASSIGN); }
		"!" { TOKEN(TK_NOT); }
		"+" { TOKEN(TK_PLUS); }
		"-" { TOKEN(TK_MINUS); }
		"*" { TOKEN(TK_STAR); }
		"/" { TOKEN(TK_SLASH); }
		"(" { TOKEN(TK_LPAREN); }
		")" { TOKEN(TK_RPAREN); }
		"[" { TOKEN(TK_LBRACKET); }
		"]" { TOKEN(TK_RBRACKET); }
		"," { TOKEN(TK_COMMA); }
		":" { TOKEN(TK_COLON); }
		";" { TOKEN(TK_SEMI); }
		"@" { TOKEN(TK_AT); }
		"#" { TOKEN(TK_HASH); }
		"~" { TOKEN(TK_TILDE); }
		"?" { TOKEN(TK_QUESTION); }

		[\x80-\xff] {
			bool ok;
			int n = dsl_utf8_len(start, (const unsigned char *)lx->end, &ok);
			if (!ok) {
				bad_utf8(lx, (const char *)start);
			} else {
				char ch[5] = {0};
				memcpy(ch, start, (size_t)n);
				lex_error(lx, (const char *)start, (unsigned)n, "unexpected character '%s'", ch);
			}
			lx->cur = (const char *)start + n;
			return -1;
		}
		* {
			char ch[2] = {(char)*start, 0};
			if (*start >= 0x20 && *start < 0x7f)
				lex_error(lx, (const char *)start, 1, "unexpected character '%s'", ch);
			else
				lex_error(lx, (const char *)start, 1, "unexpected character 0x%02x", *start);
			lx->cur = (const char *)YYCURSOR;
			return -1;
		}
	*/
#undef TOKEN
	}
}
