# Writes the input files of the corpus runs that read tensors from files
# (in--NAME, copied as NAME into each run's working directory). Run by
# scripts/make-model-corpus with the peer's python (it has numpy).
import numpy as np

np.save("in--ints.npy", np.array([1, 2, 3, 4], dtype=np.int32))
with open("in--two.npy", "wb") as f:
    np.save(f, np.arange(6, dtype=np.float32).reshape(2, 3))
    np.save(f, np.full((2, 3), 0.5, dtype=np.float32))
np.arange(6, dtype=np.float32).tofile("in--raw.bin")
# Two 2x3xf32 tensors one after the other: `=+FILE` reads on where the
# last `=@FILE`/`=+FILE` of that file stopped.
np.arange(12, dtype=np.float32).tofile("in--raw12.bin")
# iree-run-module reads a raw file's first bytes (a longer file is fine, a
# shorter one is OUT_OF_RANGE).
np.arange(8, dtype=np.float32).tofile("in--long.bin")
np.arange(5, dtype=np.float32).tofile("in--short.bin")
# A header naming 'descr' twice: the last one counts, as in NumPy itself.
header = b"{'descr': '<i4', 'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"
header += b" " * (64 - 10 - len(header) - 1) + b"\n"
with open("in--dupdescr.npy", "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header)
    f.write(np.arange(6, dtype=np.float32).tobytes())
# A NumPy file without the .npy extension is refused by its name.
np.save("in--array.data.npy", np.arange(6, dtype=np.float32).reshape(2, 3))

# Parameter archives for params.mlir, params_global.mlir and
# params_keys.mlir (the runs name them with --parameters lines). Each
# holds 4 x f32 entries; safetensors and GGUF files are written here, the
# .irpa files by the reference's iree-convert-parameters and
# iree-create-parameters.
import json
import os
import struct
import subprocess

peer = os.environ["IREE_PEER_BIN"]


def f32(*values):
    return np.array(values, dtype=np.float32)


def safetensors(path, tensors, shapes=None):
    """tensors: name -> array; shapes: name -> the shape to claim, where
    it is not the array's."""
    header, data = {}, b""
    for name, a in tensors.items():
        raw = a.tobytes()
        shape = (shapes or {}).get(name, list(a.shape))
        offsets = [len(data), len(data) + len(raw)]
        header[name] = {"dtype": "F32", "shape": shape, "data_offsets": offsets}
        data += raw
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + data)


def gguf(path, tensors):
    """A GGUF version 3 file, 32-byte aligned. tensors: name -> an array
    (f32 or f16: ggml types 0 and 1) or (ggml type, elements, bytes)."""

    def string(s):
        return struct.pack("<Q", len(s)) + s.encode()

    out = b"GGUF" + struct.pack("<IQQ", 3, len(tensors), 1)
    out += string("general.name") + struct.pack("<I", 8) + string("params")
    data = b""
    for name, t in tensors.items():
        if isinstance(t, tuple):
            kind, dims, raw = t[0], [t[1]], t[2]
        else:
            kind, dims, raw = {"float32": 0, "float16": 1}[str(t.dtype)], t.shape, t.tobytes()
        out += string(name) + struct.pack("<I", len(dims))
        out += b"".join(struct.pack("<Q", d) for d in reversed(dims))
        out += struct.pack("<IQ", kind, len(data))
        data += raw + b"\0" * (-len(raw) % 32)
    out += b"\0" * (-len(out) % 32) + data
    with open(path, "wb") as f:
        f.write(out)


def convert(source, target):
    subprocess.run(
        [os.path.join(peer, "iree-convert-parameters"), f"--parameters={source}",
         f"--output={target}", "--quiet"],
        check=True,
    )


wbc = {"w": f32(1.5, 2.5, -3, 4), "b": f32(0.25, 0.5, 0.75, 1), "c": f32(100, 200, 300, 400)}
safetensors("in--wbc.safetensors", wbc)
convert("in--wbc.safetensors", "in--wbc.irpa")
# Beside w, b and c, tensors of two more types IREE 3.13 reads (f16, and
# one 34-byte block of q8_0, ggml type 8); no program reads them.
gguf("in--wbc.gguf", {**wbc, "h": np.arange(8, dtype=np.float16), "q": (8, 32, bytes(range(34)))})
subprocess.run(
    [os.path.join(peer, "iree-create-parameters"), "--output=in--splats.irpa", "--quiet",
     "--splat=w=4xf32=2", "--splat=b=4xf32=0.5", "--splat=c=4xf32=-1"],
    check=True,
)
# Only w: with splats.irpa in one scope, whichever comes first gives w.
safetensors("in--w_only.safetensors", {"w": f32(-1, 0, 1, 2)})
# w shorter (2 floats) and longer (8 floats) than the 4 the program reads.
safetensors("short.safetensors", {"w": f32(1, 2), "b": wbc["b"]})
convert("short.safetensors", "in--short.irpa")
os.remove("short.safetensors")
safetensors("in--long.safetensors", {"w": np.arange(1, 9, dtype=np.float32), "b": wbc["b"]})
# A header giving 20 bytes (5 floats) to a 4 x f32 tensor (16 bytes).
safetensors("in--size_mismatch.safetensors", {"w": f32(1, 2, 3, 4, 5), "b": wbc["b"]},
            shapes={"w": [4]})
with open("in--wbc.irpa", "rb") as f:
    irpa = f.read()
with open("in--bad_magic.irpa", "wb") as f:
    f.write(b"ARPI" + irpa[4:])
# The storage segment cut short: the file ends inside the entries' data.
with open("in--truncated.irpa", "wb") as f:
    f.write(irpa[: irpa.index(wbc["c"].tobytes()) + 8])
# params_keys: k0, k1, k2 = [0 1 2 3] + 10 * i.
safetensors("k.safetensors", {f"k{i}": np.arange(4, dtype=np.float32) + 10 * i for i in range(3)})
convert("k.safetensors", "in--k.irpa")
os.remove("k.safetensors")
