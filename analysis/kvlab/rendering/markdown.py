"""Markdown in and out: the one way every report, comparison and section writes a table
(markdown_table), and the one way the dashboard shows a report (markdown_to_html,
Python-Markdown: Debian's python3-markdown)."""

from __future__ import annotations


def markdown_table(header: list[str], rows: list[list[str]]) -> str:
    """A pipe table; a `|` inside a cell is written as `/` so it cannot split the cell."""
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c).replace("|", "/") for c in row) + " |" for row in rows]
    return "\n".join(lines)


def markdown_to_html(text: str) -> str:
    """A report's markdown as HTML, its headings three levels down (the page's own
    headings sit above it): pipe tables, lists, code, emphasis."""
    import markdown  # only the dashboard needs it
    return markdown.markdown(text, extensions=["tables", "fenced_code", "toc"],
                             extension_configs={"toc": {"baselevel": 3}})
