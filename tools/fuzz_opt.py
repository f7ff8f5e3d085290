#!/usr/bin/env python3
"""Mutation fuzzer of sparse-mla-opt: every input must end in exit status 0
(compiled) or 1 with located diagnostics (each error printed as
`file:line:col: error:`), never a signal, an assertion, an LLVM ERROR,
another status, an error at `<unknown>:0` or a hang (CPU time past
CPU_SECONDS, or wall time past TIMEOUT_S).

Seeds are the kernels of kernels/ and the lit inputs of test/ (split at
`// -----`). Every op of the project's dialects (the mnemonics of TileOps.td and
SparseMLAOps.td) must
appear in a seed, or the run stops at once: a new op needs a lit test. Half
the cases aim at an op, the ops taking turns: the syntactic forms of its
lines in the seeds take turns too (`tile.write %v, %t` and `tile.write %v, %t
cta %r on %bars[%i]`), a line of that form is mutated, its lists half the
time, and a third of the cases mutate the text once more; seeds that their
lit test expects to fail serve only forms that no other seed has. The other
cases mutate anywhere, one to three times. A quarter of the cases mutate the
seed printed in the generic form (`"tile.write"(...) <{operandSegmentSizes =
...}>`), which can get wrong what the custom syntax cannot. The mutations: numbers (zero, negative,
huge), tile dimensions, types, SSA names, keywords and unit attributes (those
of the ops' syntax in the .td files and a few more) exchanged or dropped; a list
of a line (inside `[..]`, `(..)`, `<..>` or `{..}`, a run of `%a, %b`
operands, the types after ` : `) emptied (`%bars[%i]` -> `%bars[]`), cut by
an entry, given an entry twice, or two entries swapped; an attribute that
the passes leave for later ones (`tile.barrier_id`, `sparse_mla.kernels`, the
k...Attr names of the headers) given to an op or the module; lines deleted,
duplicated, swapped or taken from another input; the text cut short.

Each case runs in one mode. Half the cases run one pass of this project
alone, on input it may not expect: every pass that `sparse-mla-opt --help`
lists whose name starts with tile-, convert-tile-, sparse-mla- or smla-, so a
new pass joins without editing this script, nested in tile.kernel where it
runs there (which a run on an empty module tells), else on the module. The
other half go through to NVVM: each pipeline of those prefixes
(sparse-mla-to-ptx), or `prepared-convert`, the passes that prepare kernels,
then convert-tile-to-nvvm. A pass or pipeline takes one of its option sets in
PASS_OPTIONS, and a quarter of the time one or two of its flags and integer
options (from --help) set to values it may not expect. A crash is minimized
(chunks of lines) while it crashes the same way, and saved with its command.

Known crashes of MLIR itself, which plain mlir-opt has too, are counted apart
and fail nothing (KNOWN_UPSTREAM):
  - MLIR 22's parser takes `index` for a float type in a dense array of
    index elements: `"test.op"() {a = array<index: 1>} : () -> ()` crashes
    `mlir-opt --allow-unregistered-dialect` (in Parser::parseDenseArrayAttr).

  python3 tools/fuzz_opt.py --seconds 60                        # the test suite's run
  python3 tools/fuzz_opt.py --seconds 1200 --jobs 2 --out fuzz/ # a long one

Prints the cases run per mode and per op, each distinct crash and the known
upstream ones; exits 1 on any crash.
"""
import argparse
import collections
import concurrent.futures
import glob
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# Each dialect: its prefix, the .td file of its ops and their base class.
DIALECTS = [("tile", ROOT / "include/sparse-mla/Dialect/Tile/IR/TileOps.td", "Tile_"),
            ("smla", ROOT / "include/sparse-mla/Dialect/SparseMLA/IR/SparseMLAOps.td",
             "SparseMLA_")]
