"""The command line with checkpoints in all three formats, and with damaged files.

``--checkpoint run.pt`` / ``run.safetensors`` / ``run.mt`` picks the format by
extension; ``evaluate`` and ``predict`` read each, whatever its name.  A
damaged checkpoint, PNG, ``.npy`` or IDX file gives one ``Error:`` line and
a non-zero exit, never a traceback.
"""

import gzip
import io
import json
import struct
import zipfile
import zlib

import numpy as np
import pytest
from click.testing import CliRunner

import minitorch as torch
from minitorch.cli import main

pytestmark = pytest.mark.data


def invoke(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


def one_line_error(res, *needles):
    """A failed command: exit code != 0, exactly one non-empty line, naming what went wrong."""
    assert res.exit_code != 0, res.output
    assert not isinstance(res.exception, Exception) or isinstance(res.exception, SystemExit), \
        res.exception
    lines = [line for line in res.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error:"), res.output
    for needle in needles:
        assert needle in lines[0], lines[0]
    return lines[0]


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    """One short MNIST run, its checkpoint written in each format."""
    folder = tmp_path_factory.mktemp("ckpt")
    paths = {}
    for ext in ("mt", "pt", "safetensors"):
        path = folder / f"run.{ext}"
        res = invoke("train", "mnist", "--model", "mlp", "--limit", "128", "--test-limit", "64",
                     "--epochs", "1", "--no-progress", "--checkpoint", path)
        assert res.exit_code == 0, res.output
        paths[ext] = path
    return paths


def test_checkpoint_format_follows_the_extension(checkpoints):
    assert "minitorch.json" in zipfile.ZipFile(checkpoints["mt"]).namelist()
    assert "archive/data.pkl" in zipfile.ZipFile(checkpoints["pt"]).namelist()
    head = checkpoints["safetensors"].read_bytes()
    n = struct.unpack("<Q", head[:8])[0]
    header = json.loads(head[8:8 + n])
    assert "model.net.1.weight" in header
    assert "minitorch.tree" in header["__metadata__"]
    same = [torch.load(p)["model"] for p in checkpoints.values()]
    for k in same[0]:
        assert all(torch.equal(s[k], same[0][k]) for s in same[1:]), k


def test_evaluate_predict_and_resume_read_every_format(checkpoints, tmp_path):
    digits = tmp_path / "digits.npy"
    np.save(digits, np.zeros((2, 28, 28), np.uint8))
    outputs = []
    for ext, path in checkpoints.items():
        res = invoke("evaluate", path, "--test-limit", "64")
        assert res.exit_code == 0, (ext, res.output)
        pred = invoke("predict", path, digits)
        assert pred.exit_code == 0, (ext, pred.output)
        outputs.append(pred.output.replace(str(path), "CKPT"))
    assert outputs[0] == outputs[1] == outputs[2]
    copy = tmp_path / "again.pt"
    copy.write_bytes(checkpoints["pt"].read_bytes())
    res = invoke("train", "mnist", "--model", "mlp", "--limit", "128", "--test-limit", "64",
                 "--epochs", "2", "--no-progress", "--checkpoint", copy, "--resume")
    assert res.exit_code == 0 and "resumed" in res.output, res.output


def test_pytorch_reads_the_pt_checkpoint(checkpoints):
    real = pytest.importorskip("torch")
    state = real.load(checkpoints["pt"], weights_only=True)
    assert state["kind"] == "minitorch-train-checkpoint"
    assert state["model"]["net.1.weight"].dtype == real.float32


def rewrite_member(path, out, member, data):
    z = zipfile.ZipFile(path)
    files = {n: z.read(n) for n in z.namelist()}
    files[member] = data
    with zipfile.ZipFile(out, "w") as zw:
        for n, b in files.items():
            zw.writestr(n, b)
    return out


@pytest.mark.parametrize("member,data,needle", [
    ("minitorch.json", b'{"format": "minitorch", "version": 1, "storages": [{"index": "x"}]}',
     "storage"),
    ("minitorch.json", b"[1, 2", "not valid JSON"),
    ("data.json", b'{"__dict__": 5}', "malformed object tree"),
    ("data.json", b'{"__dict__": [[{"__tensor__": 1}, 1]]}', "malformed tensor entry"),
])
def test_damaged_checkpoint_is_one_line(checkpoints, tmp_path, member, data, needle):
    bad = rewrite_member(checkpoints["mt"], tmp_path / "bad.mt", member, data)
    for command in (["evaluate", bad], ["predict", bad, "x.png"]):
        one_line_error(invoke(*command), str(bad), needle)


def test_hostile_pt_checkpoint_is_one_line(checkpoints, tmp_path):
    pickle = b"\x80\x02cos\nsystem\n(X\x04\x00\x00\x00truetR."
    bad = rewrite_member(checkpoints["pt"], tmp_path / "evil.pt", "archive/data.pkl", pickle)
    one_line_error(invoke("evaluate", bad), str(bad), "os.system")
    truncated = tmp_path / "cut.safetensors"
    truncated.write_bytes(checkpoints["safetensors"].read_bytes()[:5000])
    one_line_error(invoke("evaluate", truncated), str(truncated), "safetensors")


def png_chunk(kind, body):
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))


def png(ihdr, rows=b"\x00\x00"):
    return (b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", ihdr) +
            png_chunk(b"IDAT", zlib.compress(rows)) + png_chunk(b"IEND", b""))


def idx_gz():
    raw = struct.pack(">BBBBIII", 0, 0, 8, 3, 2, 28, 28) + np.random.default_rng(0).integers(
        0, 256, 2 * 784, dtype=np.uint8).tobytes()
    return gzip.compress(raw, mtime=0)


@pytest.mark.parametrize("name,data,needle", [
    ("bad-header.png", png(b"\x00\x00\x00\x01\x00"), "damaged PNG header"),
    ("empty.png", png(struct.pack(">IIBBBBB", 0, 0, 8, 0, 0, 0, 0), b""), "no pixels (0x0)"),
    ("cut-idx3-ubyte.gz", idx_gz()[:60], "truncated or corrupted"),
    ("bad.npy", b"\x93NUMPY\x01\x00\xff\xff{", "header of 65535 bytes"),
    ("lying-idx3-ubyte", struct.pack(">BBBBIII", 0, 0, 8, 3, 60000, 28, 28), "more than the file"),
])
def test_predict_damaged_inputs_are_one_line(checkpoints, tmp_path, name, data, needle):
    path = tmp_path / name
    path.write_bytes(data)
    one_line_error(invoke("predict", checkpoints["mt"], path), str(path), needle)


def test_bytes_io_checkpoint_file_object():
    buf = io.BytesIO()
    torch.save({"w": torch.ones(1)}, buf, format="torch")
    assert torch.load(io.BytesIO(buf.getvalue()))["w"].tolist() == [1.0]
