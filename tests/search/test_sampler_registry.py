"""The sampler family is open: vtatune's samplers come from the ``vtatune.samplers`` entry-point
group of the installed distribution, others register at run time, and an unknown name is one
user error naming the known ones."""

from __future__ import annotations

import sys
from importlib.metadata import distribution

import pytest

from vtatune.errors import UserError
from vtatune.search import samplers
from vtatune.search.samplers import Sampler


def test_the_shipped_samplers_are_entry_points_of_the_distribution() -> None:
    eps = {ep.name: ep.value for ep in distribution("vtatune").entry_points
           if ep.group == samplers.ENTRY_POINT_GROUP}
    assert set(eps) == {"tpe", "nsga2", "gp", "random", "grid", "xgb"}
    assert set(eps) <= set(samplers.names())
    for name in eps:
        cls = samplers._class(name)
        assert issubclass(cls, Sampler) and cls.name == name


def test_listing_the_names_imports_no_sampler_library() -> None:
    import subprocess

    code = ("import sys; from vtatune.search import samplers; samplers.names(); "
            "samplers.described(); "
            "print(sorted(m for m in ('optuna', 'xgboost', 'tvm', 'vtatune.search.space') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"


def test_warm_starts_follow_the_class_not_a_list() -> None:
    assert samplers._class("xgb").warm_starts
    for name in ("tpe", "nsga2", "random", "grid"):
        assert not samplers._class(name).warm_starts


class _First(Sampler):
    """Proposes the first value of every parameter (a plug-in stand-in for the test)."""

    name = "first"

    def ask(self, n: int) -> list[dict]:
        return [{k: v[0] for k, (_, v) in self.space.param_space().items()}][:n]

    def tell(self, params: dict, obs: samplers.Observation) -> None:
        pass


def test_a_registered_sampler_is_made_by_name_and_listed() -> None:
    from vtatune.search import space as spaces

    samplers.register("first", __name__, "_First")
    try:
        assert "first" in samplers.names()
        assert samplers.described().endswith("first")
        sp = spaces.load("dense", shape="16,256,256")
        s = samplers.make("first", sp, 1, seed=0)
        assert isinstance(s, _First) and len(s.ask(3)) == 1
        samplers.register("first", __name__, "_First")  # the same again: fine
        with pytest.raises(ValueError, match="already registered"):
            samplers.register("first", __name__, "Sampler")
        with pytest.raises(ValueError, match="already registered"):
            samplers.register("xgb", __name__, "_First")
    finally:
        samplers.SAMPLERS.registry.pop("first", None)


def test_unknown_and_non_sampler_names() -> None:
    with pytest.raises(UserError, match=r"unknown sampler 'anneal' \(known: .*xgb"):
        samplers.make("anneal", None, 1)  # type: ignore[arg-type]
    samplers.register("not-one", "vtatune.errors", "UserError")
    try:
        with pytest.raises(TypeError, match="not a Sampler subclass"):
            samplers.require("not-one")
    finally:
        samplers.SAMPLERS.registry.pop("not-one", None)


def test_an_install_without_the_entry_points_says_to_reinstall(monkeypatch) -> None:
    monkeypatch.setattr(samplers.SAMPLERS, "registry", {})
    monkeypatch.setattr(samplers.SAMPLERS, "discovered", True)
    with pytest.raises(UserError, match=r"no samplers are registered .*reinstall"):
        samplers.require("xgb")
    assert "reinstall" in samplers.described()
