"""Compile the CUDA kernels for real GPUs on a machine without one: NVVM to PTX, then ptxas.

Numba's CUDA simulator runs kernels as Python and never compiles them, so a
kernel could pass every simulated test and still not compile for a GPU.
This compiles, in a process without the simulator, for each architecture of
:data:`ARCHS` (sm_90: the H100 and H200):

``signatures``
    every (kernel, argument types) of ``tests/cuda_signatures.json`` (the
    launches the CUDA tests make, recorded by ``tools/cuda_signatures.py``),
    with the options ``launch.kernel`` gives the kernel;
``fused``
    the generated kernels of ``minitorch.compile`` (``backends/cuda/fused.py``)
    for a program that uses every fusable op, forward (float64) and backward
    (float32, which runs the forward body too);
``stubs``
    module 6's GPU tasks as a student edition has them (each solution block
    replaced by ``raise NotImplementedError("Task 6.x: ...")``), compiled as
    ``launch.kernel`` compiles them: each must write the exception flag that
    the launcher reads after a launch on a real GPU (see below).

Each PTX is assembled with ``ptxas`` for its architecture (from the
``nvidia-cuda-nvcc-cu12`` wheel that the ``cuda`` extra brings).  No GPU, no
driver: only NVIDIA's compiler libraries.  The compile is told the target
(a device function's compile otherwise asks the driver for the current
device's compute capability), and each kernel is typed and lowered once and
its LLVM code library asked for the PTX of each architecture.

**Stubs on a GPU.**  In a kernel compiled without ``debug=True`` a ``raise``
just ends the thread: on a GPU a stub would silently write nothing.
Compiled with ``debug=True``, the kernel stores the exception's code into a
global ``<kernel>__errcode__`` (an atomic compare-and-swap, first error wins)
and Numba's launcher reads it back after the launch and raises the
exception, ``NotImplementedError: tid=[...] ctaid=[...]: Task 6.1: ...``.
``launch.kernel`` compiles a stub so (:func:`minitorch.backends.cuda.launch.is_stub`),
and so does every kernel in a course run.  The ``stubs`` job checks the PTX
for that store, and that the same stub compiled without ``debug`` has none
(so the check can fail).

Run by ``tests/test_cuda_ptx.py``; by hand::

    python tools/cuda_ptx.py                    # everything, in one process
    python tools/cuda_ptx.py signatures:0/2 fused   # half the listed signatures, the fused

prints one JSON object: ``{"compiled": N, "failures": [...], "seconds": ...}``
(``{"unavailable": reason}`` where NVVM is not installed).
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import types as pytypes
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIST = ROOT / "tests" / "cuda_signatures.json"
#: The architectures compiled for: (9, 0) is the H100's and the H200's, the GPUs the kernels
#: have run on (docs/cuda.md).  The A100's (8, 0) was compiled too until CI's time ran short:
#: the kernels use no instruction one has and the other lacks, so it found nothing the
#: other did not, at about 10 s a run; add it back here to check an A100 by hand.
ARCHS = ((9, 0),)



def _own_process() -> None:
    """Run as its own process: without the simulator (set before ``numba.cuda`` is first
    imported), the tests' launch checks or a course run's options; this checkout first."""
    os.environ["NUMBA_ENABLE_CUDASIM"] = "0"
    for name in ("MINITORCH_CUDA_SIGNATURES", "MINITORCH_CUDA_SIGNATURES_RECORD",
                 "MINITORCH_COURSE_CHECKS"):
        os.environ.pop(name, None)
    sys.path.insert(0, str(ROOT))


def nvvm_missing() -> str | None:
    """Why NVVM cannot be loaded, or None when it can."""
    try:
        from numba.cuda.cudadrv import nvvm
        nvvm.NVVM()
    except Exception as e:                  # noqa: BLE001 (any loading failure: the reason)
        return f"{type(e).__name__}: {e}"
    return None


def find_ptxas() -> str | None:
    """``ptxas``: the ``nvidia-cuda-nvcc-cu12`` wheel's, else one on the PATH or in CUDA_HOME."""
    try:
        spec = importlib.util.find_spec("nvidia.cuda_nvcc")
    except ModuleNotFoundError:
        spec = None
    places = [Path(p) / "bin" / "ptxas" for p in (spec.submodule_search_locations or [])] \
        if spec else []
    for home in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH")):
        if home:
            places.append(Path(home) / "bin" / "ptxas")
    for place in places:
        if place.is_file() and os.access(place, os.X_OK):
            return str(place)
    return shutil.which("ptxas")


def _target_device(cc: tuple) -> None:
    """Tell numba-cuda's device-function compile the target: it asks the driver for the
    current device's compute capability (``CUDADispatcher.compile_device``)."""
    import numba.cuda.dispatcher as dispatcher
    dispatcher.get_current_device = lambda: pytypes.SimpleNamespace(compute_capability=cc)


