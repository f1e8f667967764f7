# The upstream example, unchanged except for the import line.
import numpy as np
import zarrpp as zarr
store = zarr.storage.MemoryStore()   # also support zarr.storage.LocalStore(path)
z = zarr.create_array(store, shape=(6, 4), chunks=(4, 4), dtype="int32")
z[:] = 1
z.prepend(np.full((3, 4), 2, dtype="int32"))
print(z.shape)   # (9, 4)
print(z.domain)  # ((-3, 6), (0, 4))
