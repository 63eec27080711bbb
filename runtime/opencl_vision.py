"""Vision operators that are not loop nests, on an OpenCL device: non-maximum suppression.

`graph.nms` placed on the device (`place-devices`) runs here, in the GPU design of
torchvision's CUDA kernel:

1. `nms_rank`: one work item per box ranks it among the candidates (score above the
   threshold) by (NaN last, descending score, index) — the order of the reference's
   stable argsort — in O(N) comparisons, and writes itself at its rank: a parallel sort.
   Slots past the candidates keep -1. From `SORT_FROM` boxes, `nms_sort` writes the
   same order by a bitonic sort in one work-group.
2. `nms_mask`: one work item per (candidate a, 32 candidates b) sets bit b of row a when
   b comes after a and their IoU (in double, as the reference) exceeds the threshold:
   all IoUs in parallel, as a bit matrix.
3. `nms_scan`: one work item walks the candidates in order, keeping a candidate that no
   kept one suppressed and or-ing its mask row into the removed bits (N²/32 word
   operations), writing the kept indices and their count.

When few outputs are wanted among many candidates (`max_output` x `GREEDY_RATIO` <= N),
no order and no matrix: `nms_keys` gives each box an i64 order key (one work item per
box), then one work-group picks `max_output` times the largest key left (a reduction)
and removes the boxes overlapping it (`nms_pick`: max_output x N IoUs at most).

The count is read back (8 bytes) to give the result its shape: the output is allocated
at its upper bound `min(N, max_output)` and viewed at the count, like every
data-dependent result. Devices without double precision, and inputs to the bit matrix
above `MAX_BOXES` (it grows as N²/8 bytes), run the reference on the host instead.
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from nimble.runtime.opencl import ClTensor, OpenCLRuntime

MAX_BOXES = 16384
WORD = 32
SORT_FROM = 512
"""From this many boxes the candidates are ordered by `nms_sort` (one work-group's
bitonic sort) instead of `nms_rank` (O(N^2) comparisons: 2.1 ms for 2304 boxes on
pocl)."""
GREEDY_RATIO = 4
"""`nms_keys` + `nms_pick` (one work-group, IoUs of kept candidates only) where at most
one output is wanted per this many candidates: 2304 boxes, at most 50 kept, on pocl:
the bit matrix's kernel alone took 13.3 ms."""

