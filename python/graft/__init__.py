"""graft: optimize ONNX models with rewrite rules, from Python.

A thin layer over libgraft.so (ctypes; nothing to build, nothing from pip):
each call runs the same library code as the graft command line, and an
error raises graft.Error with the one line the command would print.

    import onnx, graft
    result = graft.optimize(onnx.load("model.onnx"))
    print(result.nodes_before, "->", result.nodes_after, result.fired)
    assert graft.compare(onnx.load("model.onnx"), result.model).agree

Models are onnx.ModelProto, bytes (a serialized ModelProto) or a path; an
in-memory model is handed to graft as bytes, serialized once on the way in
and parsed once on the way out (no temporary files).  See python/README.md.
"""

import ctypes
import json
import os
import threading

__all__ = ["Error", "Result", "Comparison", "OutputDiff", "Verification", "RuleVerdict",
           "optimize", "convert", "compare", "run", "verify"]


class Error(Exception):
    """A failed graft call; str(e) is the first error the graft command
    prints, one line ("model.onnx: not an ONNX model: ..."); e.log is all it
    would print on stderr."""

    def __init__(self, message, log=""):
        super().__init__(message)
        self.message = message
        self.log = log


# ---- the library ---------------------------------------------------------------

def _find_library():
    """libgraft.so: $GRAFT_LIB, else the one `make install` put beside this
    file, else the checkout's (python/graft/ -> build/), else wherever the
    dynamic loader finds it."""
    here = os.path.dirname(os.path.abspath(__file__))
    candidates = [os.environ.get("GRAFT_LIB"),
                  os.path.join(here, "libgraft.so"),
                  os.path.join(here, "..", "..", "build", "libgraft.so")]
    for path in candidates:
        if path and os.path.exists(path):
            return os.path.normpath(path)
    return "libgraft.so"


# ctypes.CDLL (not PyDLL) releases the GIL for the length of every call into
# libgraft, so other Python threads run while graft optimizes, compares or
# verifies.  libgraft keeps some process-wide state (the memory planner's sort
# order, tables built on first use, the list of outputs being written), so
# one graft call runs at a time: _busy serializes them.
_lib = ctypes.CDLL(_find_library())
_busy = threading.Lock()


class _Options(ctypes.Structure):
    """GraftOptions (runtime/api/graft_api.h), field for field."""
    _fields_ = [("levels", ctypes.POINTER(ctypes.c_char_p)), ("nlevels", ctypes.c_int),
                ("enable", ctypes.POINTER(ctypes.c_char_p)), ("nenable", ctypes.c_int),
                ("disable", ctypes.POINTER(ctypes.c_char_p)), ("ndisable", ctypes.c_int),
                ("rules", ctypes.POINTER(ctypes.c_char_p)), ("nrules", ctypes.c_int),
                ("no_library", ctypes.c_int), ("allow_vendor_ops", ctypes.c_int),
                ("target_opset", ctypes.c_int), ("external_data", ctypes.c_int),
                ("external_data_threshold", ctypes.c_size_t)]


_P = ctypes.c_void_p
_S = ctypes.c_char_p
_Z = ctypes.c_size_t
_I = ctypes.c_int


def _declare(name, restype, *argtypes):
    f = getattr(_lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)
    return f


_optimize = _declare("graft_optimize", _P, _S, _S, _Z, _S, ctypes.POINTER(_Options))
_convert = _declare("graft_convert", _P, _S, _S, _Z, _S, _I)
_compare = _declare("graft_compare", _P, _S, _S, _Z, _S, _S, _Z, _I, _I,
                    ctypes.POINTER(_S), ctypes.POINTER(ctypes.c_int64), _I)
_run = _declare("graft_run", _P, _S, _S, _Z, _I, ctypes.POINTER(_S), ctypes.POINTER(_I), ctypes.POINTER(_I),
                ctypes.POINTER(ctypes.c_int64), ctypes.POINTER(_P))
_verify = _declare("graft_verify", _P, ctypes.POINTER(_S), _I, _I, ctypes.c_uint64, _S, _I)
_status = _declare("graft_result_status", _I, _P)
_error = _declare("graft_result_error", _S, _P)
_log = _declare("graft_result_log", _S, _P)
_model = _declare("graft_result_model", _P, _P, ctypes.POINTER(_Z))
_json = _declare("graft_result_json", _S, _P)
_report = _declare("graft_result_report", _S, _P)
_ntensors = _declare("graft_result_ntensors", _I, _P)
_tensor = _declare("graft_result_tensor", _P, _P, _I, ctypes.POINTER(_S), ctypes.POINTER(_I), ctypes.POINTER(_I),
                   ctypes.POINTER(ctypes.POINTER(ctypes.c_int64)), ctypes.POINTER(_Z))
