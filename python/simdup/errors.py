"""The exception simdup raises for a bad setting, with the setting as data.

Its message may be reworded from one version to the next; ``parameter``, ``value``,
``allowed`` and ``needs`` are what programs (and simdup.dask's command line, which names its
flags from them) read instead.
"""

from __future__ import annotations


class ParameterError(ValueError):
    """A setting is out of range, unknown, or needs another one.

    ``parameter`` is the setting's name as simdup's options name it ("k", "min_features",
    "verify.threshold", "clustering"), ``value`` the rejected value as text (may be empty),
    ``allowed`` what is accepted ("0..32"; empty when only the combination is wrong),
    ``reason`` what is wrong, worded to follow the name ("must be in 0..32, got 40"), and
    ``needs`` the setting this value needs and lacks ("verify"; empty otherwise).
    """

    def __init__(self, message: str, *, parameter: str, value: str = "", allowed: str = "",
                 reason: str = "", needs: str = "") -> None:
        super().__init__(message)
        self.parameter = parameter
        self.value = value
        self.allowed = allowed
        self.reason = reason
        self.needs = needs

    @classmethod
    def of(cls, parameter: str, reason: str, *, value: str = "", allowed: str = "",
           needs: str = "") -> "ParameterError":
        """The error whose message is the name followed by the reason (and what it needs)."""
        message = parameter + ("" if reason.startswith(":") else " ") + reason
        if needs:
            message += " " + needs
        return cls(message, parameter=parameter, value=value, allowed=allowed, reason=reason,
                   needs=needs)
