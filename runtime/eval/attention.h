/* attention.h - the two schedules of the Attention kernel
 * (runtime/eval/kernels/attention.c), exported so that tests can hold them
 * to each other and `make bench` can time them on long sequences.
 *
 * Both take Q [batch, q_heads, q_len, head], K [batch, kv_heads, kv_len,
 * head] and V [batch, kv_heads, kv_len, v_head] as contiguous arrays of the
 * working type (float or double) and write Y [batch, q_heads, q_len,
 * v_head].  The evaluator's kernel prepares these from the op's inputs
 * (3-D forms split into heads, past key/value prepended, the mask turned
 * into an additive bias). */
#ifndef GRAFT_ATTENTION_H
#define GRAFT_ATTENTION_H

#include <stdbool.h>
#include <stdint.h>

/* The flash schedule's tile: query rows and key rows per block. */
#define ATT_BQ 32
#define ATT_BK 64

typedef struct AttShape {
	int64_t batch, q_heads, kv_heads;   /* q_heads a multiple of kv_heads */
	int64_t q_len, kv_len;              /* kv_len counts the past too */
	int64_t head, v_head;               /* head sizes of Q/K and of V */
	int64_t past;                       /* positions of past_key before K (causal offset) */
	double scale;                       /* multiplies Q . K */
	double softcap;                     /* > 0: scores become softcap * tanh(s / softcap) */
	bool causal;                        /* key j masked for query i when j > i + past */
} AttShape;

typedef struct AttInputs {
	const void *q, *k, *v;
	/* Additive bias (NULL: none), read at b * bias_strides[0] + h *
	 * bias_strides[1] + i * bias_strides[2] + j; a stride is 0 along an axis
	 * the mask broadcasts. */
	const void *bias;
	int64_t bias_strides[4];
	/* naive only: where to write qk_matmul_output [batch, q_heads, q_len,
	 * kv_len] (NULL: not wanted), and which (qk_matmul_output_mode 0-3). */
	void *qk;
	int qk_mode;
} AttInputs;

void att_naive_f32(const AttShape *s, const AttInputs *in, float *y);
void att_flash_f32(const AttShape *s, const AttInputs *in, float *y);
void att_naive_f64(const AttShape *s, const AttInputs *in, double *y);
void att_flash_f64(const AttShape *s, const AttInputs *in, double *y);

/* com.microsoft MultiHeadAttention on the same kernel (its table entry is
 * in runtime/eval/vendor.c). */
struct EvCtx;
struct EvValue;
bool ev_kernel_multi_head_attention(struct EvCtx *c, struct EvValue **in, int nin, struct EvValue **out, int nout);

#endif