_free = _declare("graft_result_free", None, _P)

# graft's status codes (the command's exit codes)
_OK, _INPUT, _USAGE, _STOPPED = 0, 1, 2, 3


def _call(f, *args):
    """f(*args) into libgraft, one call at a time, the GIL released."""
    with _busy:
        return f(*args)


class _Call:
    """A GraftResult, freed on leaving the with block."""

    def __init__(self, handle):
        if not handle:
            raise MemoryError("graft: out of memory")
        self.h = handle

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _free(self.h)

    @property
    def status(self):
        return _status(self.h)

    def text(self, getter):
        s = getter(self.h)
        return s.decode("utf-8", "replace") if s is not None else None

    def fail(self):
        """graft.Error with the call's first error and its whole log."""
        log = self.text(_log)
        message = self.text(_error) or (log.strip().splitlines() or ["graft failed"])[-1]
        return Error(message, log)

    def model_bytes(self):
        size = _Z()
        p = _model(self.h, ctypes.byref(size))
        return ctypes.string_at(p, size.value) if p else None


def _strings(items):
    """A C array of char * for a sequence of str/paths (and its length)."""
    items = [os.fsencode(x) for x in items]
    return (_S * max(len(items), 1))(*items), len(items)


def _model_arg(model):
    """(path, bytes, kind) for a model given as a ModelProto, bytes or a path."""
    if isinstance(model, (str, os.PathLike)):
        return os.fsencode(model), None, "path"
    if isinstance(model, (bytes, bytearray, memoryview)):
        return None, bytes(model), "bytes"
    if hasattr(model, "SerializeToString"):
        return None, model.SerializeToString(), "proto"
    raise TypeError("graft: a model is an onnx.ModelProto, bytes or a path, not %s" % type(model).__name__)


def _model_out(data, kind):
    """The output model in the kind the input came as (bytes for a path)."""
    if kind != "proto":
        return data
    import onnx
    m = onnx.ModelProto()
    m.ParseFromString(data)
    return m


# ---- optimize -------------------------------------------------------------------

class Result:
    """What graft.optimize did.

    model         the optimized model: an onnx.ModelProto when the input was
                  one, else bytes; the output path when output= was given
    fired         {rule or pass name: times it fired}
    report        the audit (graft optimize --report) as a dict
    nodes_before, nodes_after   node counts of the main graph
    stop          "fixpoint", or why the engine stopped ("out_of_fuel", "cycle")
    log           what `graft optimize` prints on stderr: the op table and the fire counts
    """

    def __init__(self, model, summary, report, log):
        self.model = model
        self.fired = summary["fired"]
        self.nodes_before = summary["nodes_before"]
        self.nodes_after = summary["nodes_after"]
        self.rewrites = summary["rewrites"]
        self.stop = summary["stop"]
        self.report = report
        self.log = log

    def __repr__(self):
        return "<graft.Result %d -> %d nodes, %d rewrites, %s>" % (
            self.nodes_before, self.nodes_after, self.rewrites, self.stop)


def _names(x):
    return [x] if isinstance(x, (str, os.PathLike)) else list(x or ())


def optimize(model, *, level=None, rules=(), no_library=False, target_opset=None, allow_vendor_ops=False,
             external_data=None, enable=(), disable=(), output=None):
    """Optimize a model as `graft optimize` does; returns a graft.Result.

    level             "basic", "extended", "layout" or "all", or a list of them (default: all)
    rules             .rules files (paths) run besides the library, loaded now (no compiler)
    no_library        leave graft's compiled rule library out
    target_opset      convert to this opset first (as graft convert)
    allow_vendor_ops  also run the rules that emit com.microsoft ops
    enable, disable   only / not these rules, rule files or levels
    output            save the model to this path (then Result.model is the path)
    external_data     with output: True puts every tensor of 1 KiB or more in
                      OUTPUT.data beside it; a number, the tensors of that many bytes or more
    """
    path, data, kind = _model_arg(model)
    if external_data is not None and output is None:
        raise Error("graft: external_data needs output= (a model in memory has no data file)")
    levels, nlevels = _strings(_names(level))
    en, nen = _strings(_names(enable))
    dis, ndis = _strings(_names(disable))
    rl, nrl = _strings(_names(rules))
    threshold = 0 if external_data in (None, True) else int(external_data)
    opts = _Options(levels, nlevels, en, nen, dis, ndis, rl, nrl, int(bool(no_library)),
                    int(bool(allow_vendor_ops)), int(target_opset or 0), int(external_data is not None), threshold)
    out = os.fsencode(output) if output is not None else None
    with _Call(_call(_optimize, path, data, len(data or b""), out, ctypes.byref(opts))) as c:
        if c.status not in (_OK, _STOPPED):
            raise c.fail()
        summary = json.loads(c.text(_json))
        report = json.loads(c.text(_report))
        result = output if output is not None else _model_out(c.model_bytes(), kind)
        return Result(result, summary, report, c.text(_log))