PASS_PREFIXES = ("tile-", "convert-tile-", "sparse-mla-", "smla-")
# Options that reach code the defaults do not, or that a pass needs. @CASE@
# is the case's own path prefix (a pass that writes files writes them there).
PASS_OPTIONS = {
    "tile-schedule": ["", "{registers=232,280 partition-rows=0,128 partition-cols=0,64}"],
    "tile-ablate": ["", "{idle-gathers idle-scatters=1 drop-scatters=0}"],
    "tile-lower-channels": ["", "{stages=2}"],
    "sparse-mla-emit-kernels": ["{output=@CASE@}"],
    "sparse-mla-to-ptx": ["", "{output=@CASE@}"],
}
# The pipeline whose passes get, one at a time, what it hands each (all of
# this project's passes but those off by default; sparse-mla-emit-kernels
# with output=).
STAGING_PIPELINE = "builtin.module(sparse-mla-to-ptx{stage-scatters output=@CASE@})"
PREPARED_CONVERT = ("builtin.module(tile-specialize,tile.kernel(tile-decode-work,"
                    "smla-lower-to-tile,tile-split-d,tile-stage-scatters,"
                    "smla-expand-key-clocks,tile-pipeline-loops,tile-assign-layouts,"
                    "tile-allocate-shared,tile-materialize-waits,tile-group-gemms,"
                    "tile-assign-barrier-ids),tile-record-manifest,convert-tile-to-nvvm)")
# A hang is CPU time past CPU_SECONDS (the whole pipeline takes ~10 s on the
# backward's eight variants), or wall time past TIMEOUT_S for one that sleeps
# (wall time alone would count a busy machine's slowness).
CPU_SECONDS = 60
TIMEOUT_S = 300
# Values of pass options: in range for every integer type of options, out
# of range for what the passes accept.
OPTION_VALUES = ["0", "1", "2", "3", "4", "7", "8", "16", "24", "40", "64", "128", "232",
                 "256", "65536", "2147483647"]
MEMORY_BYTES = 4 << 30
CRASH_MARKS = ("LLVM ERROR", "Assertion", "PLEASE submit a bug report", "Stack dump",
               "UNREACHABLE", "terminate called")
# Crashes of MLIR itself: a name, and a frame of the stack that only it has.
KNOWN_UPSTREAM = {
    "MLIR 22 parser: array<index: ...>": "Parser::parseDenseArrayAttr",
}
LOCATED = re.compile(r"(?!<unknown>)[^\s:][^:]*:\d+:\d+: error: ")
NUMBERS = ["0", "1", "-1", "2", "3", "7", "8", "16", "63", "64", "65", "128", "1000",
           "4096", "65536", "2147483647", "2147483648", "4294967296", "9223372036854775807",
           "99999999999999999999"]
TYPES = ["f32", "bf16", "f16", "i32", "i1", "i8", "i64", "index", "f64"]
# Values of the passes' attributes: what they write, and what they do not.
ATTRIBUTE_VALUES = ["0 : i64", "1 : i64", "3 : i64", "-1 : i64", "128 : i64", "4096 : i64",
                    "1.5 : f32", "unit", '"x"', "array<i64: 0, 64>", "[1]", "{k = 16 : i64}",
                    "{k = 1.0 : f32}", '[{name = "k"}]', "{}"]
# Words of kernels that the .td files do not spell (tile.kernel's syntax is
# hand-written: its index space, tensor extents and clauses; layouts are
# attributes).
EXTRA_WORDS = ["stages(1)", "stages(2)", "stages(4)", "warpgroups(1)", "warpgroups(2)",
               "warpgroups(4)", "variants([])", "variants([{hw = 16}])", "cluster(1)",
               "cluster(2)", "cluster(8)", "add", "max", "or", "x", "y", "#tile.mma",
               "{tile.partition = 0}", "{tile.partition = 1}", "optional", "ceildiv", "from",
               "window", "grid([])", "grid([b : 4])", "window(slot : 2 from 1)", "[?, ?]",
               "constants({})", "constants({range_window = 1})", "derive([])"]


def op_names():
    """The ops, `tile.gather` and `smla.columns`."""
    return [f"{prefix}.{op}" for prefix, td, base in DIALECTS
            for op in re.findall(r'^def\s+\w+\s*:\s*' + base + r'\w*Op<"(\w+)"', td.read_text(), re.M)]


def op_use(op):
    """A use of the op in a line: `tile.gather` is not `tile.gather_rows`, and
    `!tile.channel` is a type."""
    return re.compile(r"(?<![!#\w.])" + re.escape(op) + r"\b")


