"""Every relative link in the documentation resolves (rules.doc_links).

The documents are README.md, CONTRIBUTING.md, docs/*.md and results/README.md.
A link to a file or folder must name one that exists (relative to the
document); a `#anchor` into a markdown file (or into the document itself) must
name one of its headings, as GitHub slugs them. Links to other sites
(`https:`, `mailto:`, ...) are not followed, and neither are links inside code
blocks or code spans. The known-answer tests plant broken links in a
throwaway tree and require the checker to report each of them.
"""

import re
import sys
from pathlib import Path
from urllib.parse import unquote

REPO = Path(__file__).resolve().parents[2]

FENCE = re.compile(r"^\s*(```|~~~)")
CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")
# [text](target) and ![alt](target); the target ends at whitespace or ')'
# (an optional "title" after whitespace is ignored).
INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE_DEFINITION = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


def documents(root: Path) -> list[Path]:
    """The documents whose links must resolve, those that exist under root."""
    found = [root / "README.md", root / "CONTRIBUTING.md", root / "results" / "README.md"]
    found += sorted((root / "docs").glob("*.md"))
    return [p for p in found if p.is_file()]


def prose_lines(text: str, blank_code_spans: bool = True):
    """(line number, line) outside fenced code blocks; code spans blanked
    unless blank_code_spans is False (a heading's `code` is part of its anchor)."""
    fenced = None
    for number, line in enumerate(text.splitlines(), start=1):
        fence = FENCE.match(line)
        if fence:
            if fenced is None:
                fenced = fence.group(1)
            elif fence.group(1) == fenced:
                fenced = None
            continue
        if fenced is None:
            yield number, CODE_SPAN.sub(lambda m: " " * len(m.group(0)), line) if blank_code_spans else line


def slug(heading: str) -> str:
    """GitHub's anchor for a heading's text: markup dropped, lower case,
    punctuation other than '-' and '_' removed, spaces turned into '-'."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # links keep their text
    text = re.sub(r"<[^>]+>", "", text)  # inline HTML
    text = text.replace("`", "").lower()
    text = "".join(c for c in text if c.isalnum() or c in " -_")
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every heading anchor of a markdown file, with GitHub's -1, -2 suffixes
    for repeated headings."""
    seen: dict[str, int] = {}
    result = set()
    for _, line in prose_lines(path.read_text(encoding="utf-8"), blank_code_spans=False):
        found = HEADING.match(line)
        if not found:
            continue
        base = slug(found.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        result.add(base if count == 0 else f"{base}-{count}")
    return result


def links(text: str):
    """(line number, target) of every inline link, image and reference definition."""
    for number, line in prose_lines(text):
        definition = REFERENCE_DEFINITION.match(line)
        if definition:
            yield number, definition.group(1)
            continue
        for found in INLINE_LINK.finditer(line):
            yield number, found.group(1)


def broken_links(root: Path, docs: list[Path] | None = None) -> list[str]:
    """'file:line: target (why)' for every relative link that does not resolve."""
    problems = []
    anchor_cache: dict[Path, set[str]] = {}
    for doc in documents(root) if docs is None else docs:
        for number, target in links(doc.read_text(encoding="utf-8")):
            if not target or SCHEME.match(target):
                continue
            path_part, _, anchor = target.partition("#")
            path_part = unquote(path_part)
            if path_part.startswith("/"):
                resolved = root / path_part.lstrip("/")
            elif path_part:
                resolved = doc.parent / path_part
            else:
                resolved = doc
            where = f"{doc.relative_to(root)}:{number}: {target}"
            if not resolved.exists():
                problems.append(f"{where} (no such file or folder)")
                continue
            if anchor and resolved.is_file() and resolved.suffix == ".md":
                resolved = resolved.resolve()
                if resolved not in anchor_cache:
                    anchor_cache[resolved] = anchors(resolved)
                if unquote(anchor).lower() not in anchor_cache[resolved]:
                    problems.append(f"{where} (no heading with anchor #{anchor})")
    return problems


# --- the repository ---------------------------------------------------------

def test_every_relative_link_in_the_documentation_resolves():
    checked = documents(REPO)
    assert REPO / "README.md" in checked and (REPO / "docs").is_dir()
    assert len(checked) >= 4, checked
    problems = broken_links(REPO)
    assert not problems, "broken links:\n" + "\n".join(problems)


# --- known answers ----------------------------------------------------------

def plant(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def test_a_planted_missing_file_is_reported(tmp_path):
    root = plant(tmp_path, {
        "README.md": "# Top\n\nSee [the guide](docs/guide.md) and [gone](docs/gone.md).\n",
        "docs/guide.md": "# Guide\n",
    })
    assert broken_links(root) == ["README.md:3: docs/gone.md (no such file or folder)"]


def test_a_planted_missing_anchor_is_reported(tmp_path):
    root = plant(tmp_path, {
        "README.md": "# Top\n\n[ok](docs/guide.md#running-it) [bad](docs/guide.md#walking-it)\n"
                     "[self](#top) [self bad](#bottom)\n",
        "docs/guide.md": "# Guide\n\n## Running it\n",
    })
    assert broken_links(root) == [
        "README.md:3: docs/guide.md#walking-it (no heading with anchor #walking-it)",
        "README.md:4: #bottom (no heading with anchor #bottom)",
    ]


def test_links_in_docs_and_results_are_relative_to_their_own_folder(tmp_path):
    root = plant(tmp_path, {
        "README.md": "# Top\n",
        "CONTRIBUTING.md": "[up](README.md)\n",
        "docs/a.md": "[ok](../README.md) [bad](README.md) ![plot](../results/run/p.png)\n",
        "results/README.md": "[ok](run/) [bad](results/run/)\n",
        "results/run/p.png": "",
    })
    assert broken_links(root) == [
        "results/README.md:1: results/run/ (no such file or folder)",
        "docs/a.md:1: README.md (no such file or folder)",
    ]


def test_code_and_other_sites_are_not_links(tmp_path):
    root = plant(tmp_path, {
        "README.md": "# Top\n\n`[x](missing.md)` [site](https://example.com/x.md) "
                     "[mail](mailto:a@b.c)\n\n```sh\necho [x](missing.md)\n```\n"
                     "[ref]: missing-too.md\n",
    })
    assert broken_links(root) == ["README.md:8: missing-too.md (no such file or folder)"]


def test_github_heading_anchors():
    assert slug("Thread-per-core: `owner`, shard ports and a Redis Cluster row") == \
        "thread-per-core-owner-shard-ports-and-a-redis-cluster-row"
    assert slug("Alternation (how declared comparisons are measured by default)") == \
        "alternation-how-declared-comparisons-are-measured-by-default"
    assert slug("kvlab-server") == "kvlab-server"
    assert slug("What `make test` runs, and CI") == "what-make-test-runs-and-ci"
    assert slug("A/A calibration") == "aa-calibration"
    assert slug("See [docs](x.md) here") == "see-docs-here"


def test_repeated_headings_get_numbered_anchors(tmp_path):
    root = plant(tmp_path, {"README.md": "# Top\n## Run\n## Run\n```\n## Not a heading\n```\n"})
    assert anchors(root / "README.md") == {"top", "run", "run-1"}


if __name__ == "__main__":
    found = broken_links(REPO)
    print("\n".join(found) if found else "every relative link resolves")
    sys.exit(1 if found else 0)
