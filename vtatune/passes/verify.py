"""What a verification pass reports: one ``Problem`` per resource or field that overflows."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    """``what`` needs ``needed`` ``unit`` but only ``available`` exist."""

    kind: str  # "sram", "uop", "field", "index", "user"
    what: str
    needed: int
    available: int
    unit: str
    message: str = ""  # a user verifier's own words

    def __str__(self) -> str:
        if self.message:
            return self.message
        if self.kind == "field":
            return (f"{self.what} reaches {self.needed:,}, its field holds at most "
                    f"{self.available:,}")
        if self.kind == "index":
            return (f"{self.what} reaches {self.needed:,}, the buffer has {self.available:,} "
                    f"{self.unit}")
        return f"{self.what} needs {self.needed:,} {self.unit}, {self.available:,} available"

    def as_dict(self) -> dict[str, object]:
        return {"kind": self.kind, "what": self.what, "needed": self.needed,
                "available": self.available, "unit": self.unit, "message": str(self)}
