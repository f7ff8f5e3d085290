"""What a backward call launches, from the shapes alone: the compiled
variants it picks (columns per CTA, union builders), the token tiles, the
key ranges, and the workspace's pieces and launches (``_Plan``), so that
``workspace_bytes`` and the call agree."""
import functools
import math

import torch

from . import _runtime

# Token tiles (kernels/sparse_mla_union.mlir): a tile's token bits are an
# i32, and the union builder holds a tile's slots and a bitmap of its keys.
MAX_TILE_TOKENS = 8
# The union builder tags a slot by (token, slot) in 31 bits: topk < 2^26.
MAX_TOPK = (1 << 26) - 1
# The default budget of the union buffers (keys and bits, 8 bytes an
# entry, per tile T * topk entries of each kv group): the tiles of one
# launch of the builder and of the main kernel. More tiles than fit run in
# launches of equal size, one after the other; each launch ends in a tail
# of idle SMs, so a smaller budget (a smaller workspace) costs time.
UNION_BYTES = 256 << 20
# Tokens per CTA of the sink kernel (a multiple of its 16-token tiles).
SINK_CHUNK = 256
# Workspace pieces start at multiples of this (the kernels' 16-byte accesses).
_ALIGN = 256
# Key ranges (long context, bench/NOTES.md "Key ranges"): the CTAs that run
# together spread over at most KEY_RANGE_WINDOW + 1 ranges of keys, whose
# dKV rows (4 bytes a column in fp32, 8 in the deterministic mode's fixed
# point) and kv rows (2) are meant to fit the L2 together. By default they
# are on where all keys' rows outgrow the L2 (per token, and token tiles in
# the deterministic mode: on an H200 ranges of 4096 keys took 9-13% off at
# S = Skv = 16K and 4% at 12K, bench/results/2026-12-07-f813385-gpu-h200.md),
# or outgrow it _TILE_L2_TIMES over (token tiles in fp32: their unions are
# in key order already; on an H100 the ranges changed nothing at S = Skv =
# 32K, cost 0-4% with 4096 tail queries at Skv = 64K and saved a third at
# 128K).
KEY_RANGE_WINDOW = 1
_KV_BYTES_PER_COLUMN = 2
_TILE_L2_TIMES = 8
# A union entry (kernels/sparse_mla_union.mlir): its key and its tokens' bits.
_UNION_ENTRY = (("keys", torch.int32), ("bits", torch.int32))


def variants():
    """The compiled backward kernels: (D, D_tail, columns per CTA,
    deterministic) -> kernel name, from the shape parameters in the
    manifests (tile-specialize)."""
    return _variants(_runtime.kernels_dir())


@functools.lru_cache(maxsize=None)
def _variants(directory):
    found = {}
    for name, kernel in _runtime.load_manifest(directory).items():
        p = kernel.get("params", {})
        if name.startswith("sparse_mla_bwd_") and {"hw", "hp", "d", "dqk", "det"} <= p.keys():
            found[(p["d"], p["dqk"] - p["d"], p["hp"], bool(p["det"]))] = name
    return found


def union_variants():
    """The compiled union builders: (bitmap words, entries) -> kernel name."""
    return _union_variants(_runtime.kernels_dir())


@functools.lru_cache(maxsize=None)
def _union_variants(directory):
    return {(k["params"]["nb"], k["params"]["cap"]): name
            for name, k in _runtime.load_manifest(directory).items()
            if name.startswith("sparse_mla_union_")}


def supported_dims():
    """The (D, D_tail) pairs with a compiled backward."""
    return sorted({(d, t) for d, t, _, _ in variants()}, reverse=True)


def select_variant(columns, d_v, d_tail, deterministic=False):
    """(kernel name, columns per CTA) for `columns` (token, head) columns of
    a tile: the smallest variant that holds them all (padding is masked),
    else the largest (the heads are then split into blocks of it)."""
    found = variants()
    sizes = sorted(n for d, t, n, det in found
                   if (d, t) == (d_v, d_tail) and det == bool(deterministic))
    if not sizes:
        raise _runtime.KernelError(f"no compiled backward for D={d_v}, D_tail={d_tail}")
    per_cta = next((n for n in sizes if n >= columns), sizes[-1])
    return found[(d_v, d_tail, per_cta, bool(deterministic))], per_cta


def select_union(kv_len, slots):
    """The smallest union builder whose bitmap covers kv_len keys and whose
    entries hold `slots` (T * topk), or None."""
    fits = [(nb, cap) for nb, cap in union_variants() if 32 * nb >= kv_len and cap >= slots]
    return union_variants()[min(fits)] if fits else None


