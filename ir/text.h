/* text.h - ONNX's textual syntax for models (the one onnx.printer writes and
 * onnx.parser reads, docs/Syntax.md in ONNX) for graft's IR.
 *
 * Tests write small graphs as text instead of building them by hand, and
 * `graft print` shows a model to a person.  text_print.c writes the syntax;
 * text_lexer.re (re2c), text_grammar.y (Lemon) and text_parse.c read it.
 *
 *   <ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
 *   main (float[N,3] x, bool c) => (float[N,3] y)
 *      <float[3] w = {1.0, 2.0, 3.0}>
 *   {
 *      [mul_0] t = Mul (x, w)
 *      y = If (c) <then_branch: graph = then_g () => (t2) { t2 = Relu (t) },
 *                  else_branch: graph = else_g () => (t3) { t3 = Identity (t) }>
 *   }
 *
 * What the printer writes, and the parser accepts:
 *   - names that are not identifiers are quoted ("0", "x.1"; \ and " are
 *     escaped with a backslash); an omitted optional input or output is
 *     empty ("Op (x, , z)"), or "" when it is the last one;
 *   - node names as "[name]" before the outputs (only when not empty);
 *   - ops of other domains as "com.microsoft.Gelu";
 *   - every attribute with its type, "perm: ints = [1, 0]", so empty lists
 *     and ints-versus-floats survive; floats always carry a "." or an
 *     exponent (the 1.12 parser types a value by its literal), in the
 *     shortest form that reads back to the same bits; inf, -inf, nan;
 *   - value types: "float[N,?,3]"; "float" is a scalar (rank 0) and
 *     "float[]" a tensor of unknown rank, as in ONNX; untyped values are a
 *     bare name;
 *   - initializers, all in the "<...>" list after the outputs, with every
 *     value ("float[2] w = {1.0, 2.0}"); an input's default value is the
 *     initializer of the same name.  float16/bfloat16/float8 values are
 *     written as their bit patterns, as ONNX's printer and parser do (a
 *     decimal value would be read by ONNX as a bit pattern); complex values
 *     as re, im pairs; 4-bit types one value per element;
 *   - value types known for node outputs (value_info) in the same "<...>"
 *     list, as "float[2] t".
 *
 * The parser also accepts what ONNX's parser accepts on input: attributes
 * without a type ("alpha = 0.5"), attributes after the inputs, an input's
 * default value in the input list ("float[2] w = {1, 2}"), "#" comments.
 * A model without a "<...>" header gets ir_version 8 and opset_import
 * ["" : 17] (what the installed ONNX 1.12 knows, so parsed test models pass
 * its checker).  Header fields the IR has no place for (producer_name,
 * producer_version, domain, model_version, doc_string, metadata_props) are
 * accepted and dropped.  Types the IR does not model (seq, map, optional,
 * sparse_tensor) are accepted and leave the value untyped.  Not accepted:
 * functions after the graph, attribute references ("@name"), type_proto
 * and sparse tensor attributes, external data ("[...]" for tensor values).
 *
 * Nodes must come in topological order (a node input must name a value
 * defined above it, in its graph or an enclosing one). */
#ifndef GRAFT_TEXT_H
#define GRAFT_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "diag.h"
#include "ir.h"

/* Print m in the syntax above.  Fails (false, with a message) only for what
 * the syntax cannot hold: sparse initializers, attribute types the IR does
 * not model, a failing write. */
bool ir_print_model(IrModel *m, FILE *out, Diag *d);

/* Parse a model.  `text` need not be NUL-terminated; `filename` is used in
 * messages ("file:line:col: error: ...", then the line and a caret).
 * Returns NULL after reporting the errors to d. */
IrModel *ir_parse_model(const char *text, size_t len, const char *filename, Diag *d);

#endif