# ---- convert --------------------------------------------------------------------

def convert(model, opset, *, output=None):
    """The model converted to another opset (1 to 23), as `graft convert`:
    an onnx.ModelProto for one, else bytes; the path with output=."""
    path, data, kind = _model_arg(model)
    out = os.fsencode(output) if output is not None else None
    with _Call(_call(_convert, path, data, len(data or b""), out, int(opset))) as c:
        if c.status != _OK:
            raise c.fail()
        return output if output is not None else _model_out(c.model_bytes(), kind)


# ---- compare --------------------------------------------------------------------

class OutputDiff:
    """One output of a comparison: the largest absolute and relative error
    over the runs, and whether it agrees (same type and shape, every element
    within atol + rtol*|a|, or the same bits with exact=True)."""

    def __init__(self, d):
        self.name = d["name"]
        self.max_abs = float(d["max_abs"])
        self.max_rel = float(d["max_rel"])
        self.agree = d["agree"]
        self.same_type = d["same_type"]
        self.same_shape = d["same_shape"]
        self.mismatches = d["mismatches"]

    def __repr__(self):
        return "<graft.OutputDiff %s: max abs %.3g, max rel %.3g, %s>" % (
            self.name, self.max_abs, self.max_rel, "agree" if self.agree else "DIFFER")


class Comparison:
    """graft.compare's verdict: .agree, .outputs {name: OutputDiff}, .runs, .log
    (the table `graft compare` prints)."""

    def __init__(self, d, log):
        self.agree = d["agree"]
        self.runs = d["runs"]
        self.outputs = {o["name"]: OutputDiff(o) for o in d["outputs"]}
        self.log = log

    def __bool__(self):
        return self.agree

    def __repr__(self):
        return "<graft.Comparison %s over %d run%s>" % (
            "agree" if self.agree else "DIFFER", self.runs, "" if self.runs == 1 else "s")


def compare(a, b, *, runs=3, exact=False, dims=None):
    """Run models a and b on the same generated inputs, as `graft compare`
    (rtol 1e-3, atol 1e-4; exact=True: bit for bit).  dims pins symbolic
    dims: {"batch": 2}.  Models that differ are a Comparison with agree
    False; models that cannot run raise graft.Error."""
    pa, da, _ = _model_arg(a)
    pb, db, _ = _model_arg(b)
    dims = dict(dims or {})
    names, n = _strings(dims.keys())
    values = (ctypes.c_int64 * max(n, 1))(*[int(v) for v in dims.values()])
    with _Call(_call(_compare, pa, da, len(da or b""), pb, db, len(db or b""), int(runs), int(bool(exact)),
                        names, values, n)) as c:
        j = c.text(_json)
        if j is None:
            raise c.fail()
        return Comparison(json.loads(j), c.text(_log))


# ---- run ------------------------------------------------------------------------

# ONNX TensorProto element types <-> numpy dtype names
_DTYPES = {1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32", 7: "int64", 9: "bool",
           10: "float16", 11: "float64", 12: "uint32", 13: "uint64"}
_CODES = {v: k for k, v in _DTYPES.items()}