def key_range_keys(kv_len, dqk, key_ranges=None, token_tiles=False, deterministic=False):
    """Keys per range of the key-range work order (a power of two), or 0
    for none. ``key_ranges``: None chooses from the target's L2 (on where
    the dKV accumulator and kv rows of kv_len keys outgrow it,
    _TILE_L2_TIMES over with fp32 ``token_tiles``), False is off, True on, an
    int sets the keys per range (a power of two >= 64)."""
    if key_ranges is False:
        return 0
    if key_ranges is not None and key_ranges is not True:
        return key_ranges
    l2 = _runtime.target()["l2_bytes"]
    times = _TILE_L2_TIMES if token_tiles and not deterministic else 1
    per_column = (8 if deterministic else 4) + _KV_BYTES_PER_COLUMN
    if key_ranges is None and kv_len * dqk * per_column <= times * l2:
        return 0
    fit = l2 // ((KEY_RANGE_WINDOW + 1) * dqk * per_column)
    return 1 << max(6, fit.bit_length() - 1)


def _check_key_ranges(key_ranges):
    if key_ranges is None or isinstance(key_ranges, bool):
        return
    if (not isinstance(key_ranges, int) or key_ranges < 64
            or key_ranges & (key_ranges - 1)):
        raise ValueError(f"key_ranges must be None, a bool or a power of two >= 64 (keys per "
                         f"range), got {key_ranges!r}")


def tile_tokens(heads_per_group, seq_len, kv_len, topk, token_tile=None):
    """T, the adjacent query tokens a CTA works on together over the union
    of their keys (DESIGN.md section 5). By default the most, up to
    MAX_TILE_TOKENS, whose (token, head) columns fill the largest CTA: a
    CTA's cost per block of keys hardly depends on its columns, and adjacent
    tokens share most keys, so a tile gathers and scatters far fewer rows
    than its tokens one by one. 1 (per token) where heads_per_group fills a
    CTA, where a builder variant does not fit (Skv or T * topk too large) or
    for single-token rows. ``token_tile`` sets T; it must fit those limits."""
    widest = max(n for _, _, n, _ in variants())
    if token_tile is not None:
        _check_token_tile(token_tile)
        t = token_tile
        if t > 1:
            if t > MAX_TILE_TOKENS or t * heads_per_group > widest:
                raise ValueError(f"token_tile = {t}: at most {MAX_TILE_TOKENS} tokens of "
                                 f"{heads_per_group} heads per kv group fit a CTA of "
                                 f"{widest} columns")
            if select_union(kv_len, t * topk) is None:
                raise ValueError(f"token_tile = {t}: no union builder for Skv = {kv_len} "
                                 f"and {t} x topk = {t * topk} slots")
        return t
    t = 1
    while (2 * t <= MAX_TILE_TOKENS and 2 * t * heads_per_group <= widest and 2 * t <= seq_len
           and select_union(kv_len, 2 * t * topk) is not None):
        t *= 2
    return t


def _check_token_tile(token_tile):
    if token_tile is not None and (isinstance(token_tile, bool) or
                                   not isinstance(token_tile, int) or token_tile < 1):
        raise ValueError(f"token_tile must be a positive int, got {token_tile!r}")


