/* ir_internal.h - IR entry points shared by the files of ir/ only (graph.c,
 * tensor.c, onnx_load.c, onnx_save.c).  They borrow strings instead of
 * copying them (the loader points into the unpacked protobuf), or free what
 * only ir_model_free may, so they are not part of the public API. */
#ifndef GRAFT_IR_INTERNAL_H
#define GRAFT_IR_INTERNAL_H

#include "ir.h"

ValueId ir_new_value_borrowed(IrModel *m, GraphId g, const char *name);
NodeId ir_node_alloc(IrModel *m, GraphId g, NodeId before, const char *domain,
                     const char *op_type, const char *name, uint32_t ninputs, uint32_t noutputs);
bool ir_node_define_output(IrModel *m, NodeId n, uint32_t slot, const char *name);
void ir_node_add_use(IrModel *m, NodeId n, uint32_t slot);
TensorId ir_tensor_from_proto(IrModel *m, const Onnx__TensorProto *p, const char *where, Diag *d);
/* nothing reads t any more: free what the IR made for it (tensor.c) */
void ir_tensor_let_go(IrModel *m, TensorId t);
/* ir_model_free's steps (tensor.c): the tensors' own bytes, then the loaded
 * file they may point into (the unpacked protobuf, the mappings). */
void ir_tensors_free(IrModel *m);
void ir_proto_free(IrModel *m);

#endif
