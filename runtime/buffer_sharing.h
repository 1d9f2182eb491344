/*
 * Device buffers shared by working tensors whose lives do not overlap.
 *
 * A graph with a reverse pass holds many tensors per pair, most of which
 * only the next node or two read: an exported message-passing model makes
 * dozens of [pairs, 3 x features] tensors a layer, and with a buffer each
 * a large box needs many chunks (each carrying its ghosts' shells) where
 * one pass would fit. Tensors that are never alive at the same time take
 * one buffer, as large as the largest of them.
 *
 * A tensor's life runs from the first node that may write it (its
 * producer, or an earlier node it is folded into as an epilogue) to the
 * last that may read it, or to the run's end for what is read after it,
 * where a read of an add's output counts as a read of the add's terms too
 * (the plan elides x + 0 and reads x). Lives are
 * counted in graph node order, which every node list of the plan keeps,
 * so one assignment serves every set of outputs. Two tensors share only
 * when one's last read comes strictly before the other's first write: no
 * node reads and writes one buffer, and backends that run nodes in order
 * or order them by the buffers they touch (Vulkan's levels) need nothing
 * more.
 */
#ifndef MLFF_RUNTIME_BUFFER_SHARING_H
#define MLFF_RUNTIME_BUFFER_SHARING_H

#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "core/graph.h"

/* For every tensor t of g: owner[t], the tensor whose buffer holds t
 * (t itself when it has its own). shareable[t] says which may share (the
 * plan's choice: working tensors no one keeps between runs); read_after[t]
 * which are read after a run (outputs, tensors named for tests);
 * written_at[t] is the first node that may write t; row_bytes[t] the bytes
 * of one of its rows. Tensors share only with tensors of the same size
 * symbol, so a buffer's size follows its rows. */
mlff_status mlff_share_buffers(const mlff_graph *g, const uint8_t *shareable, const uint8_t *read_after,
                               const int *written_at, const size_t *row_bytes, int *owner, mlff_error *err);

#endif