NMS_SOURCE = """
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
/* IoUs round like the reference's (numpy: no fused multiply-adds). */
#pragma OPENCL FP_CONTRACT OFF
#define NB_NONE LONG_MIN
static inline int nb_candidate(float s, int has_threshold, float threshold) {
  return has_threshold ? s > threshold : 1;
}

/* Whether box x comes before box y in the candidates' order: candidates first, then
   NaN scores last, descending score, index; -1 (padding) after everything. */
static inline int nb_first(__global const float *scores, long x, long y, int has_threshold, float threshold) {
  if (x < 0 || y < 0) return x >= 0;
  float sx = scores[x], sy = scores[y];
  int cx = nb_candidate(sx, has_threshold, threshold), cy = nb_candidate(sy, has_threshold, threshold);
  if (cx != cy) return cx;
  if (isnan(sx) != isnan(sy)) return !isnan(sx);
  if (!isnan(sx) && sx != sy) return sx > sy;
  return x < y;
}

/* Rank of candidate i: how many boxes come before it (only candidates can). */
__kernel void nms_rank(__global const float *scores, long scores_off, long n, int has_threshold, float threshold,
                       __global long *order) {
  long i = get_global_id(0);
  if (i >= n) return;
  scores += scores_off;
  if (!nb_candidate(scores[i], has_threshold, threshold)) return;
  long rank = 0;
  for (long j = 0; j < n; j++) rank += j != i && nb_first(scores, j, i, has_threshold, threshold);
  order[rank] = i;
}

/* The same order as nms_rank's, by a bitonic sort of the box indices in one work-group
   (`padded`, a power of two, >= n; O(N log^2 N) comparisons instead of O(N^2)). */
__kernel void nms_sort(__global const float *scores, long scores_off, long n, int has_threshold, float threshold,
                       long padded, __global long *keys, __global long *order) {
  long lid = get_local_id(0), items = get_local_size(0);
  scores += scores_off;
  for (long k = lid; k < padded; k += items) keys[k] = k < n ? k : -1;
  barrier(CLK_GLOBAL_MEM_FENCE);
  for (long size = 2; size <= padded; size <<= 1) {
    for (long stride = size >> 1; stride > 0; stride >>= 1) {
      for (long i = lid; i < padded; i += items) {
        long l = i ^ stride;
        if (l <= i) continue;
        long ki = keys[i], kl = keys[l];
        int swap = (i & size) == 0 ? nb_first(scores, kl, ki, has_threshold, threshold)
                                   : nb_first(scores, ki, kl, has_threshold, threshold);
        if (swap) { keys[i] = kl; keys[l] = ki; }
      }
      barrier(CLK_GLOBAL_MEM_FENCE);
    }
  }
  for (long k = lid; k < n; k += items) {
    long i = keys[k];
    order[k] = i >= 0 && nb_candidate(scores[i], has_threshold, threshold) ? i : -1;
  }
}

static inline double nb_iou(__global const float *a, __global const float *b) {
  double ax1 = fmin((double)a[0], (double)a[2]), ay1 = fmin((double)a[1], (double)a[3]);
  double ax2 = fmax((double)a[0], (double)a[2]), ay2 = fmax((double)a[1], (double)a[3]);
  double bx1 = fmin((double)b[0], (double)b[2]), by1 = fmin((double)b[1], (double)b[3]);
  double bx2 = fmax((double)b[0], (double)b[2]), by2 = fmax((double)b[1], (double)b[3]);
  double iw = fmax(fmin(ax2, bx2) - fmax(ax1, bx1), 0.0);
  double ih = fmax(fmin(ay2, by2) - fmax(ay1, by1), 0.0);
  double inter = iw * ih;
  double uni = (ax2 - ax1) * (ay2 - ay1) + (bx2 - bx1) * (by2 - by1) - inter;
  return uni > 0.0 ? inter / uni : 0.0;
}

/* Bit b of mask[a][w] (b = 32 w + bit): candidate b comes after a and overlaps it. */
__kernel void nms_mask(__global const float *boxes, long boxes_off, __global const long *order, long n, long words,
                       double iou_threshold, __global uint *mask) {
  long a = get_global_id(1), w = get_global_id(0);
  if (a >= n || w >= words) return;
  long ia = order[a];
  uint bits = 0;
  if (ia >= 0) {
    boxes += boxes_off;
    for (int bit = 0; bit < 32; bit++) {
      long b = w * 32 + bit;
      if (b <= a || b >= n) continue;
      long ib = order[b];
      if (ib >= 0 && nb_iou(boxes + 4 * ia, boxes + 4 * ib) > iou_threshold) bits |= 1u << bit;
    }
  }
  mask[a * words + w] = bits;
}

/* The greedy pass: keep a candidate no kept one suppressed; its row joins the removed. */
__kernel void nms_scan(__global const long *order, long n, __global const uint *mask, long words, long limit,
                       __global uint *removed, __global long *keep, __global long *count) {
  if (get_global_id(0) != 0) return;
  for (long w = 0; w < words; w++) removed[w] = 0;
  long kept = 0;
  for (long a = 0; a < n && kept < limit; a++) {
    long i = order[a];
    if (i < 0) break;
    if ((removed[a / 32] >> (a % 32)) & 1u) continue;
    keep[kept++] = i;
    for (long w = a / 32; w < words; w++) removed[w] |= mask[a * words + w];
  }
  *count = kept;
}

/* The order key of box i: the score's bits made to compare as integers (-0 as 0, NaN
   below -inf) above the complement of the index, so the largest key is the next
   candidate in the reference's order (as runtime/cpu_vision.py's kernel). */
static inline long nb_key(float s, long i) {
  int bits = as_int(s == 0.0f ? 0.0f : s);
  int ordered = isnan(s) ? INT_MIN : (bits < 0 ? bits ^ 0x7fffffff : bits);
  return as_long(((ulong)(uint)ordered << 32) | (ulong)(0xffffffffL - i));
}

__kernel void nms_keys(__global const float *scores, long scores_off, long n, int has_threshold, float threshold,
                       __global long *keys) {
  long i = get_global_id(0);
  if (i >= n) return;
  float s = scores[scores_off + i];
  keys[i] = nb_candidate(s, has_threshold, threshold) ? nb_key(s, i) : NB_NONE;
}

/* Greedy NMS in one work-group, for few outputs among many candidates, with no sort:
   each pick is the largest key left (the work-items' maxima, then a tree in local
   memory: `items` is a power of two), kept; then the work-items together remove the
   boxes whose IoU with it exceeds the threshold (max_output x N IoUs at most). */
__kernel void nms_pick(__global const float *boxes, long boxes_off, long n, long limit, double iou_threshold,
                       __global long *keys, __global long *keep, __global long *count, __local long *best) {
  long lid = get_local_id(0), items = get_local_size(0);
  boxes += boxes_off;
  long kept = 0;
  for (; kept < limit; kept++) {
    long mine = NB_NONE;
    for (long j = lid; j < n; j += items) mine = max(mine, keys[j]);
    best[lid] = mine;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (long span = items / 2; span > 0; span /= 2) {
      if (lid < span) best[lid] = max(best[lid], best[lid + span]);
      barrier(CLK_LOCAL_MEM_FENCE);
    }
    long top = best[0];
    barrier(CLK_LOCAL_MEM_FENCE);  /* all have read it before the next pick writes */
    if (top == NB_NONE) break;
    long i = 0xffffffffL - (top & 0xffffffffL);
    if (lid == 0) keep[kept] = i;
    for (long j = lid; j < n; j += items) {
      if (keys[j] != NB_NONE && (j == i || nb_iou(boxes + 4 * i, boxes + 4 * j) > iou_threshold)) keys[j] = NB_NONE;
    }
    barrier(CLK_GLOBAL_MEM_FENCE);
  }
  if (lid == 0) *count = kept;
}
"""


