"""Open families of classes by name (samplers, inner samplers, cost models), as operators are:
vtatune's own are named in code or in pyproject.toml's entry points, others are an installed
entry point of the family's group, or ``register`` at run time. Names are listed without
importing any member; a member's module is imported when it is first made."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from vtatune.errors import UserError
from vtatune.escaping import shown


class Family:
    """The family of ``what``s (the word messages use): name -> ``"module:Class"``, from
    ``own``, then the entry points of ``group`` (read once), then ``register``. ``base``
    returns the class every member must subclass (imported only when one is made)."""

    def __init__(self, what: str, group: str, base: Callable[[], type],
                 own: dict[str, str] | None = None):
        self.what, self.group, self.base = what, group, base
        self.registry: dict[str, str] = dict(own or {})
        self.discovered = False

    def names(self) -> tuple[str, ...]:
        if not self.discovered:
            from importlib.metadata import entry_points

            self.discovered = True
            for ep in entry_points(group=self.group):
                self.registry.setdefault(ep.name, ep.value)
        return tuple(self.registry)

    def register(self, name: str, module: str, cls: str) -> None:
        """Make ``module.cls`` the member called ``name`` (``ValueError`` if the name is
        taken by another)."""
        self.names()
        target = f"{module}:{cls}"
        if self.registry.get(name, target) != target:
            raise ValueError(f"{self.what} {name!r} is already registered as "
                             f"{self.registry[name]}")
        self.registry[name] = target

    def get(self, name: str) -> Any:
        """The class called ``name`` (``UserError`` naming the known ones)."""
        import importlib

        if name not in self.names():
            raise UserError(f"unknown {self.what} {shown(name)} (known: "
                            f"{', '.join(self.names())})")
        module, _, attr = self.registry[name].partition(":")
        cls, base = getattr(importlib.import_module(module), attr), self.base()
        if not (isinstance(cls, type) and issubclass(cls, base)):
            raise TypeError(f"{self.what} {name!r} ({self.registry[name]}) is not a "
                            f"{base.__name__} subclass")
        return cls
