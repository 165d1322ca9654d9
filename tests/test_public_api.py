from __future__ import annotations

import inspect

import aimem


def test_exported_members_are_exactly_the_public_api() -> None:
    assert aimem.__all__ == sorted(aimem.__all__)
    # dir(), not vars(): the names are imported on first use (aimem.__getattr__).
    exported = {
        name
        for name in dir(aimem)
        if not name.startswith("_") and not inspect.ismodule(getattr(aimem, name))
    }
    assert exported - {"annotations", "Any"} == set(aimem.__all__) - {"__version__"}


def test_error_tree() -> None:
    for error in (
        aimem.ValidationError,
        aimem.NotFoundError,
        aimem.JudgeError,
        aimem.StorageError,
        aimem.ConflictError,
    ):
        assert issubclass(error, aimem.AimemError)
    assert issubclass(aimem.ValidationError, ValueError)
    assert issubclass(aimem.EmbeddingError, aimem.AimemError)
    assert issubclass(aimem.EmbedderMismatchError, aimem.ValidationError)
    assert issubclass(aimem.EmbedderMismatchError, aimem.EmbeddingError)
    assert issubclass(aimem.NotFoundError, KeyError)
    assert str(aimem.NotFoundError("No memory x")) == "No memory x"
