"""zarrpp: Zarr v3 (and v2) arrays from Python, backed by the zarrpp C++ library.

The API follows zarr-python's:

>>> import numpy as np
>>> import zarrpp as zarr
>>> store = zarr.storage.MemoryStore()          # or zarr.storage.LocalStore("data.zarr")
>>> z = zarr.create_array(store, shape=(6, 4), chunks=(4, 4), dtype="int32")
>>> z[:] = 1
>>> z.prepend(np.full((3, 4), 2, dtype="int32"))
(9, 4)
>>> z.shape, z.domain
((9, 4), ((-3, 6), (0, 4)))

Errors from the C++ core arrive as IndexError (out-of-bounds selections), ValueError (invalid
selections, metadata, codecs), TypeError (data of the wrong type), FileNotFoundError (missing
nodes; KeyError for group members) and RuntimeError (everything else), with zarrpp's message.
"""
from . import codecs, errors, storage
from ._config import config
from ._api import (consolidate_metadata, create, create_hierarchy, empty, empty_like, full, full_like, load, ones,
                   ones_like, open, open_array, open_consolidated, open_like, save, save_array, save_group, tree,
                   zeros, zeros_like)
from ._from_array import from_array
from ._array import Array
from ._config import ArrayConfig
from ._creation import array, create_array
from ._group import Group, create_group, open_group
from ._node import Attributes
from ._open import convert_to_v2, convert_to_v3, copy_array, group
from .errors import UnreadableMemberWarning, ZarrppWarning
from .storage import FileStore, LocalStore, MemoryStore

from ._zarrpp import __version__  # the version CMakeLists.txt's project() gives

__all__ = ["Array", "ArrayConfig", "Attributes", "Group", "UnreadableMemberWarning", "ZarrppWarning", "array", "codecs",
           "config", "consolidate_metadata", "create_hierarchy", "from_array", "open_consolidated", "tree",
           "convert_to_v2", "convert_to_v3", "copy_array", "create", "create_array", "create_group", "empty",
           "empty_like", "errors", "full", "full_like", "group", "load", "ones", "ones_like", "open", "open_array",
           "open_group", "open_like", "save", "save_array", "save_group", "storage", "zeros", "zeros_like",
           "FileStore", "LocalStore", "MemoryStore", "__version__"]
