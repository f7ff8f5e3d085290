"""What a forward or backward call launches, from the shapes alone: the
compiled variants it picks (columns per CTA, union builders), the token
tiles (from a cost model of the union's blocks), the key ranges, the
workspace's pieces, and the launches it hands out (``Plan``), every buffer
shape and grid as the kernels' manifests state them, so that
``workspace_bytes`` and the call agree. The forward
(kernels/sparse_mla_fwd.mlir) and the backward take the same token tiles and
union buffers."""
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
# together spread over at most range_window + 1 ranges of keys (a constant of
# the backward's build, in its manifest), whose dKV rows (4 bytes a column in
# fp32, 8 in the deterministic mode's fixed point) and kv rows (2) are meant
# to fit the L2 together. By default they are on where all keys' rows
# outgrow the L2 (per token, and token tiles in the deterministic mode: on
# an H200 ranges of 4096 keys took 9-13% off at S = Skv = 16K and 4% at 12K,
# bench/results/2026-12-07-f813385-gpu-h200.md), or outgrow it
# _TILE_L2_TIMES over (token tiles in fp32: their unions are in key order
# already; on an H100 the ranges changed nothing at S = Skv = 32K, cost 0-4%
# with 4096 tail queries at Skv = 64K and saved a third at 128K).
_KV_BYTES_PER_COLUMN = 2
_TILE_L2_TIMES = 8


# The main kernels: the backward's, the forward's and the forward's KL
# target pass, by their name's prefix.
FAMILIES = {"bwd": "backward", "fwd": "forward", "kl": "KL target pass"}


def variants(family="bwd"):
    """The compiled main kernels of a family ("bwd" or "fwd"): (D, D_tail,
    columns per CTA, deterministic) -> kernel name, from the shape
    parameters in the manifests (tile-specialize). The forward is
    deterministic in every variant: it has no `det` parameter."""
    return _variants(_runtime.kernels_dir(), family)


@functools.lru_cache(maxsize=None)
def _variants(directory, family):
    found = {}
    for name, kernel in _runtime.load_manifest(directory).items():
        p = kernel.get("params", {})
        if name.startswith(f"sparse_mla_{family}_") and {"hw", "hp", "d", "dqk"} <= p.keys():
            found[(p["d"], p["dqk"] - p["d"], p["hp"], bool(p.get("det", 0)))] = name
    return found


def union_variants():
    """The compiled union builders: (bitmap words, entries) -> kernel name."""
    return _union_variants(_runtime.kernels_dir())


@functools.lru_cache(maxsize=None)
def _union_variants(directory):
    return {(k["params"]["nb"], k["params"]["cap"]): name
            for name, k in _runtime.load_manifest(directory).items()
            if name.startswith("sparse_mla_union_")}


def constant(name):
    """A constant of the backward's build (the kernel's `constants`):
    fixed_point_bits (the deterministic mode's dKV is in units of
    2^-fixed_point_bits) or range_window (key ranges: the ranges the CTAs
    that run together may spread over, less 1)."""
    bwd = _runtime.load_manifest()[next(iter(variants().values()))]
    return bwd["params"][name]


def supported_dims(family="bwd"):
    """The (D, D_tail) pairs with a compiled kernel of the family."""
    return sorted({(d, t) for d, t, _, _ in variants(family)}, reverse=True)


def select_variant(columns, d_v, d_tail, deterministic=False, family="bwd"):
    """(kernel name, columns per CTA) for `columns` (token, head) columns of
    a tile: the smallest variant that holds them all (padding is masked),
    else the largest (the heads are then split into blocks of it)."""
    found = variants(family)
    det = bool(deterministic) and family == "bwd"
    sizes = sorted(n for d, t, n, dt in found if (d, t) == (d_v, d_tail) and dt == det)
    if not sizes:
        raise _runtime.KernelError(f"no compiled {FAMILIES[family]} for D={d_v}, D_tail={d_tail}")
    per_cta = next((n for n in sizes if n >= columns), sizes[-1])
    return found[(d_v, d_tail, per_cta, det)], per_cta


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
    fit = l2 // ((constant("range_window") + 1) * dqk * per_column)
    return 1 << max(6, fit.bit_length() - 1)


def tile_tokens(heads_per_group, seq_len, kv_len, topk, token_tile=None):
    """T, the adjacent query tokens a CTA works on together over the union
    of their keys (DESIGN.md section 5). ``token_tile`` sets T (it must fit
    the limits below). By default, the T of 1, 2, 4 or 8 whose blocks cost
    least (``tile_cost``): a tile gathers and scatters a key its tokens
    share once, but its CTA has more (token, head) columns, and a block of
    64 columns costs more than one of 32. T is at most MAX_TILE_TOKENS and
    the tokens of a row, its T * heads_per_group columns fit the largest
    CTA, and a union builder covers Skv keys and T * topk slots."""
    widest = max(n for _, _, n, _ in variants())
    if token_tile is not None:
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
    fits = [1]
    while (2 * fits[-1] <= MAX_TILE_TOKENS and 2 * fits[-1] * heads_per_group <= widest
           and 2 * fits[-1] <= seq_len and select_union(kv_len, 2 * fits[-1] * topk) is not None):
        fits.append(2 * fits[-1])
    return min(fits, key=lambda t: tile_cost(t, heads_per_group, seq_len, kv_len, topk))