def op_form(line):
    """The syntax of an op's line without its names, numbers and types: the
    seeds of an op take turns by form, so a rare one (`cta %r on %bars[%i]`)
    is mutated as often as a common one."""
    return re.sub(r"\d+", "N", re.sub(r"%[\w.#]+", "%", line.split(" : ")[0])).strip()


def op_forms(op, corpus):
    """{form: [seed holding a line of the op in that form]}: the seeds that
    compile where there are some (a mutation of one that fails from the start
    tests its first error again)."""
    use, forms = op_use(op), {}
    for seed in corpus:
        for form in {op_form(l) for l in seed[1].splitlines() if use.search(l)}:
            forms.setdefault(form, []).append(seed)
    return {form: [s for s in seeds if not s[2]] or seeds for form, seeds in forms.items()}


def syntax_words():
    """The keywords of the ops' assembly formats and their unit attributes."""
    td = "".join(td.read_text() for _, td, _ in DIALECTS)
    formats = re.findall(r"let assemblyFormat\s*=\s*(\[\{.*?\}\]|\".*?\");", td, re.S)
    words = {w for f in formats for w in re.findall(r"`(\w+)`", f)}
    words |= {"{" + w + "}" for w in re.findall(r"UnitAttr:\$(\w+)", td)}
    return sorted(words) + EXTRA_WORDS


def pass_attributes():
    """The names of the attributes that passes leave on ops for later ones
    (the `k...Attr` constants of the headers, and those the interfaces
    read), which an input may carry too."""
    names = set()
    for header in (ROOT / "include").rglob("*"):
        if header.suffix in (".h", ".td"):
            text = header.read_text()
            names |= set(re.findall(r'StringLiteral k\w*Attr\w* = "([\w.]+)"', text))
            names |= set(re.findall(r'getAttrOfType<[^>]*>\("([\w.]+)"\)', text))
    return sorted(names)


def seeds():
    """(file, text, whether the lit test expects it to fail) per input."""
    out = []
    files = sorted((ROOT / "kernels").glob("*.mlir")) + sorted((ROOT / "test").rglob("*.mlir"))
    for f in files:
        for part in f.read_text().split("\n// -----"):
            # Comments (RUN and CHECK lines among them) are nothing to mutate.
            text = "\n".join(l for l in part.splitlines() if not l.lstrip().startswith("//"))
            if "tile." in text or "smla." in text:
                out.append((f.relative_to(ROOT).as_posix(), text, "expected-error" in part))
    return out


# String mutations: (s, rng, ctx) -> s mutated or None, where ctx holds the
# whole input (s may be one line of it) and the syntax words.

def mutate_number(s, rng, ctx):
    spots = list(re.finditer(r"(?<![\w%#])-?\d+(?![\w.])", s))
    if spots:
        m = rng.choice(spots)
        return s[:m.start()] + rng.choice(NUMBERS) + s[m.end():]


def mutate_dim(s, rng, ctx):
    spots = list(re.finditer(r"(?<=[<x])(\d+|\{\w+\})(?=x)", s))
    if spots:
        m = rng.choice(spots)
        return s[:m.start()] + rng.choice(NUMBERS[:16] + ["{n}", "{hw}", "?"]) + s[m.end():]


def mutate_type(s, rng, ctx):
    spots = list(re.finditer(r"\b(" + "|".join(TYPES) + r")\b", s))
    if spots:
        m = rng.choice(spots)
        return s[:m.start()] + rng.choice(TYPES) + s[m.end():]


def mutate_name(s, rng, ctx):
    """An SSA name for another of the input."""
    spots = list(re.finditer(r"%[\w.]+\b", s))
    names = sorted(set(re.findall(r"%[\w.]+\b", ctx["text"])))
    if spots and len(names) > 1:
        m = rng.choice(spots)
        return s[:m.start()] + rng.choice(names) + s[m.end():]


def mutate_word(s, rng, ctx):
    """A keyword or attribute dropped or exchanged."""
    words = ctx["words"]
    spots = [m for w in words for m in re.finditer(r"(?<![\w.])" + re.escape(w) + r"(?!\w)", s)]
    if spots:
        m = rng.choice(spots)
        return s[:m.start()] + rng.choice(words + [""]) + s[m.end():]


