# Writes the sparse archive of the run params@past_4gib to the path given
# (scripts/make-model-corpus calls it in the run's directory; the archive
# is 4 GiB and is never committed). tests/all/models.rs writes the same
# bytes (past_4gib_archive). It is in--wbc.irpa with two changes:
# the storage segment's length (header bytes 80..88) becomes 2^32 + 256,
# and the entry `w` (the first entry, at byte 96) moves to storage offset
# 2^32 + 64 (entry bytes 60..68), where w = [3, -1, 0.5, 8] (4 x f32) is
# written; the file ends with the storage segment. Only the first 4 KiB
# and those 16 bytes are written: the file is sparse.
import struct
import sys

with open("in--wbc.irpa", "rb") as f:
    head = bytearray(f.read())
storage = struct.unpack_from("<Q", head, 72)[0]
struct.pack_into("<Q", head, 80, (1 << 32) + 256)
struct.pack_into("<Q", head, 96 + 60, (1 << 32) + 64)
with open(sys.argv[1], "wb") as f:
    f.write(head)
    f.truncate(storage + (1 << 32) + 256)
    f.seek(storage + (1 << 32) + 64)
    f.write(struct.pack("<4f", 3, -1, 0.5, 8))
