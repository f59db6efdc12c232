/* rotary.h - the rotation of rotary position embeddings
 * (runtime/eval/kernels/rotary.c), shared by the RotaryEmbedding-23 kernel
 * there and ONNX Runtime's com.microsoft.RotaryEmbedding in vendor.c, which
 * differ only in input order and in how they give positions. */
#ifndef GRAFT_ROTARY_H
#define GRAFT_ROTARY_H

#include <stdbool.h>
#include <stdint.h>

struct EvCtx;
struct EvValue;

/* Y = X rotated: X [batch, heads, seq, head] or [batch, seq, heads3 * head];
 * the first rd elements of each head (all when rd is 0) in pairs (halves,
 * or even/odd when interleaved) by cos/sin of the caches' row for (b, s):
 * cos_cache[pos[b, s]] ([max_pos, >= rd / 2] caches) or, pos NULL,
 * cos_cache[b, s] ([batch, seq, >= rd / 2]).  Sets *out; false after
 * ev_fail. */
bool ev_rotary(struct EvCtx *c, const struct EvValue *x, const struct EvValue *cc, const struct EvValue *sc,
               const struct EvValue *pos, int64_t heads3, int64_t rd, bool interleaved, struct EvValue **out);

#endif