CLOSING = {"[": "]", "(": ")", "<": ">", "{": "}"}


def list_spans(line):
    """(start, end) of the entries of each list of a line: inside [..], (..),
    <..> (the `>` of `->` closes nothing) and {..} (attributes), a run of
    `%a, %b` operands, the types after ` : `."""
    spans, stack = [], []
    for i, c in enumerate(line):
        if c in CLOSING:
            stack.append((c, i))
        elif c in ")]>}" and not (c == ">" and line[i - 1:i] == "-"):
            while stack and CLOSING[stack[-1][0]] != c:
                stack.pop()
            if stack:
                spans.append((stack.pop()[1] + 1, i))
    spans += [m.span() for m in re.finditer(r"%[\w.#]+(?:\s*,\s*%[\w.#]+)+", line)]
    if m := re.search(r" : (.+?)(?: \{)?$", line):
        spans.append(m.span(1))
    return spans


def split_entries(s):
    """Entries of a list, split at the commas outside brackets."""
    entries, depth, start = [], 0, 0
    for i, c in enumerate(s):
        if c in "[(<{":
            depth += 1
        elif c in "])}>" and not (c == ">" and s[i - 1:i] == "-"):
            depth -= 1
        elif c == "," and depth == 0:
            entries.append(s[start:i])
            start = i + 1
    return entries + [s[start:]]


def mutate_list(s, rng, ctx):
    """A list of a line (of s) emptied, cut by an entry, given one twice, or
    two of its entries swapped: operands and indices ([..], (..), runs of
    %names) three times in four where the line has some."""
    lines = s.split("\n")
    at = [i for i, l in enumerate(lines) if list_spans(l)]
    if not at:
        return None
    i = rng.choice(at)
    spans = list_spans(lines[i])
    operands = [(a, b) for a, b in spans if a and lines[i][a - 1] in "[(" or lines[i][a] == "%"]
    a, b = rng.choice(operands if operands and rng.random() < 0.75 else spans)
    entries = split_entries(lines[i][a:b])
    how = rng.randrange(4)
    if how == 0:
        entries = []
    elif how == 1:
        entries.insert(rng.randrange(len(entries) + 1), rng.choice(entries))
    elif how == 2:
        del entries[rng.randrange(len(entries))]
    elif len(entries) > 1:
        j, k = rng.sample(range(len(entries)), 2)
        entries[j], entries[k] = entries[k], entries[j]
    lines[i] = lines[i][:a] + ",".join(entries) + lines[i][b:]
    return "\n".join(lines)


def mutate_attribute(s, rng, ctx):
    """An attribute of the passes, of some value, given to an op (before its
    ` : `) or to the module (in `attributes {`)."""
    spots = [m.end() for m in re.finditer(r"attributes \{", s)]
    spots += [m.start() for m in re.finditer(r" : ", s)]
    if not spots:
        return None
    at = rng.choice(spots)
    attr = f"{rng.choice(ctx['attrs'])} = {rng.choice(ATTRIBUTE_VALUES)}"
    if s[at - 1] == "{":
        return s[:at] + attr + ", " + s[at:]
    return s[:at] + " {" + attr + "}" + s[at:]


def mutate_cut(s, rng, ctx):
    return s[:rng.randrange(len(s) + 1)]


# Line mutations: (lines, i, rng, corpus) -> lines, about line i.

def delete_line(lines, i, rng, corpus):
    return lines[:i] + lines[i + 1:]


def duplicate_line(lines, i, rng, corpus):
    j = rng.randrange(len(lines) + 1)
    return lines[:j] + [lines[i]] + lines[j:]


def swap_lines(lines, i, rng, corpus):
    j = rng.randrange(len(lines))
    lines = list(lines)
    lines[i], lines[j] = lines[j], lines[i]
    return lines


def foreign_line(lines, i, rng, corpus):
    """A line of another input, before line i."""
    other = rng.choice(corpus)[1].splitlines()
    return lines[:i] + [rng.choice(other)] + lines[i:] if other else lines