def compile_ptx(py_func, argtypes: tuple, options: dict) -> dict:
    """``{cc: PTX text}`` of the kernel ``py_func`` for ``argtypes``, for each of :data:`ARCHS`.

    Typed and lowered once (for the first architecture: the lowering does not
    depend on it for these); NVVM then makes each architecture's PTX from the
    same LLVM library.  Falls back on ``compile_ptx`` per architecture if
    numba-cuda's internals moved.
    """
    from numba import cuda
    kwargs = dict(debug=bool(options.get("debug", False)), opt=options.get("opt", True),
                  fastmath=bool(options.get("fastmath", False)),
                  lineinfo=bool(options.get("lineinfo", False)))
    try:
        from numba.cuda.compiler import _compile_pyfunc_with_fixup
    except ImportError:
        return {cc: cuda.compile_ptx(py_func, argtypes, cc=cc, **kwargs)[0] for cc in ARCHS}
    lib, _ = _compile_pyfunc_with_fixup(py_func, argtypes, device=False, abi="numba",
                                        cc=ARCHS[0], **kwargs)
    return {cc: lib.get_asm_str(cc=cc) for cc in ARCHS}


def assemble(ptxas: str, ptx: str, cc: tuple, folder: Path, stem: str) -> str | None:
    """Assemble ``ptx`` for ``sm_<cc>`` with ptxas: None, or ptxas' message."""
    arch = f"sm_{cc[0]}{cc[1]}"
    target = re.search(r"^\.target\s+(\S+)", ptx, re.M)
    if target is None or target.group(1).rstrip(",") != arch:
        return f"the PTX targets {target.group(1) if target else 'nothing'}, not {arch}"
    source = folder / f"{stem}_{arch}.ptx"
    source.write_text(ptx, encoding="utf-8")
    # -O0: what is checked here (the instructions and resources the architecture has)
    # does not depend on ptxas' optimisation, which halves its time.  -c (relocatable code)
    # where the PTX calls functions of a library numba-cuda links in at load time (float16
    # arithmetic: ``.extern .func``), which are left to that link.
    extern = ["-c"] if re.search(r"^\.extern \.func", ptx, re.M) else []
    done = subprocess.run([ptxas, f"-arch={arch}", "-O0", *extern, "-o", os.devnull,
                           str(source)], capture_output=True, text=True)
    source.unlink()
    return None if done.returncode == 0 else (done.stderr or done.stdout).strip()[-1500:]


def _failure(what: str, signature: list, error: BaseException | str) -> dict:
    message = error if isinstance(error, str) else f"{type(error).__name__}: {error}"
    return {"kernel": what, "signature": signature, "error": message[-3000:]}


def _compile_all(jobs: list, ptxas: str) -> tuple:
    """Compile and assemble ``jobs`` (``(name, py_func, argtypes, options)``)."""
    from minitorch.backends.cuda.signatures import type_text
    failures, compiled, ptxes = [], 0, {}
    with tempfile.TemporaryDirectory(prefix="minitorch-ptx-") as tmp:
        for k, (name, py_func, argtypes, options) in enumerate(jobs):
            shown = [type_text(t) for t in argtypes]
            try:
                ptx = compile_ptx(py_func, argtypes, options)
            except Exception as e:          # noqa: BLE001 (Numba's message, whatever it is)
                failures.append(_failure(name, shown, e))
                continue
            for cc, text in ptx.items():
                error = assemble(ptxas, text, cc, Path(tmp), f"k{k}")
                if error:
                    failures.append(_failure(f"{name} (ptxas sm_{cc[0]}{cc[1]})", shown, error))
            compiled += 1
            ptxes[(name, tuple(shown))] = ptx
    return compiled, failures, ptxes


# ---------------------------------------------------------------------------
# The jobs
# ---------------------------------------------------------------------------
def _kernel(name: str):
    """The kernel ``"module.qualname"`` (its dispatcher)."""
    module, _, qualname = name.rpartition(".")
    return getattr(importlib.import_module(module), qualname)


