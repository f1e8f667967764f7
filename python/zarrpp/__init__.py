"""zarrpp: Zarr v3 (and v2) arrays from Python, backed by the zarrpp C++ library.

The API follows zarr-python's::

    import numpy as np
    import zarrpp as zarr

    store = zarr.storage.MemoryStore()          # or zarr.storage.LocalStore("data.zarr")
    z = zarr.create_array(store, shape=(6, 4), chunks=(4, 4), dtype="int32")
    z[:] = 1
    z.prepend(np.full((3, 4), 2, dtype="int32"))
    z.shape, z.domain                           # (9, 4), ((-3, 6), (0, 4))

Errors from the C++ core arrive as IndexError (out-of-bounds selections), ValueError (invalid
selections, metadata, codecs), TypeError (data of the wrong type), FileNotFoundError (missing
nodes; KeyError for group members) and RuntimeError (everything else), with zarrpp's message.
"""
from . import codecs, storage
from ._array import (Array, Attributes, Group, UnreadableMemberWarning, array, convert_to_v3, create_array, create_group,
                     group, open, open_array, open_group)
from .storage import FileStore, LocalStore, MemoryStore

from ._zarrpp import __version__  # the version CMakeLists.txt's project() gives

__all__ = ["Array", "Attributes", "Group", "UnreadableMemberWarning", "array", "codecs", "convert_to_v3", "create_array",
           "create_group", "group", "open",
           "open_array", "open_group", "storage", "FileStore", "LocalStore", "MemoryStore", "__version__"]
