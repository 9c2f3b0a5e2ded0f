"""What a study minimizes: its objective (``--objective``, ``[objective] kind``) named by the
quantities it scores, in order. Shared by operator and network studies (a leaf module).

=======================  ==================================  ============================
objective                values (all minimized)              a front?
=======================  ==================================  ============================
``latency``              latency                             no (the fastest)
``area-latency``         area mm², latency                   yes
``area-energy``          area mm², energy J                  yes
``latency-energy``       latency, energy J                   yes
``edp``                  energy J x latency                  no (the least product)
``area-latency-energy``  area mm², latency, energy J         yes (three objectives)
=======================  ==================================  ============================

*latency* is the study's measure: seconds per call end to end (or accelerator cycles for an
operator study's ``latency = "accelerator"``; an ``edp`` is then J x cycles); for a network,
seconds per inference. *energy* is the **accelerator's** energy per call (per inference for a
network; ``vtatune.energy``): what the design's knobs change. The board's energy adds the
processor and board's baseline power times the time, so it tracks latency and is shown, never
optimized.
"""

from __future__ import annotations

#: Every objective and the quantities it scores, in the order of its values.
TERMS: dict[str, tuple[str, ...]] = {
    "area-latency": ("area", "latency"),
    "latency": ("latency",),
    "area-energy": ("area", "energy"),
    "latency-energy": ("latency", "energy"),
    "edp": ("edp",),
    "area-latency-energy": ("area", "latency", "energy"),
}
OBJECTIVES = tuple(TERMS)


def terms(objective: str) -> tuple[str, ...]:
    """The quantities ``objective`` scores (``("latency",)`` for an unknown name: studies
    stored by an older vtatune have only the known ones)."""
    return TERMS.get(objective, ("latency",))


def count(objective: str) -> int:
    """How many values the objective has (the samplers' ``n_objectives``)."""
    return len(terms(objective))


def is_front(objective: str) -> bool:
    """Whether the study's result is a Pareto front (several objectives)."""
    return count(objective) > 1


def uses_energy(objective: str) -> bool:
    """Whether the objective needs every feasible result's energy."""
    return any(t in ("energy", "edp") for t in terms(objective))


def values(objective: str, area: float | None, latency: float | None,
           energy: float | None) -> tuple[float, ...] | None:
    """The objective's values of a feasible result (None when one it needs is missing, e.g.
    the energy of a result stored before energy was)."""
    got = {"area": area, "latency": latency, "energy": energy,
           "edp": None if latency is None or energy is None else latency * energy}
    out = []
    for t in terms(objective):
        v = got[t]
        if v is None:
            return None
        out.append(float(v))
    return tuple(out)


def label(term: str, latency: str = "end-to-end") -> str:
    """A column title for one of the objective's quantities."""
    lat = "cycles" if latency == "accelerator" else "seconds"
    return {"area": "area_mm2", "latency": lat, "energy": "accelerator_energy_j",
            "edp": f"edp_j_{'cycles' if latency == 'accelerator' else 's'}"}[term]