def shard_of(pairs: list, shard: int, shards: int) -> list:
    """Part ``shard`` of ``shards`` of the sorted ``pairs``: a run of neighbours, so that a
    process compiles one module's kernels, which share device functions and dtypes (Numba
    compiles a device function once a process for each signature)."""
    return pairs[len(pairs) * shard // shards:len(pairs) * (shard + 1) // shards]


def signature_jobs(shard: int, shards: int) -> list:
    """The listed (kernel, signature) pairs of part ``shard`` of ``shards``."""
    from minitorch.backends.cuda.signatures import parse_type
    kernels = json.loads(LIST.read_text(encoding="utf-8"))["kernels"]
    pairs = [(name, sig) for name in sorted(kernels) for sig in kernels[name]]
    jobs = []
    for name, sig in shard_of(pairs, shard, shards):
        kernel = _kernel(name)
        jobs.append((name, kernel.py_func, tuple(parse_type(t) for t in sig),
                     dict(kernel.targetoptions)))
    return jobs


FUSED_ARITH = ("Add", "Sub", "Mul", "Div")


def fused_programs() -> list:
    """Programs that together use every fusable op (each op whose eager derivative the
    compiler reads as source), with a scalar input and constant operands on either side,
    forward and backward."""
    from minitorch.backends import scalar_ops
    from minitorch.backends.fusion_program import ElementwiseProgram, Instruction
    from minitorch.compiler import derivative_source
    from minitorch.ops import elementwise
    params = {scalar_ops.CLAMP: (-0.5, 0.5), scalar_ops.LEAKY_RELU: (0.01, 0.0),
              scalar_ops.ELU: (1.0, 0.0), scalar_ops.POW_SCALAR: (3.0, 0.0),
              scalar_ops.SOFTPLUS: (1.0, 20.0)}
    body = []
    for cls in sorted(derivative_source.fusable_unary_ops(), key=lambda c: c.op):
        p = params.get(cls.op, (0.0, 0.0))  # v2 = f(v0), v3 = g(v2), ...: a chain
        body.append(Instruction("unary", cls.op, (1 + len(body) if body else 0,), p,
                                (derivative_source.unary_derivative(cls, *p),)))
    for k, name in enumerate(FUSED_ARITH):
        cls = getattr(elementwise, name)
        op = getattr(scalar_ops, name.upper())
        last = 1 + len(body)
        # the scalar input, a constant on either side, and a value with itself
        other = [1, 2.0, last, 0][k % 4]
        body.append(Instruction("arith", op, (last, other) if k != 2 else (0.5, last),
                                derivatives=derivative_source.arith_derivatives(cls)))
    n = 2 + len(body)
    # The backward kernel runs the forward body too (its values feed the derivatives), so
    # a float32 backward and a float64 forward cover every op in both dtypes.
    return [ElementwiseProgram("float64", 2, (False, True), tuple(body), (n - 1, 2 + 3)),
            ElementwiseProgram("float32", 2, (False, True), tuple(body), (n - 1, 2 + 3),
                               grads_for=(0, 1))]


def fused_jobs() -> list:
    from numba.core import types
    from minitorch.backends.cuda import fused
    jobs = []
    for program in fused_programs():
        module = fused.kernels_for(program)
        array = getattr(types, program.dtype)[::1]
        if program.grads_for:
            kernel = module.backward
            count = program.n_inputs + len(program.outputs) + len(program.grads_for)
        else:
            kernel = module.forward
            count = program.n_inputs + len(program.outputs)
        name = f"fused {'backward' if program.grads_for else 'forward'} {program.dtype}"
        jobs.append((name, kernel.py_func, (array,) * count + (types.int64,),
                     dict(kernel.targetoptions)))
    return jobs


def _stubbed_modules(folder: Path) -> dict:
    """``{task id: (module, function name)}``: the files of the GPU tasks with every
    solution block stubbed, as an edition has them, imported from ``folder``."""
    from minitorch.course.markers import find_tasks, strip_source
    tasks = [t for t in find_tasks(ROOT) if t.path.startswith("minitorch/backends/cuda/")]
    found = {}
    for path in sorted({t.path for t in tasks}):
        ids = {t.id for t in tasks if t.path == path}
        text, stubbed = strip_source((ROOT / path).read_text(encoding="utf-8"),
                                     keep=lambda task_id: task_id not in ids, path=path)
        stem = Path(path).stem
        file = folder / f"{stem}_stubbed.py"
        file.write_text(text, encoding="utf-8")
        # A sibling of the real module, so its relative imports resolve.
        name = f"minitorch.backends.cuda.{stem}_stubbed"
        spec = importlib.util.spec_from_file_location(name, file)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        for t in tasks:
            if t.path == path:
                found[t.id] = (module, t.function, f"{path[:-3].replace('/', '.')}.{t.function}")
    return found


#: The exception flag a debug kernel writes: the global ``<kernel>__errcode__``.
_FLAG = re.compile(r"^\.(?:visible )?\.global \.align 4 \.u32 (\S+__errcode__);", re.M)


def writes_the_flag(ptx: str) -> bool:
    """Does ``ptx`` store to its ``__errcode__`` flag by an atomic compare-and-swap?

    NVVM writes it as the flag's address into a register, made generic
    (``cvta.global``), then ``atom.cas.b32 %r, [%rd], ...``; or, optimised,
    ``atom.global.cas.b32 %r, [flag], ...``.
    """
    flags = _FLAG.findall(ptx)
    if not flags:
        return False
    places = set(flags)
    for flag in flags:
        for reg in re.findall(rf"mov\.u64\s+(%rd\d+), {re.escape(flag)};", ptx):
            places.add(reg)
            places.update(re.findall(rf"cvta\.global\.u64\s+(%rd\d+), {re.escape(reg)};", ptx))
    stores = re.findall(r"atom(?:\.global)?\.cas\.b32\s+%r\d+, \[([^\]+]+)\]", ptx)
    return any(place in places for place in stores)


def stub_checks(ptxas: str) -> tuple:
    from minitorch.backends.cuda.launch import is_stub
    from minitorch.backends.cuda.signatures import parse_type
    kernels = json.loads(LIST.read_text(encoding="utf-8"))["kernels"]
    failures, compiled = [], 0
    with tempfile.TemporaryDirectory(prefix="minitorch-stubs-") as tmp:
        for task_id, (module, function, reference) in sorted(_stubbed_modules(Path(tmp)).items()):
            stub = getattr(module, function)
            what = f"Task {task_id} stub ({function})"
            if not is_stub(stub.py_func):
                failures.append(_failure(what, [], "launch.is_stub does not see the stub"))
            options = dict(stub.targetoptions)
            if not (options.get("debug") and options.get("opt") is False):
                failures.append(_failure(what, [], f"launch.kernel compiled it with {options}, "
                                         "not debug=True, opt=False: on a GPU it would not raise"))
            if reference not in kernels:
                failures.append(_failure(what, [], f"{reference} is not in {LIST.name}"))
                continue
            argtypes = tuple(parse_type(t) for t in kernels[reference][0])
            n, bad, ptxes = _compile_all([(what, stub.py_func, argtypes, options)], ptxas)
            optimised = compile_ptx(stub.py_func, argtypes, {})      # the control: no ptxas
            compiled += n
            failures += bad
            for (_, shown), ptx in ptxes.items():
                for cc, text in ptx.items():
                    if not writes_the_flag(text):
                        failures.append(_failure(f"{what} (sm_{cc[0]}{cc[1]})", shown,
                                                 "no atomic store to an __errcode__ flag: on a "
                                                 "GPU the stub would end silently"))
            if any(writes_the_flag(text) for text in optimised.values()):
                failures.append(_failure(what, list(kernels[reference][0]), "the optimised "
                                         "build writes an __errcode__ flag too: the check "
                                         "proves nothing"))
    return compiled, failures


def run_job(job: str, ptxas: str) -> tuple:
    """``(compiled, failures)`` of one job: ``signatures[:I/N]``, ``fused`` or ``stubs``."""
    if job.startswith("signatures"):
        shard, shards = (int(x) for x in (job.partition(":")[2] or "0/1").split("/"))
        compiled, failures, _ = _compile_all(signature_jobs(shard, shards), ptxas)
    elif job == "fused":
        with tempfile.TemporaryDirectory(prefix="minitorch-fused-") as tmp:
            os.environ["MINITORCH_COMPILE_DIR"] = tmp
            compiled, failures, _ = _compile_all(fused_jobs(), ptxas)
    elif job == "stubs":
        compiled, failures = stub_checks(ptxas)
    else:
        raise ValueError(f"unknown job {job!r}: signatures[:I/N], fused or stubs")
    return compiled, failures


def main(argv: list) -> int:
    """Run the jobs named in ``argv`` (default: all) in this process; print one JSON line."""
    started = time.perf_counter()
    _own_process()
    jobs = argv or ["signatures", "fused", "stubs"]
    bad = [j for j in jobs if j.partition(":")[0] not in ("signatures", "fused", "stubs")]
    if bad:
        print(f"error: unknown job {bad[0]!r}: signatures[:I/N], fused or stubs",
              file=sys.stderr)
        return 2
    missing = nvvm_missing()
    if missing:
        print(json.dumps({"unavailable": missing}))
        return 0
    ptxas = find_ptxas()
    if ptxas is None:
        print(json.dumps({"compiled": 0, "failures": [_failure(
            "ptxas", [], "not found: install the cuda extra (nvidia-cuda-nvcc-cu12), "
            "or put CUDA's ptxas on the PATH")]}))
        return 0
    _target_device(ARCHS[0])
    compiled, failures = 0, []
    for job in jobs:
        n, found = run_job(job, ptxas)
        compiled += n
        failures += found
    print(json.dumps({"jobs": jobs, "compiled": compiled, "failures": failures,
                      "archs": [f"sm_{a}{b}" for a, b in ARCHS],
                      "seconds": round(time.perf_counter() - started, 1)}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