# The cost of a block of 64 keys by the columns of its CTA, relative to 32
# columns: on an H200 at S = Skv = 16K, H = 32 (f813385's sweep, random
# pattern), tiles of 2 tokens (64 columns) took 23.90 ms over unions 1.21x
# smaller than their tokens' rows, per token (32 columns) 22.81 ms:
# 23.90 / 22.81 x 1.21 = 1.27.
BLOCK_COST = {32: 1.0, 64: 1.27}
# Tiles at which the cost model takes the union's size.
_COST_SAMPLES = 64


def tile_cost(t, heads_per_group, seq_len, kv_len, topk):
    """The modelled cost of the main kernel with tiles of t tokens: tiles x
    blocks of each tile's union x the cost of a block of its CTA's columns.
    A union is modelled as the keys of t tokens that draw their min(topk, n)
    keys independently from the n keys at or before their position (the
    benchmark's random pattern, queries at the tail of the keys): the least
    sharing causal tokens show; a trained indexer's adjacent tokens share
    more, so real unions are smaller."""
    _, per_cta = select_variant(t * heads_per_group, *supported_dims()[0])
    tiles = -(-seq_len // t)
    blocks = 0.0
    for i in range(_COST_SAMPLES):
        position = kv_len - seq_len + ((i + 0.5) * tiles / _COST_SAMPLES + 0.5) * t
        n = max(1.0, position + 1)
        k = min(topk, n)
        blocks += n * (1 - (1 - k / n) ** t) / 64
    return blocks / _COST_SAMPLES * tiles * BLOCK_COST[per_cta]


class Plan:
    """What a call launches and the workspace it uses, from the shapes alone
    (so that ``workspace_bytes`` and the call agree); every buffer's shape
    and every grid as the kernels' manifests state them. With token tiles,
    the union buffers hold the tiles of one launch: as many as
    `union_bytes` allows or, given a workspace of `fit` bytes, as many as
    fit in it. `family`: the backward ("bwd": Delta, the sink's kernels,
    the dKV workspace, key ranges) or the forward ("fwd": the unions only)."""

    def __init__(self, shape, token_tile, deterministic, sink, union_bytes=UNION_BYTES,
                 fit=None, key_ranges=None, family="bwd"):
        b, s, h, dqk, skv, g, d_v, topk, _ = shape
        bwd = family == "bwd"
        self.family = family
        self.tokens, self.g = b * s, g
        heads = h // g
        self.t = tile_tokens(heads, s, skv, topk, token_tile)
        self.width = self.t * topk
        # Key ranges need the union's keys in order: per token too. The
        # forward writes no dKV: it has none.
        self.range_keys = key_range_keys(skv, dqk, key_ranges, self.t > 1,
                                         deterministic) if bwd else 0
        if self.range_keys and select_union(skv, self.width) is None:
            if key_ranges is not None:
                raise ValueError(f"key_ranges: no union builder for Skv = {skv} and "
                                 f"{self.t} x topk = {self.width} slots")
            self.range_keys = 0
        self.unions = self.t > 1 or self.range_keys > 0
        self.union = select_union(skv, self.width) if self.unions else None
        self.name, self.per_cta = select_variant(self.t * heads, d_v, dqk - d_v, deterministic,
                                                 family)
        self.tiles = b * -(-s // self.t)
        kernels = _runtime.load_manifest()
        self._main = kernels[self.name]
        self._union = kernels[self.union or next(iter(union_variants().values()))]
        self._sink = kernels["sparse_mla_sink"]
        # The scalars of the main kernel's launches, but the window's.
        self.scalars = dict(batch=b, seq_len=s, kv_len=skv, groups=g, heads_per_group=heads,
                            tile_tokens=self.t)
        if bwd:
            self.scalars["range_keys"] = self.range_keys
        grid = _runtime.grid_of(self._main, self.launch_args(0, self.tiles))
        if any(n > most for n, most in zip(grid, _runtime.GRID_LIMITS)):
            raise ValueError(f"the {FAMILIES[family]}'s grid {grid} exceeds the device's "
                             f"{list(_runtime.GRID_LIMITS)[:len(grid)]}")
        # A build that counts the blocks each CTA computes
        # (sparse-mla-bench-to-ptx count-op; the GPU tests').
        self.counting = any(a["name"] == "op_counts" for a in self._main["args"])
        self.chunks = -(-self.tokens // SINK_CHUNK) if sink and bwd else 0
        # (name, dtype, shape) of each piece of the workspace but the unions.
        rows = dict(self.launch_args(0, 0), lse=(self.tokens, h), chunk=SINK_CHUNK)
        self.fixed = []
        if bwd:
            self._fixed(rows, sink, deterministic)
        self.per_launch, self.launch_count = self.tiles, 1
        if self.unions:
            per_tile = sum(_numel(sh) * dt.itemsize for name, dt, sh in self._unions(1)
                           if name in ("keys", "bits"))   # counts and clock aside
            most = max(1, min(self.tiles, union_bytes // per_tile))
            if fit is not None:
                while most > 1 and self._bytes(most) > fit:
                    most = max(1, min(most - 1, (fit - self._bytes(0)) // per_tile))
            # Launches of (nearly) equal size: none of a few tiles at the end.
            self.launch_count = -(-self.tiles // most)
            self.per_launch = -(-self.tiles // self.launch_count)
        self.pieces = self.fixed + self._unions(self.per_launch)
        self.bytes = self._bytes(self.per_launch)
        # Where each piece starts, in elements of its dtype.
        self.layout, at = [], 0
        for name, dtype, shape in self.pieces:
            strides = tuple(math.prod(shape[i + 1:]) for i in range(len(shape)))
            self.layout.append((name, dtype, shape, strides, at // dtype.itemsize))
            at += _round_up(_numel(shape) * dtype.itemsize)

    def _fixed(self, rows, sink, deterministic):
        """The backward's pieces of the workspace but the unions: Delta, the
        sink's lse and partial sums, the dKV accumulator (and its flags)."""
        self.fixed.append(("delta", torch.float32,
                           _runtime.extents_of(self._main, "delta", rows)))
        if sink:
            self.fixed += [("lse", torch.float32, _runtime.extents_of(self._sink, "lse_out", rows)),
                           ("partial", torch.float32,
                            _runtime.extents_of(self._sink, "partial", rows))]
        self.fixed.append(("ws", torch.int64 if deterministic else torch.float32,
                           _runtime.extents_of(self._main, "dkv_fixed" if deterministic else "dkv",
                                               rows)))
        if deterministic:   # rows that an addition which did not convert reached
            self.fixed.append(("lost", torch.int32,
                               _runtime.extents_of(self._main, "dkv_lost", rows)))

    def launch_args(self, first, n):
        """The main kernel's scalars for the launch of tiles [first, first + n)."""
        return dict(self.scalars, first_tile=first, tiles=n)

    def counts_shape(self, n):
        """The counts of blocks of a counting build's launch of n tiles."""
        return _runtime.extents_of(self._main, "op_counts", self.launch_args(0, n))

    def launches(self, scratch, indices, lengths, causal, q_offset):
        """The launches of a call, in order, from the carved workspace
        (`scratch`), the indices ([tokens, G, topk]), the lengths (or None)
        and the call's masking (causal 0 or 1, q_offset): for each window of
        tiles, the union builder's arguments (None per token without key
        ranges) and the main kernel's, but those of the call itself (its
        tensors and options). Buffers are views of the sizes the kernels
        state."""
        tokens, g, topk = indices.shape
        for i in range(self.launch_count):
            first = self.tiles * i // self.launch_count
            n = self.tiles * (i + 1) // self.launch_count - first
            views = {name: scratch[name][:shape[0]] for name, _, shape in self._unions(n)}
            main = self.launch_args(first, n)
            if self.family == "bwd":   # the key ranges' clock (none: off)
                main["clock"] = views.get("clock")
            if not self.unions:
                yield None, dict(main, keys=indices.view(tokens * g, topk), bits=None,
                                 counts=lengths)
                continue
            union = {k: main[k] for k in ("batch", "seq_len", "kv_len", "tile_tokens",
                                          "first_tile", "tiles")}
            union.update(indices=indices, lengths=lengths, keys=views["keys"],
                         bits=views["bits"], counts=views["counts"], causal=causal,
                         q_offset=q_offset)
            yield union, dict(main, keys=views["keys"], bits=views["bits"],
                              counts=views["counts"].view(n, g))

    def _unions(self, n):
        """The union builder's outputs for n tiles and, with key ranges, the
        clock of their CTAs."""
        if not self.unions:
            return []
        args = dict(self.launch_args(0, n), indices=(self.tokens, self.g, self.width // self.t))
        pieces = [(name, torch.int32, _runtime.extents_of(self._union, name, args))
                  for name in ("keys", "bits", "counts")]
        if self.range_keys:
            pieces.append(("clock", torch.int32, _runtime.extents_of(self._main, "clock", args)))
        return pieces

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


def plan(problem, token_tile=None, deterministic=False, sink=False, union_bytes=UNION_BYTES,
         fit=None, key_ranges=None, family="bwd"):
    """The Plan of a call on ``problem`` (checks.shapes) with these
    options, kept per kernel build (a call plans in microseconds, not the
    tenth of a millisecond that counts at S = 2K)."""
    return _plan(_runtime.kernels_dir(), problem, token_tile, deterministic, sink, union_bytes,
                 fit, key_ranges, family)


@functools.lru_cache(maxsize=256)
def _plan(directory, *args):
    return Plan(*args)


def _numel(shape):
    return math.prod(shape)


def _round_up(n):
    return -(-n // _ALIGN) * _ALIGN
