from __future__ import annotations

import inspect

import aimem


def test_exported_members_are_exactly_the_public_api() -> None:
    assert aimem.__all__ == sorted(aimem.__all__)
    exported = {
        name
        for name, value in vars(aimem).items()
        if not name.startswith("_") and not inspect.ismodule(value)
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