STRING_MUTATIONS = [mutate_number, mutate_dim, mutate_type, mutate_name, mutate_word,
                    mutate_list, mutate_list, mutate_attribute, mutate_cut]
LINE_MUTATIONS = [delete_line, duplicate_line, swap_lines, foreign_line]


def generic_form(opt, text, cache):
    """The text with its ops in the generic form, which can get wrong what
    their custom syntax cannot (operand segments, attributes, regions); None
    where it does not parse. Cached: one run of the compiler per seed."""
    if text not in cache:
        p = subprocess.run([opt, "-", "--mlir-print-op-generic",
                            "--mlir-very-unsafe-disable-verifier-on-parsing", "-o", "-"],
                           input=text, capture_output=True, text=True)
        cache[text] = p.stdout if p.returncode == 0 else None
    return cache[text]


def staged_forms(opt, text, passes, workdir):
    """{pass: the text as STAGING_PIPELINE hands it to that pass}, so that a
    pass alone gets what the passes before it make of a seed, not only what
    they would refuse."""
    with tempfile.TemporaryDirectory(dir=workdir) as out:
        try:
            err = subprocess.run(
                [opt, "-", "--pass-pipeline=" + STAGING_PIPELINE.replace("@CASE@", out + "/k"),
                 "--mlir-print-ir-before=" + ",".join(passes), "--mlir-print-ir-module-scope",
                 "--mlir-disable-threading", "-o", os.devnull],
                input=text, capture_output=True, text=True, timeout=TIMEOUT_S).stderr
        except subprocess.TimeoutExpired:
            err = ""
    parts = re.split(r"^// -----// IR Dump Before \w+ \(([\w-]+)\).*\n", err, flags=re.M)
    stages = {}
    # A nested pass dumps the module once per kernel: the first is before any.
    for name, dump in zip(parts[1::2], parts[2::2]):
        stages.setdefault(name, dump[:dump.rfind("\n}") + 2])
    return stages


def mutate(text, rng, corpus, vocabulary, line_of=None):
    """One mutation anywhere, or, with line_of (a predicate), of a line it
    holds for; the text as it was if there is no such line or the mutation
    found nothing to change."""
    lines = text.splitlines()
    at = [i for i, l in enumerate(lines) if line_of is None or line_of(l)]
    if not at:
        return text
    ctx = {"text": text, **vocabulary}
    # An op's line: its operand and index lists half the time.
    if line_of is not None and rng.random() < 0.5:
        f = mutate_list
    else:
        f = rng.choice(STRING_MUTATIONS + LINE_MUTATIONS)
    if f in LINE_MUTATIONS:
        return "\n".join(f(lines, rng.choice(at), rng, corpus))
    if line_of is None:
        return f(text, rng, ctx) or text
    i = rng.choice(at)
    lines[i] = f(lines[i], rng, ctx) or lines[i]
    return "\n".join(lines)


def project_passes(helptext):
    """{name: (whether a pipeline, [its number and flag options])} of the
    passes and pipelines of this project that --help lists: entries of its
    `Passes:` and `Pass Pipelines:` sections, their options indented below
    them (the values of an option's enum, less)."""
    passes, indent_of_entries, pipelines, current = {}, None, False, None
    for line in helptext.splitlines():
        indent, entry = len(line) - len(line.lstrip()), line.strip()
        if entry in ("Passes:", "Pass Pipelines:"):
            indent_of_entries, pipelines = indent + 2, entry == "Pass Pipelines:"
        elif indent_of_entries is None or entry.startswith("="):
            continue
        elif indent < indent_of_entries:
            indent_of_entries = None
        elif m := re.match(r"--([\w-]+)(?:=<(\w+)>)?\s", entry + " "):
            name, kind = m.groups()
            if indent == indent_of_entries:
                current = name if name.startswith(PASS_PREFIXES) else None
                if current:
                    passes[current] = (pipelines, [])
            elif current and kind in (None, "int", "long", "uint", "ulong"):
                passes[current][1].append((name, kind))
    return passes


