# Writes the input files of the corpus runs that read tensors from files
# (in--NAME, copied as NAME into each run's working directory). Run by
# scripts/make-model-corpus with the peer's python (it has numpy).
import numpy as np

np.save("in--ints.npy", np.array([1, 2, 3, 4], dtype=np.int32))
with open("in--two.npy", "wb") as f:
    np.save(f, np.arange(6, dtype=np.float32).reshape(2, 3))
    np.save(f, np.full((2, 3), 0.5, dtype=np.float32))
np.arange(6, dtype=np.float32).tofile("in--raw.bin")