class _Plan:
    """What a call launches and the workspace it uses, from the shapes alone
    (so that ``workspace_bytes`` and the call agree). With token tiles, the
    union buffers hold the tiles of one launch: as many as `union_bytes`
    allows or, given a workspace of `fit` bytes, as many as fit in it."""

    def __init__(self, shape, token_tile, deterministic, sink, union_bytes=UNION_BYTES,
                 fit=None, key_ranges=None):
        b, s, h, dqk, skv, g, d_v, topk, _ = shape
        self.tokens, self.rows, self.g = b * s, b * skv * g, g
        heads = h // g
        self.t = tile_tokens(heads, s, skv, topk, token_tile)
        self.width = self.t * topk
        # Key ranges need the union's keys in order: per token too.
        self.range_keys = key_range_keys(skv, dqk, key_ranges, self.t > 1, deterministic)
        self.window = KEY_RANGE_WINDOW
        if self.range_keys and select_union(skv, self.width) is None:
            if key_ranges is not None:
                raise ValueError(f"key_ranges: no union builder for Skv = {skv} and "
                                 f"{self.t} x topk = {self.width} slots")
            self.range_keys = 0
        self.ranges = -(-skv // self.range_keys) if self.range_keys else 0
        self.unions = self.t > 1 or self.ranges > 0
        self.union = select_union(skv, self.width) if self.unions else None
        self.name, self.per_cta = select_variant(self.t * heads, d_v, dqk - d_v, deterministic)
        self.blocks = -(-heads // self.per_cta)
        if g * self.blocks > _runtime.GRID_LIMITS[1]:
            raise ValueError(f"G * ceil(H/G / {self.per_cta}) = {g * self.blocks} exceeds "
                             f"the grid")
        self.tiles = b * -(-s // self.t)
        self.chunks = -(-self.tokens // SINK_CHUNK) if sink else 0
        # (name, dtype, shape) of each piece of the workspace but the unions.
        self.fixed = [("delta", torch.float32, (self.tokens, h))]
        if sink:
            self.fixed += [("lse", torch.float32, (self.tokens, h)),
                           ("partial", torch.float32, (self.chunks, h))]
        self.fixed.append(("ws", torch.int64 if deterministic else torch.float32,
                           (self.rows, dqk)))
        if deterministic:   # rows that an addition which did not convert reached
            self.fixed.append(("lost", torch.int32, (self.rows,)))
        self.per_launch, self.launches = self.tiles, 1
        if self.unions:
            per_tile = g * self.width * sum(dt.itemsize for _, dt in _UNION_ENTRY)  # counts aside
            most = max(1, min(self.tiles, union_bytes // per_tile))
            if fit is not None:
                while most > 1 and self._bytes(most) > fit:
                    most = max(1, min(most - 1, (fit - self._bytes(0)) // per_tile))
            # Launches of (nearly) equal size: none of a few tiles at the end.
            self.launches = -(-self.tiles // most)
            self.per_launch = -(-self.tiles // self.launches)
        self.pieces = self.fixed + self._unions(self.per_launch)
        self.bytes = self._bytes(self.per_launch)
        # Where each piece starts, in elements of its dtype.
        self.layout, at = [], 0
        for name, dtype, shape in self.pieces:
            strides = tuple(math.prod(shape[i + 1:]) for i in range(len(shape)))
            self.layout.append((name, dtype, shape, strides, at // dtype.itemsize))
            at += _round_up(_numel(shape) * dtype.itemsize)

    def _unions(self, n):
        if not self.unions:
            return []
        # The clock of the key ranges: a row per round of CTAs, at most one
        # per CTA of a launch.
        clock = [("clock", torch.int32, (n * self.g * self.blocks, self.ranges))]
        return ([(name, dt, (n * self.g, self.width)) for name, dt in _UNION_ENTRY]
                + [("counts", torch.int32, (n, self.g))] + (clock if self.ranges else []))

    def _bytes(self, n):
        return sum(_round_up(_numel(sh) * dt.itemsize) for _, dt, sh in self.fixed + self._unions(n))

    def carve(self, workspace):
        """The pieces as views of `workspace` (uint8, 16-byte aligned, at
        least self.bytes): one view per dtype, one strided view per piece."""
        workspace = workspace[:self.bytes]
        typed, out = {}, {}
        for name, dtype, shape, strides, offset in self.layout:
            whole = typed.get(dtype)
            if whole is None:
                whole = typed[dtype] = workspace.view(dtype)
            out[name] = whole.as_strided(shape, strides, whole.storage_offset() + offset)
        return out


@functools.lru_cache(maxsize=256)
def _plan(shape, token_tile, deterministic, sink, union_bytes=UNION_BYTES, fit=None,
          key_ranges=None):
    """The plan of a call (a pure function of these, kept: a call plans in
    microseconds, not the tenth of a millisecond that counts at S = 2K)."""
    return _Plan(shape, token_tile, deterministic, sink, union_bytes, fit, key_ranges)


@functools.lru_cache(maxsize=None)
def round_ctas(name, device_index):
    """CTAs of kernel `name` that the device runs at once (its SMs times
    the CTAs an SM holds): a round of the key ranges' clock."""
    kernel, target = _runtime.load_manifest()[name], _runtime.target()
    props = torch.cuda.get_device_properties(device_index)
    threads = kernel["threads"]
    regs = -(-kernel.get("registers", target["max_registers_per_thread"]) // 8) * 8
    shared = kernel["shared_bytes"] + target["reserved_shared_bytes_per_cta"]
    per_sm = min(props.shared_memory_per_multiprocessor // shared,
                 props.regs_per_multiprocessor // (regs * threads),
                 props.max_threads_per_multi_processor // threads)
    return max(1, per_sm) * props.multi_processor_count


def _numel(shape):
    return math.prod(shape)


def _round_up(n):
    return -(-n // _ALIGN) * _ALIGN
