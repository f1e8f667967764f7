"""zarr-python's exception classes (``zarr.errors``), raised where zarr-python raises them.

Each is a subclass of the built-in exception users already catch: every one is a ``ValueError``
(as zarr-python's ``BaseZarrError``), and the "not found" ones are also ``FileNotFoundError`` (what
zarrpp raised for a missing node before these existed), so existing ``except`` clauses keep working.
"""
from __future__ import annotations

__all__ = ["BaseZarrError", "NodeNotFoundError", "ArrayNotFoundError", "GroupNotFoundError", "ContainsArrayError",
           "ContainsGroupError", "ContainsArrayAndGroupError", "MetadataValidationError", "NodeTypeValidationError",
           "UnknownCodecError", "DataTypeValidationError", "ChunkNotFoundError", "VindexInvalidSelectionError",
           "NegativeStepError", "BoundsCheckError", "ArrayIndexError", "ZarrFutureWarning",
           "UnstableSpecificationWarning", "ZarrDeprecationWarning", "ZarrUserWarning", "ZarrRuntimeWarning"]


class BaseZarrError(ValueError):
    """The base of zarrpp's (and zarr-python's) Zarr errors."""


class NodeNotFoundError(BaseZarrError, FileNotFoundError):
    """No array or group at the path."""


class ArrayNotFoundError(NodeNotFoundError):
    """No array at the path."""


class GroupNotFoundError(NodeNotFoundError):
    """No group at the path."""


class ContainsArrayError(BaseZarrError):
    """An array is already at the path."""


class ContainsGroupError(BaseZarrError):
    """A group is already at the path."""


class ContainsArrayAndGroupError(BaseZarrError):
    """Both array and group metadata are at the path."""


class MetadataValidationError(BaseZarrError):
    """Metadata that is not valid."""


class NodeTypeValidationError(MetadataValidationError):
    """A node of the other type (an array where a group was expected, or the reverse)."""


class UnknownCodecError(BaseZarrError):
    """A codec zarrpp does not know."""


class DataTypeValidationError(ValueError):
    """A data type that is not valid here."""


class ChunkNotFoundError(BaseZarrError):
    """A chunk that is not stored."""


class VindexInvalidSelectionError(IndexError):
    """A selection ``vindex`` does not take."""


class NegativeStepError(IndexError):
    """A slice with a negative step (Zarr selections step forwards)."""


class BoundsCheckError(IndexError):
    """An index outside the array."""


class ArrayIndexError(IndexError):
    """An index array that cannot select from this array."""


class ZarrFutureWarning(FutureWarning):
    """Behaviour that will change."""


class UnstableSpecificationWarning(ZarrFutureWarning):
    """Data written with a specification that may still change (zarr-python warns for some v3 types)."""


class ZarrDeprecationWarning(DeprecationWarning):
    """A deprecated argument or function (it still works)."""


class ZarrUserWarning(UserWarning):
    """Something the user likely did not mean."""


class ZarrRuntimeWarning(RuntimeWarning):
    """A problem found while running."""


class FormatMismatchError(ValueError):
    """An existing node opened with a ``zarr_format`` it is not in."""


class UnreadableMemberWarning(UserWarning):
    """A group member zarrpp cannot open was left out of a listing."""


class ZarrppWarning(UserWarning):
    """What zarrpp's core warns of: a change was made but something it keeps in step could not be
    (consolidated metadata that could not be refreshed, groups above a remote store's root that
    were not checked). The message names the document and how to refresh it."""
