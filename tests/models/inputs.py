# Writes the input files of the corpus runs that read tensors from files
# (in--NAME, copied as NAME into each run's working directory). Run by
# scripts/make-model-corpus with the peer's python (it has numpy).
import numpy as np

np.save("in--ints.npy", np.array([1, 2, 3, 4], dtype=np.int32))
with open("in--two.npy", "wb") as f:
    np.save(f, np.arange(6, dtype=np.float32).reshape(2, 3))
    np.save(f, np.full((2, 3), 0.5, dtype=np.float32))
np.arange(6, dtype=np.float32).tofile("in--raw.bin")
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