def pass_modes(opt, workdir):
    """{mode: (pass name, --pass-pipeline text with @OPTIONS@ where its
    options go, [(option, 'flag', 'number' or 'list')])} for this project's
    passes, nested in tile.kernel where that runs (on an empty module, which
    has no kernel to fail on), else on the module; and the pipelines' names.
    Whether a number option takes a list, a run with `option=1,2` tells."""
    helptext = subprocess.run([opt, "--help"], capture_output=True, text=True).stdout
    empty = Path(workdir) / "empty.mlir"
    empty.write_text("module {}\n")

    def runs(pipeline):
        return subprocess.run([opt, str(empty), f"--pass-pipeline={pipeline}", "-o", os.devnull],
                              capture_output=True, text=True).returncode == 0

    modes, pipelines = {}, set()
    for name, (pipeline, options) in project_passes(helptext).items():
        if pipeline:
            pipelines.add(name)
        form = "builtin.module(tile.kernel({}))"
        if not runs(form.format(name)):
            form = "builtin.module({})"
        form = form.format(name + "@OPTIONS@")
        knobs = [(o, "flag" if kind is None else
                  "list" if runs(form.replace("@OPTIONS@", "{" + o + "=1,2}")) else "number")
                 for o, kind in options]
        modes[name] = (name, form, knobs)
    return modes, pipelines


def random_options(name, knobs, rng):
    """One of PASS_OPTIONS' sets for the pass, and a quarter of the time one
    or two of its flags and number options set at random over it."""
    options = {}  # a flag set: None
    for o in rng.choice(PASS_OPTIONS.get(name, [""])).strip("{}").split():
        key, equals, value = o.partition("=")
        options[key] = value if equals else None
    if knobs and rng.random() < 0.25:
        for knob, kind in rng.sample(knobs, min(len(knobs), rng.choice([1, 2]))):
            count = rng.choice([0, 1, 2, 3]) if kind == "list" else 1
            options[knob] = (rng.choice([None, "false"]) if kind == "flag" else
                             ",".join(rng.choice(OPTION_VALUES) for _ in range(count)))
    text = " ".join(k if v is None else k + "=" + v for k, v in options.items())
    return "{" + text + "}" if text else ""


def judge(status, err):
    """(outcome, signature): outcome 'ok', 'crash' or 'upstream' (a known crash
    of MLIR itself, signature its name); the signature tells crashes apart."""
    # SIGXCPU at the CPU limit, SIGKILL at twice it if that was caught.
    if status in (-signal.SIGXCPU, -signal.SIGKILL):
        return "crash", "hang"
    mark = next((m for m in CRASH_MARKS if m in err), None)
    if status in (0, 1) and not mark:
        if status == 1 and "error:" not in err:
            return "crash", "status 1 without a diagnostic"
        # Diagnostics start at column 0; source lines they quote are indented.
        unlocated = next((l for l in err.splitlines()
                          if ": error: " in l and not l[:1].isspace() and not LOCATED.match(l)),
                         None)
        if unlocated:
            message = re.sub(r"\d+", "N", unlocated.split("error: ", 1)[1])
            return "crash", f"error without a location: {message[:100]}"
        return "ok", ""
    known = next((name for name, frame in KNOWN_UPSTREAM.items() if frame in err), None)
    if known:
        return "upstream", known
    first = next((l for l in err.splitlines()
                  if any(m in l for m in CRASH_MARKS[:2] + CRASH_MARKS[4:])), "")
    # The innermost frame of our code, without addresses (they move).
    frames = [m.group(1) for m in re.finditer(r"#\d+ 0x[0-9a-f]+ (.*?) \(/", err)]
    frame = next((f for f in frames if "sparse_mla" in f), frames[0] if frames else "")
    return "crash", f"status {status}: {first[:100]} {frame[:160]}".strip()


