"""README.md's layout table names every module of the analysis package in the row of its
room (the folder it lives in), so the table and the tree cannot drift apart."""

import fnmatch
import re

from conftest import REPO


def layout_rows(readme: str) -> dict[str, str]:
    """folder -> its row's text, from the table under "## Layout"."""
    table = readme.split("## Layout", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in table.splitlines():
        found = re.match(r"^\| `([^`]+)` \| (.*) \|$", line)
        if found:
            rows[found.group(1)] = found.group(2)
    return rows


def test_every_module_is_named_in_its_rooms_row():
    rows = layout_rows((REPO / "README.md").read_text())
    package = REPO / "analysis" / "kvlab"
    rooms = sorted(p for p in package.iterdir() if (p / "__init__.py").exists())
    assert [r.name for r in rooms] == ["measures", "rendering", "running", "schema", "tracking"]
    for room in rooms:
        row = rows[f"analysis/kvlab/{room.name}/"]
        for module in sorted(room.glob("*.py")):
            if module.name == "__init__.py":
                continue
            named = re.findall(r"`([^`]+\.py)`", row)  # names or patterns (`report_*.py`)
            assert any(fnmatch.fnmatch(module.name, n) for n in named), f"README's layout row for {room.name}/ does not name {module.name}"


def test_the_rows_are_read_from_the_table():
    text = "## Layout\n\n| folder | what |\n|---|---|\n| `a/` | x `m.py` |\n\n## Next\n| `b/` | y |\n"
    assert layout_rows(text) == {"a/": "x `m.py`"}
