/* text_lexer.re - the tokenizer of ONNX's text syntax (re2c).
 *
 * text_parse.c calls text_next_token() in a loop and hands each token to
 * the Lemon parser (text_grammar.y), SQLite-style.  Tokens are spans of the
 * source: nothing is copied.  The source must be followed by a NUL (the
 * driver guarantees it), which re2c uses as its sentinel.
 *
 * Numbers keep their sign ("-3" is one token: no rule has a binary minus).
 * "inf" and "nan" are identifiers here and numbers only where the grammar
 * expects a number; "-inf", "-nan" and "-infinity" are FLOAT tokens. */
#include <stdio.h>

#include "ir/diag.h"
#include "gen/text_grammar.h"
#include "ir/text_internal.h"

/* Report a bad token at [at, at+n). */
static void lex_error(Lexer *lx, const char *at, unsigned n, const char *msg)
{
	int line = 1, col = 1;
	for (const char *p = lx->src; p < at; p++) {
		if (*p == '\n') {
			line++;
			col = 1;
		} else {
			col++;
		}
	}
	diag_at(lx->d, DIAG_ERROR, lx->file, line, col, (int)(n ? n : 1), lx->src,
	        (size_t)(lx->end - lx->src), "%s", msg);
}

int text_next_token(Lexer *lx, Token *tok)
{
	const unsigned char *YYCURSOR = (const unsigned char *)lx->cur, *YYMARKER;
	for (;;) {
		const unsigned char *start = YYCURSOR;
		tok->z = (const char *)start;
#define TOKEN(code) do { tok->n = (unsigned)(YYCURSOR - start); lx->cur = (const char *)YYCURSOR; return (code); } while (0)
	/*!re2c
		re2c:define:YYCTYPE = "unsigned char";
		re2c:yyfill:enable = 0;

		digit = [0-9];
		exp = [eE] [+-]? digit+;
		special = "inf" | "infinity" | "nan";

		"\x00" {
			if ((const char *)start >= lx->end) {
				tok->n = 0;
				lx->cur = lx->end;
				return 0;
			}
			lex_error(lx, (const char *)start, 1, "unexpected NUL character");
			lx->cur = (const char *)YYCURSOR;
			return -1;
		}
		[ \t\r\n\f\v]+ { continue; }
		"#" [^\n\x00]* { continue; }

		[A-Za-z_] [A-Za-z0-9_]* { TOKEN(TK_ID); }
		"-"? digit+ { TOKEN(TK_INT); }
		"-"? digit+ "." digit* exp? { TOKEN(TK_FLOAT); }
		"-"? digit+ exp { TOKEN(TK_FLOAT); }
		"-" special { TOKEN(TK_FLOAT); }

		"\"" ([^"\\\x00] | "\\" [^\x00])* "\"" { TOKEN(TK_STRING); }
		"\"" ([^"\\\x00] | "\\" [^\x00])* "\\"? {
			lex_error(lx, (const char *)start, 1, "unterminated string");
			lx->cur = lx->end;
			return -1;
		}

		"=>" { TOKEN(TK_ARROW); }
		"(" { TOKEN(TK_LPAREN); }
		")" { TOKEN(TK_RPAREN); }
		"[" { TOKEN(TK_LBRACKET); }
		"]" { TOKEN(TK_RBRACKET); }
		"{" { TOKEN(TK_LBRACE); }
		"}" { TOKEN(TK_RBRACE); }
		"<" { TOKEN(TK_LT); }
		">" { TOKEN(TK_GT); }
		"," { TOKEN(TK_COMMA); }
		":" { TOKEN(TK_COLON); }
		"=" { TOKEN(TK_EQ); }
		"." { TOKEN(TK_DOT); }
		"?" { TOKEN(TK_QUESTION); }
		"@" { TOKEN(TK_AT); }

		* {
			char msg[64];
			unsigned char c = *start;
			if (c >= 0x20 && c < 0x7f)
				snprintf(msg, sizeof msg, "unexpected character '%c'", c);
			else
				snprintf(msg, sizeof msg, "unexpected character 0x%02x", c);
			lex_error(lx, (const char *)start, 1, msg);
			lx->cur = (const char *)YYCURSOR;
			return -1;
		}
	*/
#undef TOKEN
	}
}