def run(args, text, workdir):
    """judge()'s verdict on sparse-mla-opt with `args` on `text`."""
    with tempfile.NamedTemporaryFile("w", suffix=".mlir", dir=workdir, delete=False) as f:
        f.write(text)
        path = f.name
    case = path[:-len(".mlir")]
    # A copy of the compiler (a rebuild may replace the original meanwhile),
    # with memory capped: eating memory is a failure too.
    cmd = ["prlimit", f"--as={MEMORY_BYTES}", f"--cpu={CPU_SECONDS}:{2 * CPU_SECONDS}", "--core=0",
           str(Path(workdir) / "sparse-mla-opt"),
           path, *[a.replace("@CASE@", case) for a in args], "-o", os.devnull]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=TIMEOUT_S,
                           errors="replace")
    except subprocess.TimeoutExpired:
        return "crash", "hang"
    finally:
        for written in glob.glob(glob.escape(case) + "*"):
            os.unlink(written)
    return judge(p.returncode, p.stderr)


def minimize(args, text, signature, workdir, seconds):
    """Smaller input that still crashes with `signature`: chunks of lines
    dropped while it does, the chunks halving, for at most `seconds` (a
    kernel through the whole pipeline takes seconds a run)."""
    def same(t):
        return run(args, t, workdir) == ("crash", signature)

    deadline = time.time() + seconds
    lines = text.splitlines()
    n = max(1, len(lines) // 2)
    while n >= 1 and time.time() < deadline:
        i, changed = 0, False
        while i < len(lines) and time.time() < deadline:
            trial = lines[:i] + lines[i + n:]
            if trial and same("\n".join(trial)):
                lines, changed = trial, True
            else:
                i += n
        if not changed:
            n //= 2
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--seed", type=int, default=None, help="random seed (default: time)")
    ap.add_argument("--modes", default=None, help="comma-separated (default: all)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--out", default=None, help="folder for the minimized crashes")
    ap.add_argument("--minimize-seconds", type=float, default=60,
                    help="most time spent minimizing one crash")
    a = ap.parse_args()
    seed = a.seed if a.seed is not None else int(time.time())
    rng = random.Random(seed)
    corpus = seeds()
    vocabulary = {"words": syntax_words(), "attrs": pass_attributes()}
    ops = op_names()
    forms_of = {op: op_forms(op, corpus) for op in ops}
    unseeded = [op for op in ops if not forms_of[op]]
    if unseeded:
        print("fuzz_opt: no seed holds " + ", ".join(unseeded)
              + ": give each a lit test", file=sys.stderr)
        return 1
    started = time.time()
    with tempfile.TemporaryDirectory() as workdir, \
            concurrent.futures.ThreadPoolExecutor(a.jobs) as pool:
        opt = Path(workdir) / "sparse-mla-opt"
        shutil.copy2(ROOT / "build/bin/sparse-mla-opt", opt)
        all_modes, chains = pass_modes(str(opt), workdir)
        all_modes["prepared-convert"] = ("prepared-convert", PREPARED_CONVERT, [])
        chains.add("prepared-convert")
        modes = a.modes.split(",") if a.modes else sorted(all_modes)
        unknown = [m for m in modes if m not in all_modes]
        if unknown:
            ap.error(f"unknown modes {unknown}; there are {sorted(all_modes)}")
        counts = {m: 0 for m in modes}
        variants = collections.Counter()  # "": seeds as they are
        op_counts = {op: 0 for op in ops}
        crashes, upstream = {}, {}
        turn = 0

        generic_texts, staged_texts = {}, {}
        alone = [m for m in all_modes if m not in chains]

        def case():
            nonlocal turn
            # Half the cases go through to NVVM: one pass alone reaches no lowering.
            chained = [m for m in modes if m in chains]
            single = [m for m in modes if m not in chains]
            mode = rng.choice(chained if chained and (not single or rng.random() < 0.5)
                              else single)
            pass_name, template, knobs = all_modes[mode]
            pipeline = template.replace("@OPTIONS@", random_options(pass_name, knobs, rng))

            def variant(name, text):
                """(name, text) of the seed as the staging pipeline hands it to
                the pass (half the cases of a pass alone), or in the generic
                form (a quarter of the others); None: the seed as it is."""
                if mode in alone and rng.random() < 0.5:
                    # Staged by the pool, for the cases after this one.
                    if text not in staged_texts:
                        staged_texts[text] = pool.submit(staged_forms, str(opt), text, alone,
                                                         workdir)
                    elif staged_texts[text].done() and mode in staged_texts[text].result():
                        return f"{name} (before {mode})", staged_texts[text].result()[mode]
                if rng.random() < 0.25 and (g := generic_form(str(opt), text, generic_texts)):
                    return f"{name} (generic)", g
                return None

            op = None
            if rng.random() < 0.5:
                op, turn = ops[turn % len(ops)], turn + 1
                form = rng.choice(sorted(forms_of[op]))
                name, seed_text, _ = rng.choice(forms_of[op][form])
                use = op_use(op)
                line_of = lambda l: use.search(l) and op_form(l) == form
                if (v := variant(name, seed_text)) and use.search(v[1]):
                    (name, seed_text), line_of = v, use.search
                # Some mutations find nothing to change in the op's line.
                for _ in range(8):
                    text = mutate(seed_text, rng, corpus, vocabulary, line_of)
                    if text != seed_text:
                        break
            else:
                name, text, _ = rng.choice(corpus)
                name, text = variant(name, text) or (name, text)
            for _ in range(rng.choice([0, 0, 1]) if op else rng.choice([1, 1, 2, 3])):
                text = mutate(text, rng, corpus, vocabulary)
            return name, op, mode, ["--pass-pipeline=" + pipeline], text

        deadline = started + a.seconds
        pending = set()
        while time.time() < deadline or pending:
            while time.time() < deadline and len(pending) < 2 * a.jobs:
                meta = case()
                fut = pool.submit(run, meta[3], meta[4], workdir)
                fut.meta = meta
                pending.add(fut)
            done, pending = concurrent.futures.wait(
                pending, timeout=1, return_when=concurrent.futures.FIRST_COMPLETED)
            for fut in done:
                name, op, mode, args, text = fut.meta
                counts[mode] += 1
                variants[name[name.find(" ("):] if name.endswith(")") else ""] += 1
                if op:
                    op_counts[op] += 1
                outcome, signature = fut.result()
                if outcome == "upstream":
                    upstream.setdefault(signature, [0, args, text])[0] += 1
                # One crash in several modes is one (its frame tells it); a
                # hang has no frame.
                elif outcome == "crash" and (signature, signature == "hang" and mode) not in crashes:
                    print(f"CRASH [{mode}] {signature}\n  from {name}", flush=True)
                    small = minimize(args, text, signature, workdir, a.minimize_seconds)
                    crashes[(signature, signature == "hang" and mode)] = (name, args, small)
                    print(f"  sparse-mla-opt {' '.join(args)} on:\n"
                          + "".join("    " + l + "\n" for l in small.splitlines()), flush=True)
    elapsed = time.time() - started
    print(f"fuzz_opt: seed {seed}, {sum(counts.values())} cases in {elapsed:.0f} s: "
          + ", ".join(f"{m} {n}" for m, n in counts.items()))
    print(f"fuzz_opt: {sum(op_counts.values())} cases aimed at the {len(ops)} ops "
          f"({min(op_counts.values())} to {max(op_counts.values())} each): "
          + ", ".join(f"{op} {n}" for op, n in op_counts.items()))
    staged = sum(n for v, n in variants.items() if v.startswith(" (before"))
    print(f"fuzz_opt: {variants[''] } cases on seeds as they are, {staged} as the staging "
          f"pipeline hands them to the pass, {variants[' (generic)']} in the generic form")
    for known, (n, _, _) in upstream.items():
        print(f"fuzz_opt: known upstream crash, not ours: {known} ({n} cases)")
    if a.out and (crashes or upstream):
        out = Path(a.out)
        out.mkdir(parents=True, exist_ok=True)
        for i, ((signature, _), (name, args, small)) in enumerate(crashes.items()):
            (out / f"crash{i}.mlir").write_text(
                f"// sparse-mla-opt {' '.join(args)}\n// {signature}\n// from {name}\n" + small)
        for i, (known, (n, args, text)) in enumerate(sorted(upstream.items())):
            (out / f"upstream{i}.mlir").write_text(
                f"// sparse-mla-opt {' '.join(args)}\n// {known}\n" + text + "\n")
    print(f"fuzz_opt: {len(crashes)} distinct crashes" if crashes else "fuzz_opt: no crash")
    return 1 if crashes else 0


if __name__ == "__main__":
    sys.exit(main())