def run(model, inputs=None):
    """Run the model on graft's reference evaluator; returns {output name:
    numpy array}, in the graph's order.  inputs: {name: array} or a list in
    the order of the graph's inputs (numpy arrays of the model's element
    types); inputs left out are generated as `graft run` does.  An output
    numpy cannot hold (a sequence, strings, bfloat16) is None."""
    import numpy as np
    path, data, _ = _model_arg(model)
    if inputs is None:
        inputs = {}
    items = list(inputs.items()) if isinstance(inputs, dict) else [(None, x) for x in inputs]
    arrays = [np.ascontiguousarray(x) for _, x in items]
    for (name, _), arr in zip(items, arrays):
        if arr.dtype.name not in _CODES:
            raise Error("graft: input '%s': numpy dtype %s has no graft element type" % (name, arr.dtype))
    n = len(arrays)
    names = (_S * max(n, 1))(*[None if k is None else k.encode() for k, _ in items])
    dtypes = (_I * max(n, 1))(*[_CODES[a.dtype.name] for a in arrays])
    ranks = (_I * max(n, 1))(*[a.ndim for a in arrays])
    flat = [d for a in arrays for d in a.shape]
    dims = (ctypes.c_int64 * max(len(flat), 1))(*flat)
    ptrs = (_P * max(n, 1))(*[a.ctypes.data for a in arrays])
    with _Call(_call(_run, path, data, len(data or b""), n, names, dtypes, ranks, dims, ptrs)) as c:
        if c.status != _OK:
            raise c.fail()
        out = {}
        for k in range(_ntensors(c.h)):
            name, dtype, rank = _S(), _I(), _I()
            dp, nbytes = ctypes.POINTER(ctypes.c_int64)(), _Z()
            p = _tensor(c.h, k, ctypes.byref(name), ctypes.byref(dtype), ctypes.byref(rank), ctypes.byref(dp),
                        ctypes.byref(nbytes))
            if not p or dtype.value not in _DTYPES:
                out[name.value.decode()] = None   # a sequence, or a type numpy lacks
                continue
            arr = np.empty([dp[i] for i in range(rank.value)], dtype=_DTYPES[dtype.value])
            ctypes.memmove(arr.ctypes.data, p, nbytes.value)
            out[name.value.decode()] = arr
        return out


# ---- verify ---------------------------------------------------------------------

class RuleVerdict:
    """One rule's verdict: verdict is "verified", "WRONG" or "not exercised";
    line the line `graft verify` prints for it; counterexamples the files it
    saved (before and after) when WRONG."""

    def __init__(self, name, verdict, line, counterexamples):
        self.name = name
        self.verdict = verdict
        self.line = line
        self.counterexamples = counterexamples

    @property
    def verified(self):
        return self.verdict == "verified"

    def __repr__(self):
        return "<graft.RuleVerdict %s: %s>" % (self.name, self.verdict)


class Verification:
    """graft.verify's verdicts: .rules {name: RuleVerdict}, .ok (every rule
    verified), .log (what `graft verify` prints)."""

    def __init__(self, rules, ok, log):
        self.rules = rules
        self.ok = ok
        self.log = log

    def __repr__(self):
        return "<graft.Verification %d rules, %s>" % (len(self.rules), "ok" if self.ok else "not ok")


def _verdicts(log):
    """The rules of graft verify's report: a line per rule ("verified  NAME
    file:line: ...", "WRONG  NAME ...", "not exercised  NAME ..."), then,
    indented, its details ("counterexample: A.onnx (rewritten: B.onnx)")."""
    rules, last = {}, None
    for line in log.splitlines():
        stripped = line.strip()
        if line[:1].isspace():
            if last is not None and stripped.startswith("counterexample: "):
                rest = stripped[len("counterexample: "):]
                before, _, after = rest.partition(" (rewritten: ")
                last.counterexamples = [before, after.rstrip(")")] if after else [before]
            continue
        for verdict in ("verified", "WRONG", "not exercised"):
            if line.startswith(verdict + " ") and len(line[len(verdict):].split()) >= 1:
                name = line[len(verdict):].split()[0]
                last = rules[name] = RuleVerdict(name, verdict, line, [])
                break
        else:
            last = None
    return rules


def verify(paths, *, instances=100, seed=0, out_dir="graft-verify", no_library=False):
    """Try every rule of the .rules files on generated graphs, as `graft
    verify` (see docs/rule-language.md); counterexamples go to out_dir.
    Rules in error raise graft.Error."""
    files, n = _strings(_names(paths))
    with _Call(_call(_verify, files, n, int(instances), int(seed), os.fsencode(out_dir),
                     int(bool(no_library)))) as c:
        log = c.text(_log)
        if c.status != _OK and c.text(_error):
            raise c.fail()
        rules = _verdicts(log)
        return Verification(rules, c.status == _OK, log)
