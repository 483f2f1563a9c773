"""The checker of kvlab's TOML files: one table at a time, every key typed, checked and
consumed, so an unknown key or a bad value raises ExperimentError naming the file, the key
and what is allowed. running/experiment.py reads [experiment], [[server]], [[sweep]] and
[[compare]] with it, running/hosts.py [[host]] and [placement].

A check is a function of the value that returns None when the value is good, else what is
wrong with it ("must be > 0"); the message becomes "FILE: KEY: VALUE PROBLEM".
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Callable, NoReturn

AUTO = "auto"
NAME_PATTERN = re.compile(r"^[A-Za-z0-9_.-]+$")

Check = Callable[[Any], "str | None"]


class ExperimentError(Exception):
    """A file that is not a valid experiment; the message names file, key and what is allowed."""


_KIND_NAMES = {int: "an integer", float: "a number", str: "a string", bool: "true or false",
               dict: "a table"}


class Checker:
    """Reads one table of the file, remembering which keys were consumed."""

    def __init__(self, path: Path, where: str, table: Any) -> None:
        self.path = path
        self.where = where
        if not isinstance(table, dict):
            self.fail(where, f"must be a table, not {type(table).__name__}")
        self.table = table
        self.seen: set[str] = set()

    def fail(self, key: str, what: str) -> NoReturn:
        raise ExperimentError(f"{self.path}: {key}: {what}")

    def key(self, name: str) -> str:
        return f"{self.where}.{name}" if self.where else name

    def get(self, name: str, kind: type | tuple, default: Any = None, required: bool = False,
            allowed: tuple | None = None, check: Check | None = None) -> Any:
        """The value of key `name` (of `kind`, among `allowed`, passing `check`), or
        `default` when absent; raises ExperimentError naming the key otherwise."""
        self.seen.add(name)
        if name not in self.table:
            if required:
                self.fail(self.key(name), "is required")
            return default
        return self._value(self.key(name), self.table[name], kind, allowed, check)

    def get_list(self, name: str, kind: type | tuple, default: tuple,
                 allowed: tuple | None = None, check: Check | None = None) -> tuple:
        """A variable that takes one value or a non-empty list of distinct values."""
        self.seen.add(name)
        if name not in self.table:
            return default
        raw = self.table[name]
        items = raw if isinstance(raw, list) else [raw]
        if not items:
            self.fail(self.key(name), "must not be an empty list")
        values = tuple(self._value(f"{self.key(name)}", item, kind, allowed, check)
                       for item in items)
        if len(set(values)) != len(values):
            self.fail(self.key(name), f"lists a value twice: {list(values)}")
        return values

    def _value(self, key: str, value: Any, kind: type | tuple, allowed: tuple | None,
               check: Check | None) -> Any:
        kinds = kind if isinstance(kind, tuple) else (kind,)
        # TOML booleans are ints in Python; never accept one for a number.
        if isinstance(value, bool) and bool not in kinds or not isinstance(value, kinds):
            names = " or ".join(_KIND_NAMES[k] for k in kinds)
            self.fail(key, f"must be {names}, not {value!r}")
        if allowed is not None and value not in allowed:
            self.fail(key, f"{value!r} is not allowed; allowed: {', '.join(map(str, allowed))}")
        if check is not None:
            problem = check(value)
            if problem:
                self.fail(key, f"{value!r} {problem}")
        return value

    def finish(self) -> None:
        """Refuses any key of the table that no get() asked for."""
        unknown = sorted(set(self.table) - self.seen)
        if unknown:
            self.fail(self.key(unknown[0]),
                      f"unknown key; allowed here: {', '.join(sorted(self.seen))}")




def at_least_two(value: Any) -> str | None:
    return None if value >= 2 else "must be at least 2 (an interval needs two rounds)"


def positive(value: Any) -> str | None:
    return None if value > 0 else "must be > 0"


def non_negative(value: Any) -> str | None:
    return None if value >= 0 else "must be >= 0"


def valid_name(value: str) -> str | None:
    return None if NAME_PATTERN.match(value) else "must use only letters, digits, '-', '_', '.'"


def positive_or_auto(value: Any) -> str | None:
    if value == AUTO:
        return None
    if isinstance(value, str):
        return "is not allowed; allowed: a positive integer or \"auto\""
    return positive(value)