def supports(runtime: OpenCLRuntime) -> bool:
    """Whether the device can run these kernels (double precision for the IoUs)."""
    return bool(getattr(runtime.device, "double_fp_config", 0))


def nms(runtime: OpenCLRuntime, boxes: ClTensor, scores: ClTensor, iou_threshold: float,
        score_threshold: float | None, max_output: int | None, reference: Any) -> ClTensor:
    """The kept indices by descending score, in device memory (see the module doc)."""
    import pyopencl as cl

    n = int(scores.shape[0])
    limit = n if max_output is None else min(n, int(max_output))
    if boxes.shape != (n, 4) or boxes.dtype != np.float32 or scores.dtype != np.float32:
        raise ValueError(f"nms on the device takes f32 boxes [N, 4] and scores [N], got {boxes!r} and {scores!r}")
    greedy = limit * GREEDY_RATIO <= n
    if (n > MAX_BOXES and not greedy) or not supports(runtime) or n == 0 or limit == 0:
        kept = reference(boxes.to_host(), scores.to_host())
        return runtime.to_device(kept)
    kernels = _kernels(runtime)
    queue = runtime.queue
    count = runtime.alloc(8)
    keep = runtime.alloc(limit * 8)
    has_threshold = score_threshold is not None
    threshold = score_threshold if has_threshold else 0.0
    items = 1 << (runtime.group_items.bit_length() - 1)  # a power of two (the pick's tree)
    if greedy:
        keys = runtime.alloc(n * 8)
        kernels["nms_keys"](queue, (n,), None, scores.storage.buffer, scores.offset // 4, n, int(has_threshold),
                            threshold, keys.buffer)
        kernels["nms_pick"](queue, (items,), (items,), boxes.storage.buffer, boxes.offset // 4, n, limit,
                            iou_threshold, keys.buffer, keep.buffer, count.buffer, cl.LocalMemory(items * 8))
        scratch = [keys, count]
    else:
        order = runtime.alloc(n * 8)
        cl.enqueue_fill_buffer(queue, order.buffer, np.int64(-1), 0, n * 8)
        if n >= SORT_FROM:
            padded = 1 << (n - 1).bit_length()
            keys = runtime.alloc(padded * 8)
            kernels["nms_sort"](queue, (items,), (items,), scores.storage.buffer, scores.offset // 4, n,
                                int(has_threshold), threshold, padded, keys.buffer, order.buffer)
            runtime.release(keys)
        else:
            kernels["nms_rank"](queue, (n,), None, scores.storage.buffer, scores.offset // 4, n,
                                int(has_threshold), threshold, order.buffer)
        words = -(-n // WORD)
        mask = runtime.alloc(n * words * 4)
        removed = runtime.alloc(words * 4)
        kernels["nms_mask"](queue, (words, n), None, boxes.storage.buffer, boxes.offset // 4, order.buffer, n, words,
                            iou_threshold, mask.buffer)
        kernels["nms_scan"](queue, (1,), None, order.buffer, n, mask.buffer, words, limit, removed.buffer, keep.buffer,
                            count.buffer)
        scratch = [order, mask, removed, count]
    kept = np.empty(1, np.int64)
    cl.enqueue_copy(queue, kept, count.buffer, is_blocking=True)
    for storage in scratch:
        runtime.release(storage)
    return ClTensor(keep, 0, (int(kept[0]),), np.int64)


_SCALARS = {  # each kernel's scalar argument types (None: a buffer), so pyopencl packs ints fast
    "nms_rank": [None, np.int64, np.int64, np.int32, np.float32, None],
    "nms_mask": [None, np.int64, None, np.int64, np.int64, np.float64, None],
    "nms_scan": [None, np.int64, None, np.int64, np.int64, None, None, None],
    "nms_keys": [None, np.int64, np.int64, np.int32, np.float32, None],
    "nms_pick": [None, np.int64, np.int64, np.int64, np.float64, None, None, None, None],
    "nms_sort": [None, np.int64, np.int64, np.int32, np.float32, np.int64, None, None],
}


_MADE: weakref.WeakKeyDictionary[OpenCLRuntime, dict[str, Any]] = weakref.WeakKeyDictionary()


def _kernels(runtime: OpenCLRuntime) -> dict[str, Any]:
    """The NMS kernels on `runtime`'s device, made once per runtime."""
    import pyopencl as cl

    made = _MADE.get(runtime)
    if made is None:
        program = runtime.program(NMS_SOURCE, kernels=list(_SCALARS))
        made = _MADE[runtime] = {name: cl.Kernel(program, name) for name in _SCALARS}
        for name, kernel in made.items():
            kernel.set_scalar_arg_dtypes(_SCALARS[name])
    return made



def _nms_op(runtime: OpenCLRuntime, op: Any, args: list[Any]) -> list[Any]:
    boxes, scores = args
    score_threshold = op.score_threshold.value.data if op.score_threshold is not None else None
    max_output = op.max_output.value.data if op.max_output is not None else None
    return [nms(runtime, boxes, scores, op.iou_threshold.value.data, score_threshold, max_output,
                lambda b, s: op.reference(b, s)[0])]


def device_ops() -> dict[type, Any]:
    """Graph ops with an OpenCL implementation here: op class -> run(runtime, op, args)."""
    from nimble.dialects.graph.vision import NmsOp

    return {NmsOp: _nms_op}
